// `status --json` and `analyze --json` against the local cluster: versioned documents that match
// their schemas in schemas/cli/, and, when Prometheus is down, the Slurm states with the outage said, exit 3.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { runTopo } from '../../support/cli.js';
import { cliSchemaErrors } from '../../support/cli-schemas.js';
import { requireCluster } from '../../support/cluster.js';

const cluster = requireCluster();
const id = 'topology-opt-vavam-local-20261203';

function topo(cwd: string, ...args: string[]) {
  return runTopo(args, cwd, {
    TOPO_CLUSTERS_FILE: cluster.clustersFile,
    SLURM_CONF: cluster.slurmConf,
    TOPO_SSH_KEY_FILE: cluster.sshKeyPath,
  });
}

function experimentDir(experiment = id): string {
  const dir = mkdtempSync(join(tmpdir(), 'topo-json-'));
  mkdirSync(join(dir, 'topologies', experiment), { recursive: true });
  writeFileSync(
    join(dir, 'topologies', experiment, 'experiment.yaml'),
    `experiment_id: ${experiment}\nobjective: minimize stabilized full-run seconds_per_rollout\ncluster: local\nbase_topology: 1gpu\nfixed_inputs:\n  deploy: twin-balanced\n  driver: vavam\n`,
  );
  return dir;
}

describe('--json against the local cluster', () => {
  it('status --json: one versioned document per refresh', async () => {
    const r = await topo(
      experimentDir(),
      'status',
      id,
      '--json',
      '--watch',
      '--count',
      '2',
      '--interval',
      '1',
    );
    expect(r.code, r.stderr).toBe(0);
    const docs = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(docs).toHaveLength(2);
    for (const doc of docs) {
      expect(cliSchemaErrors('status', doc)).toEqual([]);
      expect(doc).toMatchObject({ schema_version: 2, experiment_id: id, cluster: 'local', candidates: [] });
    }
  });

  it('analyze --json of a run name no series has: a findings error, exit 1', async () => {
    const r = await topo(
      experimentDir(),
      'analyze',
      `topo-${id}-baseline-0123abcd`,
      '--json',
      '--prometheus',
      cluster.prometheusUrl,
      '--minutes',
      '5',
    );
    // No series carries that run_name: said as such (a wrong name), not "measuring".
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(cliSchemaErrors('error', doc)).toEqual([]);
    expect(doc.error).toMatchObject({ kind: 'findings', exit_code: 1 });
    expect(doc.error.message).toContain(
      `no series in Prometheus at ${cluster.prometheusUrl} has run_name="topo-${id}-baseline-0123abcd" in the 5 minutes before`,
    );
    const text = await topo(experimentDir(), 'analyze', 'no-such-run', '--prometheus', cluster.prometheusUrl);
    expect(text.code).toBe(1);
    expect(text.stdout).toBe('');
    expect(text.stderr).toContain('no series in Prometheus');
    expect(text.stderr).not.toMatch(/measuring|updated every/);
  });

  it('a login node whose host key is not the pinned one is refused: exit 4, its own kind', async () => {
    const dir = experimentDir();
    const clusters = parse(readFileSync(cluster.clustersFile, 'utf8'));
    clusters.clusters['local-ssh'].known_host_key =
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPLACEHOLDERPLACEHOLDERPLACEHOLDERPLACEHOLDE';
    writeFileSync(join(dir, 'clusters.yaml'), stringify(clusters));
    const r = await topo(dir, 'jobs', id, '--cluster', 'local-ssh', '--clusters', 'clusters.yaml', '--json');
    expect(r.code).toBe(4);
    const doc = JSON.parse(r.stdout);
    expect(cliSchemaErrors('error', doc)).toEqual([]);
    expect(doc.error.kind).toBe('refused');
    expect(r.stderr).toMatch(/^topo jobs: refusing .*host key/);
  });

  it('a private key the login node refuses: exit 4, kind refused, naming the key variables (issue 41: exit 1, internal)', async () => {
    const dir = experimentDir();
    const wrong = join(dir, 'wrong-key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', wrong]);
    const r = await runTopo(['jobs', id, '--cluster', 'local-ssh', '--json'], dir, {
      TOPO_CLUSTERS_FILE: cluster.clustersFile,
      SLURM_CONF: cluster.slurmConf,
      TOPO_SSH_KEY_FILE: wrong,
    });
    expect(r.code, r.stderr).toBe(4);
    const doc = JSON.parse(r.stdout);
    expect(cliSchemaErrors('error', doc)).toEqual([]);
    expect(doc.error.kind).toBe('refused');
    expect(r.stderr).toMatch(/refused the private key .*TOPO_SSH_KEY_FILE/);
  });

  it("status with Prometheus down: each run's Slurm state, the outage said, exit 3 (issue 41: nothing shown)", async () => {
    // an experiment of its own: the cancelled job stays in squeue --states=all for MinJobAge
    const own = 'topology-opt-vavam-local-20261209';
    const dir = experimentDir(own);
    const clusters = parse(readFileSync(cluster.clustersFile, 'utf8'));
    clusters.clusters.local.prometheus_url = 'http://127.0.0.1:9';
    writeFileSync(join(dir, 'clusters.yaml'), stringify(clusters));
    const slurm = { env: { ...process.env, SLURM_CONF: cluster.slurmConf }, encoding: 'utf8' as const };
    const name = `topo-${own}-baseline-0123abcd-89abcdef`;
    const sbatch = ['--parsable', '--hold', `--job-name=${name}`, '--wrap=sleep 600'];
    const jobId = execFileSync('sbatch', sbatch, slurm).trim().split(';')[0] as string;
    try {
      const r = await topo(dir, 'status', own, '--clusters', 'clusters.yaml');
      expect(r.code, r.stderr).toBe(3);
      expect(r.stdout).toMatch(new RegExp(`\\nbaseline +${jobId} +PENDING +— +— +—`));
      expect(r.stderr).toMatch(
        /^topo status: cannot reach Prometheus at http:\/\/127\.0\.0\.1:9.*: the Slurm states above are current/,
      );
      const j = await topo(dir, 'status', own, '--clusters', 'clusters.yaml', '--json');
      expect(j.code, j.stderr).toBe(3);
      const doc = JSON.parse(j.stdout);
      expect(cliSchemaErrors('status', doc)).toEqual([]);
      expect(doc.unavailable).toMatch(/^cannot reach Prometheus at http:\/\/127\.0\.0\.1:9/);
      expect(doc.candidates).toEqual([
        expect.objectContaining({
          candidate: 'baseline',
          run_name: name,
          job_id: jobId,
          slurm_state: 'PENDING',
          state: null,
          verdict: null,
          seconds_per_rollout: null,
        }),
      ]);
    } finally {
      execFileSync('scancel', [jobId], slurm);
    }
  });
});
