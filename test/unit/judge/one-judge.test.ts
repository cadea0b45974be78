// One judge (issues 32 and 39): the monitor, `topo status` and `topo analyze` read a run through the
// judge's one read (src/judge/read.ts readRuns) and judge it with the one judge, so they give it the
// same judgement: state, verdict, Decision (its structured reference and its figure) and figure.
// Four scenarios, among them a live job whose verdict is `unhealthy` (on ae13044 the monitor said
// stabilising / measuring and `topo analyze` failed / no decision: analyze read no job, no wall
// time and no settings) and a job the monitor stopped on its decision.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Figure } from '../../../src/analysis/figure.js';
import { judgeJobs } from '../../../src/cli/commands/status.js';
import { monitorPass } from '../../../src/monitor/pass.js';
import type { MonitorCandidate, MonitorExperiment } from '../../../src/monitor/ports.js';
import { viewFigure } from '../../../src/report/pr-comment.js';
import { statusOf } from '../../../src/slurm/types.js';
import type { Decision } from '../../../src/types/generated/metrics.js';
import { analyzeRun } from '../../../src/usecases/analyze-run.js';
import { BALANCED_64, type TraceProfile } from '../../fixtures/traces/synthetic.js';
import { EXPERIMENT_ID, fakeWorld, requestedCandidate, runJob, T0 } from '../../support/monitor-fakes.js';

const S = 60;
const NOW = T0 + 200;
const base: TraceProfile = { ...BALANCED_64, name: 'base', steadySeconds: 3.6, seed: 7 };
const slow: TraceProfile = { ...BALANCED_64, name: 'slow', steadySeconds: 6, seed: 5 };
const fast: TraceProfile = { ...BALANCED_64, name: 'fast', steadySeconds: 3.0, seed: 3 };
// half the rollouts fail from run-minute 20: the detector calls the live run unhealthy
const sick: TraceProfile = {
  ...BALANCED_64,
  name: 'sick',
  steadySeconds: 3.6,
  seed: 9,
  failureRate: 0.6,
  failureFromMinutes: 20,
};

/** The experiment with a baseline and one candidate running `profile` (ended: `endTs`). */
function world(profile: TraceProfile, candidate = 'cand', ended?: { state: string; endTs: number }) {
  const candidates = [requestedCandidate('baseline', 1), requestedCandidate(candidate, 2)];
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
      stop_when_decided: false,
    },
    timeScale: S,
    scrapeSeconds: 1,
    candidates,
  };
  const w = fakeWorld([exp], { now: NOW, timeScale: S });
  const name = (i: number) => (candidates[i] as MonitorCandidate).runName;
  runJob(w, name(0), base, NOW - 70, S, '11');
  runJob(w, name(1), profile, NOW - 60, S, '12');
  if (ended) Object.assign(w.jobs[1] as object, { ...ended, status: statusOf(ended.state) });
  return { w, exp, run: name };
}

/** What every surface must agree on. */
interface Seen {
  state: string | null;
  verdict: string | null;
  decision: Pick<Decision, 'state' | 'reference' | 'relative_change'> | null;
  figure: number | null;
}
const core = (d: Decision | null | undefined): Seen['decision'] =>
  d
    ? {
        state: d.state,
        reference: { ...d.reference, pr: d.reference.pr ?? null },
        relative_change: d.relative_change ?? null,
      }
    : null;
const value = (f: Figure | null | undefined) => (f ? f.value : null);

/** The candidate's judgement on the three surfaces: status and analyze first (the pass may cancel). */
async function surfaces(x: ReturnType<typeof world>, candidate = 'cand'): Promise<Record<string, Seen>> {
  const { w, exp, run } = x;
  const jobs = await w.ports.slurm.jobs(EXPERIMENT_ID);
  const t = { prometheus: w.ports.prometheus, timeScale: S, stepSeconds: 1, grafanaUrl: null };
  const cwd = mkdtempSync(join(tmpdir(), 'one-judge-'));
  const status = await judgeJobs({ experiment: exp.experiment, jobs, now: NOW, t, cwd });
  const analyzed = await analyzeRun({
    prometheus: w.ports.prometheus,
    runName: run(1),
    timeScale: S,
    stepSeconds: 1,
    nowTs: NOW,
    minutes: 600,
    known: { experiment: exp.experiment, jobs },
  });
  const pass = await monitorPass(w.ports, { tickSeconds: 5, lagSeconds: 0 });
  expect(pass.errors).toEqual([]);
  const view = pass.candidates.find((c) => c.candidate === candidate)?.view;
  const row = status.rows.find((r) => r.candidate === candidate);
  const j = analyzed.judgement;
  return {
    monitor: {
      state: view?.state ?? null,
      verdict: view?.observation.verdict.state ?? null,
      decision: core(view?.observation.decision),
      figure: view ? value(viewFigure(view)) : null,
    },
    status: {
      state: row?.state ?? null,
      verdict: row?.verdict ?? null,
      decision: row?.decision
        ? {
            state: row.decision.state as Decision['state'],
            reference: row.decision.reference,
            relative_change: row.decision.relative_change,
          }
        : null,
      figure: row?.seconds_per_rollout?.value ?? null,
    },
    analyze: {
      state: j.state,
      verdict: j.observation.verdict.state,
      decision: core(j.decision),
      figure: value(j.figure),
    },
  };
}

describe('one judge: the monitor, status and analyze give a run the same judgement', () => {
  it('a candidate decided worse than the live baseline', async () => {
    const seen = await surfaces(world(slow));
    expect(seen.monitor?.decision?.state).toBe('worse');
    expect(seen.monitor?.decision?.reference).toEqual({ role: 'baseline', name: 'baseline', pr: null });
    expect(seen.status).toEqual(seen.monitor);
    expect(seen.analyze).toEqual(seen.monitor);
  });

  it('a live job whose verdict is unhealthy: stabilising and still measuring everywhere, never failed', async () => {
    const seen = await surfaces(world(sick));
    expect(seen.monitor?.verdict).toBe('unhealthy');
    expect(seen.monitor?.state).toBe('stabilising');
    expect(seen.monitor?.decision?.state).not.toBe(undefined);
    expect(seen.analyze).toEqual(seen.monitor);
    expect(seen.status).toEqual(seen.monitor);
  });

  it('a job that completed: judged as of its end, finished everywhere', async () => {
    const seen = await surfaces(world(fast, 'cand', { state: 'COMPLETED', endTs: NOW - 10 }));
    expect(seen.monitor?.state).toBe('finished');
    expect(seen.analyze).toEqual(seen.monitor);
    expect(seen.status).toEqual(seen.monitor);
  });

  it('a job the monitor stopped on its decision: stopped, with the same decision, on every surface', async () => {
    const x = world(slow);
    x.exp.experiment.stop_when_decided = true;
    await monitorPass(x.w.ports, { tickSeconds: 5, lagSeconds: 0 }); // cancels the candidate on its decision
    expect(x.w.jobs.find((j) => j.jobId === '12')?.state).toBe('CANCELLED');
    const seen = await surfaces(x);
    expect(seen.monitor?.state).toBe('stopped');
    expect(seen.monitor?.decision?.state).toBe('worse');
    expect(seen.analyze).toEqual(seen.monitor);
    expect(seen.status).toEqual(seen.monitor);
  });
});
