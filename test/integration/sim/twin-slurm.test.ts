// The twin end to end: submitted through the real local Slurm with the argv AlpaSim's submit.sh receives,
// discovered by the real Prometheus through file-SD, and its objective read over HTTP from the recording rule.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { steadyState } from '../../../src/sim/model.js';
import { parseOverrides } from '../../../src/sim/overrides.js';
import { loadProfile } from '../../../src/sim/profile.js';
import { type LocalClusterEnv, repoRoot, requireCluster } from '../../support/cluster.js';
import { requireTwinBundle, sbatchTwin } from '../../support/twin-job.js';
import { promQuery, waitFor } from './support.js';

const suffix = `${process.pid.toString(16)}${Date.now().toString(16).slice(-6)}`;
const sbatch = sbatchTwin;

function jobState(id: string): { state: string; exit: string } {
  const out = execFileSync('scontrol', ['show', 'job', '-o', id], { encoding: 'utf8' });
  return { state: /JobState=(\S+)/.exec(out)?.[1] ?? '?', exit: /ExitCode=(\S+)/.exec(out)?.[1] ?? '?' };
}

describe('the twin under Slurm', () => {
  let cluster: LocalClusterEnv;
  beforeAll(() => {
    cluster = requireCluster();
    requireTwinBundle();
  });

  it('serves metrics that Prometheus scrapes, and the objective converges to the steady value', async () => {
    const name = `topo-test-twin-${suffix}`.slice(0, 40);
    const overrides = [
      'deploy=twin-balanced',
      'topology=8gpu_64rollouts',
      'driver=vavam',
      'scenes.test_suite_id=public_2601',
    ];
    const profile = loadProfile('twin-balanced', repoRoot);
    const { topology } = parseOverrides(overrides, { repoRoot, gpusPerNode: 8 });
    const steady = steadyState(topology, profile).secondsPerRollout;
    const workers = topology.runtime?.nr_workers ?? 1;
    const id = sbatch(cluster, name, overrides);
    const sel = `{run_name="${name}"}`;
    // Targets appear after the (scaled) start-up, with the four jobs and the run labels.
    const jobs = await waitFor(
      'the four target groups in Prometheus',
      async () => {
        const r = await promQuery(cluster.prometheusUrl, `count by (job, slurm_job_id, run_uuid) (up${sel})`);
        return r.length === 4 ? r : undefined;
      },
      120_000,
      1000,
    );
    expect(jobs.map((j) => j.metric.job).sort()).toEqual([
      'alpasim-dcgm',
      'alpasim-node',
      'alpasim-process',
      'alpasim-runtime-worker',
    ]);
    expect(jobs.every((j) => j.metric.slurm_job_id === id)).toBe(true);
    const runUuid = jobs[0]!.metric.run_uuid!;
    expect(existsSync(join(cluster.fileSdDir, `${runUuid}.json`))).toBe(true);
    // Follow the recording rule until the run ends (its targets go away).
    const values: number[] = [];
    let fiveMinute: number | undefined;
    await waitFor(
      'the run to finish',
      async () => {
        const r = await promQuery(cluster.prometheusUrl, `alpasim:simulation_seconds_per_rollout:avg${sel}`);
        // While the run shuts down its workers one by one, the rule's sum of rollouts loses the
        // stopped ones and the ratio jumps: keep only readings taken with every worker up.
        const up = await promQuery(
          cluster.prometheusUrl,
          `count(up{job="alpasim-runtime-worker",run_name="${name}"} == 1)`,
        );
        if (r.length && Number(up[0]?.value[1]) === workers) values.push(Number(r[0]!.value[1]));
        const f = await promQuery(
          cluster.prometheusUrl,
          `alpasim:simulation_seconds_per_rollout:rate5m${sel}`,
        );
        if (f.length && values.length > 20) fiveMinute = Number(f[0]!.value[1]);
        const { state } = jobState(id);
        return state === 'COMPLETED' || state === 'FAILED' ? state : undefined;
      },
      180_000,
      1000,
    );
    expect(jobState(id).state).toBe('COMPLETED');
    expect(values.length).toBeGreaterThan(20);
    const last = values.at(-1)!;
    // Cumulative: high during the congested start, falling toward the steady value.
    expect(values[Math.floor(values.length / 4)]!).toBeGreaterThan(last);
    expect(Math.abs(last - steady) / steady).toBeLessThan(0.15);
    expect(fiveMinute).toBeDefined();
    expect(Math.abs(fiveMinute! - steady) / steady).toBeLessThan(0.3);
    // The targets file is removed at exit.
    expect(existsSync(join(cluster.fileSdDir, `${runUuid}.json`))).toBe(false);
  });

  it('fails at start-up with the CUDA out-of-memory line when the topology does not fit a GPU', async () => {
    const name = `topo-test-oom-${suffix}`.slice(0, 40);
    const id = sbatch(cluster, name, [
      'deploy=twin-balanced',
      'topology=8gpu_64rollouts',
      'driver=vavam',
      'services.renderer.gpus=[3,3,3,3]',
    ]);
    const state = await waitFor(
      'the OOM job to end',
      async () => {
        const s = jobState(id);
        return ['FAILED', 'COMPLETED', 'CANCELLED'].includes(s.state) ? s : undefined;
      },
      150_000,
      500,
    );
    expect(state.state).toBe('FAILED');
    expect(state.exit).toBe('1:0');
    const log = readFileSync(join(cluster.runDir, 'slurm_output', `${name}_${id}.log`), 'utf8');
    expect(log).toMatch(
      /torch\.OutOfMemoryError: CUDA out of memory\. Tried to allocate [\d.]+ GiB\. GPU 3 /,
    );
  });
});
