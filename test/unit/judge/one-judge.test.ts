// One judge (issue 32 item 1): the monitor, `topo status` and `topo analyze --against` judge one run
// through src/judge with the same inputs (its job, its series, the clock with the experiment's wall
// time and rollouts, the reference), so they give it the same verdict and Decision. Before, status
// had no wall time, rollouts or missing series and no Decision, and analyze no job start.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { judgeJobs } from '../../../src/cli/commands/status.js';
import { experimentLimits } from '../../../src/judge/observe.js';
import { monitorPass } from '../../../src/monitor/pass.js';
import type { MonitorCandidate, MonitorExperiment } from '../../../src/monitor/ports.js';
import type { Decision } from '../../../src/types/generated/metrics.js';
import { analyzeRun } from '../../../src/usecases/analyze-run.js';
import { BALANCED_64, type TraceProfile } from '../../fixtures/traces/synthetic.js';
import { EXPERIMENT_ID, fakeWorld, requestedCandidate, runJob, T0 } from '../../support/monitor-fakes.js';

const S = 60;
const NOW = T0 + 200;
const base: TraceProfile = { ...BALANCED_64, name: 'base', steadySeconds: 3.6, seed: 7 };
const slow: TraceProfile = { ...BALANCED_64, name: 'slow', steadySeconds: 6, seed: 5 };

function world() {
  const candidates = [requestedCandidate('baseline', 1), requestedCandidate('slow', 2)];
  const exp: MonitorExperiment = {
    experiment: {
      experiment_id: EXPERIMENT_ID,
      cluster: 'local',
      base_topology: '8gpu_64rollouts',
      fixed_inputs: {
        deploy: 'twin-balanced',
        driver: 'vam',
        scene_count: 40,
        rollouts_per_scene: 4,
        slurm: { time: '04:00:00' },
      },
      max_parallel: 3,
    },
    timeScale: S,
    scrapeSeconds: 1,
    candidates,
  };
  const w = fakeWorld([exp], { now: NOW, timeScale: S });
  runJob(w, (candidates[0] as MonitorCandidate).runName, base, NOW - 70, S, '11');
  runJob(w, (candidates[1] as MonitorCandidate).runName, slow, NOW - 60, S, '12');
  return { w, exp, run: (i: number) => (candidates[i] as MonitorCandidate).runName };
}

/** What must agree: the state, the change and when it was decided (the reference is named per surface). */
const core = (d: Decision | null | undefined) =>
  d ? { state: d.state, relative_change: d.relative_change, decided_at_minutes: d.decided_at_minutes } : null;

describe('one judge: the monitor, status and analyze agree on a run', () => {
  it('gives a run the same verdict and Decision on the three surfaces for the same inputs', async () => {
    const { w, exp, run } = world();
    const jobs = await w.ports.slurm.jobs(EXPERIMENT_ID);
    const t = { prometheus: w.ports.prometheus, timeScale: S, stepSeconds: 1, grafanaUrl: null };
    // status and analyze first: the monitor's pass cancels the decided job
    const status = await judgeJobs({
      experiment: exp.experiment,
      id: EXPERIMENT_ID,
      jobs,
      now: NOW,
      t,
      cwd: mkdtempSync(join(tmpdir(), 'one-judge-')),
    });
    const analyzed = await analyzeRun({
      prometheus: w.ports.prometheus,
      runName: run(1),
      against: run(0),
      timeScale: S,
      stepSeconds: 1,
      nowTs: NOW,
      atTs: NOW,
      minutes: 600,
      settings: exp.experiment.stabilisation,
      experiment: exp.experiment,
      limits: experimentLimits(exp.experiment),
      jobOf: async (name) => jobs.find((j) => j.name === name),
    });
    const pass = await monitorPass(w.ports, { tickSeconds: 5, lagSeconds: 0 });
    expect(pass.errors).toEqual([]);
    const monitor = pass.candidates.find((c) => c.candidate === 'slow')?.view.observation;
    const row = status.rows.find((r) => r.candidate === 'slow');

    expect(monitor?.decision?.state).toBe('worse');
    expect(monitor?.decision?.against).toBe('baseline baseline');
    // status: the same verdict and the same Decision, against the same reference
    expect(row?.verdict).toBe(monitor?.verdict.state);
    expect(row?.projected_seconds_per_rollout).toEqual(monitor?.verdict.projected_full_run);
    expect(row?.decision).toEqual({
      state: monitor?.decision?.state,
      against: monitor?.decision?.against,
      relative_change: monitor?.decision?.relative_change,
    });
    // analyze --against the baseline's run: the same verdict, the same Decision (named by its run)
    expect(analyzed.analysis.observation.verdict).toEqual(monitor?.verdict);
    expect(core(analyzed.judgement.decision)).toEqual(core(monitor?.decision));
    expect(analyzed.judgement.decision?.against).toBe(run(0));
  });

  it('status names the candidate without its hash and label, and says who stopped a cancelled run', async () => {
    const { w, exp } = world();
    await monitorPass(w.ports, { tickSeconds: 5, lagSeconds: 0 }); // cancels `slow` on its decision
    const jobs = await w.ports.slurm.jobs(EXPERIMENT_ID);
    expect(jobs.find((j) => j.jobId === '12')?.state).toBe('CANCELLED');
    const status = await judgeJobs({
      experiment: exp.experiment,
      id: EXPERIMENT_ID,
      jobs,
      now: NOW + 2,
      t: { prometheus: w.ports.prometheus, timeScale: S, stepSeconds: 1, grafanaUrl: null },
      cwd: mkdtempSync(join(tmpdir(), 'one-judge-')),
    });
    const row = status.rows.find((r) => r.job_id === '12');
    expect(row?.candidate).toBe('slow');
    expect(row?.state).toBe('stopped');
    expect(row?.decision?.state).toBe('worse');
  });
});
