// A `topo submit` interrupted between `sbatch --hold` and the release (issue 41), on the local cluster
// with accounting and without. A shim `sbatch` first on PATH runs the real one, then waits a few
// seconds before it answers: the job is held in Slurm while the CLI waits, and the test interrupts
// there. Killed (a lost terminal): the job stays held until the next `topo submit`, which releases it.
// Ctrl-C: the submit cancels the job it holds (it never ran), exits 130, and the run is stopped.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTopo } from '../../support/cli.js';
import { spawnTopo } from '../../support/cli-process.js';
import { type LocalClusterEnv, repoRoot } from '../../support/cluster.js';
import { accountingVariants } from '../../support/private-cluster.js';
import { callCount, slowCommand } from '../../support/slow-command.js';
import { experimentId } from '../slurm/helpers.js';
import { teamEnv } from './team.js';

const variants = accountingVariants();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A team folder with one experiment on the debug partition (one GPU) and its candidate. */
function teamFolder(exp: string): { dir: string; candidate: string } {
  const dir = mkdtempSync(join(tmpdir(), 'topo-submit-interrupt-'));
  mkdirSync(join(dir, 'topologies', exp), { recursive: true });
  cpSync(join(repoRoot, 'topologies/presets'), join(dir, 'topologies/presets'), { recursive: true });
  writeFileSync(
    join(dir, 'topologies', exp, 'experiment.yaml'),
    `experiment_id: ${exp}\nobjective: minimize stabilized full-run seconds_per_rollout\ncluster: local\nbase_topology: 1gpu\nmax_parallel: 3\nfixed_inputs:\n  deploy: twin-balanced\n  driver: vavam\n  slurm:\n    partition: debug\n    gpus_per_node: 1\n`,
  );
  const candidate = join('topologies', exp, 'held.yaml');
  writeFileSync(join(dir, candidate), 'name: held\nparent: null\ntopology:\n  runtime:\n    nr_workers: 2\n');
  return { dir, candidate };
}

for (const variant of variants)
  describe(`Ctrl-C during topo submit, ${variant.label}`, () => {
    let env: LocalClusterEnv;
    const cleanup: string[] = [];
    const environment = (extra: NodeJS.ProcessEnv = {}) => teamEnv(env, extra);
    /** Every job of the experiment as squeue prints it: id, state, reason. */
    const squeue = (exp: string) =>
      variant
        .command(['squeue', '--states=all', '--noheader', '--format=%i %T %r %j'])
        .split('\n')
        .filter((l) => l.includes(`topo-${exp}-`))
        .map((l) => l.trim().split(/\s+/).slice(0, 3));
    /** Runs `topo submit` with the slow sbatch and interrupts it with `signal` while Slurm holds its job. */
    async function interruptedSubmit(dir: string, candidate: string, signal: NodeJS.Signals) {
      const shim = slowCommand('sbatch', 8, { after: true });
      cleanup.push(shim.bin);
      let interrupted = false;
      const run = spawnTopo(['submit', candidate, '--cluster', 'local'], undefined, {
        cwd: dir,
        env: environment({ PATH: `${shim.bin}:${process.env.PATH}` }),
        started: (child) => {
          const poll = setInterval(() => {
            if (callCount(shim) === 0) return;
            clearInterval(poll);
            interrupted = child.kill(signal);
          }, 50);
          child.on('close', () => clearInterval(poll));
        },
      });
      const result = await run;
      expect(interrupted, result.stderr).toBe(true);
      return result;
    }
    beforeAll(() => {
      env = variant.env();
    });
    afterAll(() => {
      for (const d of cleanup) rmSync(d, { recursive: true, force: true });
    });

    it('killed between hold and release, the job stays held until the next topo submit releases it', async () => {
      const exp = experimentId('held');
      const { dir, candidate } = teamFolder(exp);
      cleanup.push(dir);
      const killed = await interruptedSubmit(dir, candidate, 'SIGKILL');
      expect(killed.signal).toBe('SIGKILL');
      const [held] = squeue(exp);
      expect(held).toEqual([expect.any(String), 'PENDING', 'JobHeldUser']);

      const again = await runTopo(['submit', candidate, '--cluster', 'local', '--json'], dir, environment());
      expect(again.code, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ status: 'existing', job_id: held?.[0] });
      expect(again.stderr).toContain(`released job ${held?.[0]}`);
      const after = squeue(exp);
      expect(after).toHaveLength(1);
      expect(after[0]?.[2]).not.toBe('JobHeldUser');

      await runTopo(['cancel', candidate, '--cluster', 'local'], dir, environment());
      const listed = JSON.parse((await runTopo(['jobs', exp, '--json'], dir, environment())).stdout);
      expect(listed.jobs).toHaveLength(1);
      expect(listed.jobs[0].reason).not.toBe('JobHeldUser');
    });

    it('Ctrl-C between hold and release cancels the held job, exits 130, and the run is stopped, not failed', async () => {
      const exp = experimentId('ctrlc');
      const { dir, candidate } = teamFolder(exp);
      cleanup.push(dir);
      const stopped = await interruptedSubmit(dir, candidate, 'SIGINT');
      expect(stopped.code, stopped.stderr).toBe(130);
      expect(stopped.stderr).toMatch(
        /interrupted after sbatch of .*; the held job \d+ this submit made was cancelled \(it never ran\)/,
      );
      let jobs = squeue(exp);
      for (let i = 0; i < 40 && jobs.some((j) => j[1] !== 'CANCELLED'); i++) {
        await sleep(250);
        jobs = squeue(exp);
      }
      expect(jobs.map((j) => j[1])).toEqual(['CANCELLED']);
      const status = await runTopo(['status', exp, '--json'], dir, environment());
      expect(status.code, status.stderr).toBe(0);
      const doc = JSON.parse(status.stdout.split('\n')[0] as string);
      expect(doc.candidates.map((r: { state: string }) => r.state)).toEqual(['stopped']);

      // a new submit runs the candidate, with nothing held
      const fresh = await runTopo(['submit', candidate, '--cluster', 'local', '--json'], dir, environment());
      expect(JSON.parse(fresh.stdout)).toMatchObject({ status: 'submitted' });
      expect(squeue(exp).filter((j) => j[1] === 'PENDING' && j[2] === 'JobHeldUser')).toEqual([]);
      await runTopo(['cancel', candidate, '--cluster', 'local'], dir, environment());
    });
  });
