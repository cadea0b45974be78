// `topo submit`, `topo jobs` and `topo cancel` end to end on the local cluster, with accounting and
// without, with an experiment in a temporary folder that runs on cluster `local` (the file written by
// `scripts/local-cluster up`).
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTopo } from '../../support/cli.js';
import { cliSchemaErrors } from '../../support/cli-schemas.js';
import { type LocalClusterEnv, repoRoot } from '../../support/cluster.js';
import { accountingVariants } from '../../support/private-cluster.js';
import { experimentId } from './helpers.js';

const variants = accountingVariants();
const dir = mkdtempSync(join(tmpdir(), 'topo-cli-'));
const exp = experimentId('cli');
mkdirSync(join(dir, 'topologies', exp), { recursive: true });
cpSync(join(repoRoot, 'topologies/presets'), join(dir, 'topologies/presets'), { recursive: true });
writeFileSync(
  join(dir, 'topologies', exp, 'experiment.yaml'),
  `experiment_id: ${exp}
objective: minimize stabilized full-run seconds_per_rollout
cluster: local
base_topology: 1gpu
max_parallel: 3
fixed_inputs:
  deploy: twin-balanced
  driver: vavam
  slurm:
    partition: debug
    gpus_per_node: 1
`,
);
const candidate = join('topologies', exp, 'cli-cand.yaml');
writeFileSync(
  join(dir, candidate),
  'name: cli-cand\nparent: null\ntopology:\n  runtime:\n    nr_workers: 2\n',
);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

for (const variant of variants)
  describe(`topo submit / jobs / cancel on the local cluster, ${variant.label}`, () => {
    let env: LocalClusterEnv;
    let firstRun = '';
    const topo = (...args: string[]) =>
      runTopo(args, dir, {
        ...process.env,
        TOPO_CLUSTERS_FILE: env.clustersFile,
        TOPO_SSH_KEY_FILE: env.sshKeyPath,
        SLURM_CONF: env.slurmConf,
      });
    beforeAll(() => {
      env = variant.env();
    });
    afterAll(async () => {
      await topo('cancel', candidate, '--cluster', 'local');
    });

    it('a dry run shows the command and submits nothing', async () => {
      const r = await topo('submit', candidate, '--dry-run');
      expect(r.stderr).not.toMatch(/error/);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('### Dry run: would be submitted on cluster `local`');
      expect(r.stdout).toContain('--partition=debug');
      expect((await topo('jobs', exp)).stdout).toContain(`no jobs of ${exp} on cluster local`);
    });

    it('submits over SSH, finds the same job locally, lists and cancels it', async () => {
      const first = await topo('submit', candidate, '--cluster', 'local-ssh', '--json');
      expect(first.code).toBe(0);
      const submitted = JSON.parse(first.stdout);
      expect(submitted).toMatchObject({ schema_version: 1, status: 'submitted', cluster: 'local-ssh' });
      expect(cliSchemaErrors('submit', submitted)).toEqual([]);
      // Its own run name (a label per submission), and the request it made, printed.
      expect(submitted.job_name).toMatch(new RegExp(`^topo-${exp}-cli-cand-[0-9a-f]{8}-[0-9a-f]{8}$`));
      expect(submitted.request).toMatchObject({
        run_name: submitted.job_name,
        experiment: exp,
        candidate: 'cli-cand',
      });
      firstRun = submitted.job_name;
      const again = JSON.parse((await topo('submit', candidate, '--cluster', 'local', '--json')).stdout);
      expect(again).toMatchObject({
        status: 'existing',
        job_id: submitted.job_id,
        job_name: submitted.job_name,
      });
      expect(again.request).toBeUndefined();

      const listed = JSON.parse((await topo('jobs', exp, '--json')).stdout);
      expect(listed.jobs.map((j: { id: string }) => j.id)).toEqual([submitted.job_id]);
      expect(cliSchemaErrors('jobs', listed)).toEqual([]);
      const table = (await topo('jobs', exp)).stdout;
      expect(table).toMatch(/^JOB\s+CANDIDATE\s+RUN\s+STATE/);
      // the whole run name, as `topo analyze` and `topo record --run` take it (before: its tail)
      expect(table).toMatch(new RegExp(`\\s+cli-cand\\s+${submitted.job_name}\\s`));

      const cancelled = await topo('cancel', candidate, '--cluster', 'local-ssh');
      expect(cancelled.stdout).toContain(`Cancelled job \`${submitted.job_id}\``);
      const none = JSON.parse((await topo('cancel', candidate, '--cluster', 'local', '--json')).stdout);
      expect(cliSchemaErrors('cancel', none)).toEqual([]);
      // COMPLETING while the job's processes stop, then CANCELLED (bounded wait).
      let after = JSON.parse((await topo('jobs', exp, '--json')).stdout);
      for (let i = 0; i < 60 && after.jobs[0]?.state === 'COMPLETING'; i++) {
        await new Promise((r) => setTimeout(r, 500));
        after = JSON.parse((await topo('jobs', exp, '--json')).stdout);
      }
      expect(after.jobs[0]).toMatchObject({ state: 'CANCELLED', failure: { kind: 'cancelled' } });
    });

    it('a rerun gets a run name of its own, never the earlier run’s', async () => {
      const rerun = await topo('submit', candidate, '--cluster', 'local');
      expect(rerun.code).toBe(0);
      const name = /Run name `([^`]+)`/.exec(rerun.stdout)?.[1];
      expect(name).toMatch(new RegExp(`^topo-${exp}-cli-cand-[0-9a-f]{8}-[0-9a-f]{8}$`));
      expect(name).not.toBe(firstRun);
      expect(rerun.stdout).toContain('a CLI run has no pull request');
    });
  });
