// Issue 38 item 1 and issue 43 items 1-2, in the monitor's decide stage: a round's candidates are
// decided against a job of the current best running beside them at equal run age (not against the
// best's recorded run, stopped at its own decision), the reference job lives while an open decision
// needs it, and a candidate whose reference's data ended is closed at once. The runs are closed loops
// of rollouts scraped into the duration histogram the decision reads (test/support/rollout-loop.ts).
import { describe, expect, it } from 'vitest';
import { type BetweenRun, decideCandidate, type VerdictLike } from '../../../src/analysis/decision.js';
import type { RunAnalysis } from '../../../src/analysis/observe.js';
import { decideExperiment } from '../../../src/monitor/decide.js';
import type { MonitorCandidate } from '../../../src/monitor/ports.js';
import type { ExperimentPass } from '../../../src/monitor/state.js';
import type { CandidateObservation, Verdict } from '../../../src/types/generated/metrics.js';
import {
  EXPERIMENT_ID,
  experimentOf,
  NOW,
  readState,
  requestedCandidate,
  runningJob,
} from '../../support/monitor-state.js';
import { fadingRun, verdictOf } from '../../support/rollout-loop.js';

/** The twin-like run of test/support/rollout-loop.ts, as its verdict at run-minute `until`. */
const run = (seed: number, until: number, factor = 1) => verdictOf(fadingRun(seed, until, factor));

const analysis = (runName: string, v: VerdictLike): RunAnalysis => ({
  observation: {
    run_name: runName,
    verdict: { evidence: [], ...v } as Verdict,
    stable_metrics: {},
  },
  startTs: NOW - 60,
  lastTs: NOW,
  chart: { fullRun: [], rate5m: [] },
  opportunities: [],
});

/** The best as the record keeps it: its run stopped at its decision, run-minute `minutes`. */
function recordedBest(minutes: number) {
  const verdict = run(4, minutes);
  return {
    name: 'model',
    value: verdict.projected_full_run as NonNullable<Verdict['projected_full_run']>,
    verdict,
  };
}

/** The round's reference job: a run of the best (`model`) the bot asked for in pull request 2. */
function referenceJob(pr = 2): MonitorCandidate {
  const c = requestedCandidate('model', pr);
  const runName = `topo-${EXPERIMENT_ID}-model-0123abcd-ffff000${pr}`;
  return {
    ...c,
    runName,
    role: 'reference',
    ...(c.request
      ? { request: { ...c.request, id: `ffff000${pr}`, runName, role: 'reference' as const } }
      : {}),
  };
}

interface Round {
  e: ExperimentPass;
  candidate: MonitorCandidate;
}

/** One pass of decide at run-minute `m` over a near-tie and (when given) its reference job's run. */
function passAt(
  m: number,
  withReference: boolean,
  previous: CandidateObservation | undefined,
  betweenRun?: BetweenRun,
): Round {
  const candidate = requestedCandidate('place-driver', 2);
  const ref = referenceJob();
  const candidates = withReference ? [candidate, ref] : [candidate];
  const state = readState([
    {
      exp: {
        ...experimentOf(candidates, {}, { best: recordedBest(25) }),
        ...(betweenRun ? { betweenRun } : {}),
      },
      jobs: candidates.map((c, i) => runningJob(c.runName, String(11 + i))),
    },
  ]);
  const e = state.experiments[0] as ExperimentPass;
  for (const p of e.candidates) {
    const v = p.c.role === 'reference' ? run(4, m) : run(3, m);
    p.observed = {
      analysis: analysis(p.c.runName, v),
      ended: false,
      ...(p.c.role !== 'reference' && previous ? { previous } : {}),
    };
  }
  decideExperiment(e);
  return { e, candidate };
}

/** Looks every minute from run-minute 20 to `until`: the run-minute the near-tie is decided, or null. */
function decidedBy(until: number, withReference: boolean): { at: number | null; state: string } {
  let previous: CandidateObservation | undefined;
  for (let m = 20; m <= until; m++) {
    const { e } = passAt(m, withReference, previous);
    const view = e.candidates.find((p) => p.c.candidate === 'place-driver')?.decided?.view;
    const d = view?.observation.decision;
    if (d && d.state !== 'measuring') return { at: m, state: d.state };
    previous = view?.observation;
  }
  return { at: null, state: 'measuring' };
}

describe('the near-tie of the demo’s round 2 (issue 38: 1,072 GPU-minutes to the horizon)', () => {
  it('is closed by run-minute 45 against a reference job beside it, not left to the horizon', () => {
    const r = decidedBy(45, true);
    expect(r.at).not.toBeNull();
    expect(r.at as number).toBeLessThanOrEqual(45);
    // truly equal: it is never called better
    expect(r.state).not.toBe('better');
  }, 60_000);

  it('is decided against the job beside it at equal run age, not the best’s recorded run', () => {
    const { e } = passAt(30, true, undefined);
    expect(e.reference).toMatchObject({ role: 'current best', name: 'model', live: true });
    expect(e.reference?.beside?.runName).toBe(referenceJob().runName);
    const d = e.candidates.find((p) => p.c.candidate === 'place-driver')?.decided?.view?.observation.decision;
    expect(d?.evidence.join(' ')).not.toContain('no trajectory');
    // the reference job is the reference: never decided, never stopped while the near-tie is open
    const ref = e.candidates.find((p) => p.c.role === 'reference');
    expect(ref?.decided?.view?.observation.decision?.state).toBe('reference');
  });
});

describe('a candidate whose reference’s data ended (issue 38 item 3)', () => {
  it('is closed at once when more of its own data cannot settle it: a best recorded at run-minute 25 closes the near-tie by 45', () => {
    const r = decidedBy(45, false);
    expect(r.at).not.toBeNull();
    expect(r.at as number).toBeLessThanOrEqual(45);
    expect(r.state).toBe('not-better');
  }, 60_000);

  it('says where the reference’s data end and that it was compared there', () => {
    const { e } = passAt(35, false, undefined);
    const d = e.candidates[0]?.decided?.view?.observation.decision;
    expect(d?.state).toBe('not-better');
    expect(d?.evidence.join(' ')).toContain("the reference's data end at run-minute 25");
    expect(d?.evidence.join(' ')).toContain('between-run term');
    expect(d?.evidence.join(' ')).toContain('assumed (1.5%)');
  });

  it('carries the between-run term the record estimates from its repeated runs (src/record/reference-runs.ts)', () => {
    const text = 'estimated from 4 runs of 1 topology in the record (3 degrees of freedom): 2.4%';
    const { e } = passAt(35, false, undefined, { logSd: 0.024, text });
    const d = e.candidates[0]?.decided?.view?.observation.decision;
    expect(d?.evidence.join(' ')).toContain(`between-run term ±2.4% (log s.d.): ${text}`);
    expect(d?.evidence.join(' ')).not.toContain('assumed');
  });

  it('is compared through an interval that never widens without bound as the candidate ages', () => {
    // a near-tie against a best read at run-minute 25 without a trajectory (an older record): the
    // candidate's own error shrinks, the age gap it is read across grows, the interval must not
    const ref = {
      state: 'stable' as const,
      minutes_of_data: 25,
      projected_full_run: { value: 3, low: 2.97, high: 3.03 },
    };
    const width = (m: number) => {
      const rel = 0.06 / Math.sqrt(m / 10);
      const candidate = {
        state: 'stabilising' as const,
        minutes_of_data: m,
        warmup_end_minutes: 4,
        projected_full_run: { value: 3, low: 3 * Math.exp(-rel), high: 3 * Math.exp(rel) },
      };
      const d = decideCandidate(candidate, {
        name: 'current best model',
        verdict: ref,
        ended: true,
        betweenRun: { logSd: 0.015, text: 'assumed' },
      });
      return (d.relative_change?.high ?? 9) - (d.relative_change?.low ?? -9);
    };
    // past the bounded age gap (30 minutes) it only narrows, however long the candidate runs
    const widths = [60, 90, 120, 240].map(width);
    for (const [i, w] of widths.entries()) if (i > 0) expect(w).toBeLessThanOrEqual(widths[i - 1] as number);
    expect(widths.at(-1)).toBeLessThan(0.15);
  });
});

/** A decide pass over these candidates (their analyses by candidate name) and jobs. */
function decideWith(
  candidates: MonitorCandidate[],
  analyses: Record<string, VerdictLike>,
  over: Parameters<typeof experimentOf>[1] = {},
  jobs = candidates.map((c, i) => runningJob(c.runName, String(11 + i))),
): ExperimentPass {
  const exp = {
    ...experimentOf(candidates, over, { best: recordedBest(25) }),
    referenceSource: {
      name: 'model',
      path: `topologies/${EXPERIMENT_ID}/model.yaml`,
      topologyHash: '0123abcd',
    },
  };
  const state = readState([{ exp, jobs }]);
  const e = state.experiments[0] as ExperimentPass;
  for (const p of e.candidates) {
    const v = analyses[p.c.role === 'reference' ? `ref:${p.c.pr}` : p.c.candidate];
    p.observed = { ...(v ? { analysis: analysis(p.c.runName, v) } : {}), ended: false };
  }
  decideExperiment(e);
  return e;
}

const refStop = (e: ExperimentPass) => e.candidates.find((p) => p.c.role === 'reference')?.decided?.stop;

describe('the reference job’s lifetime (issue 43 item 1)', () => {
  it('keeps the reference while an open candidate points at a gain, although the round’s others were decided at minute 15', () => {
    const leader = requestedCandidate('leader', 2);
    const other = requestedCandidate('other', 2, {
      runName: `topo-${EXPERIMENT_ID}-other-0123abcd-00000003`,
    });
    const jobs = [runningJob(leader.runName, '11'), runningJob(referenceJob().runName, '13')];
    // `other` was pruned at minute 15: its job ended
    jobs.push({ ...runningJob(other.runName, '12'), state: 'CANCELLED', endTs: NOW - 30 });
    const e = decideWith(
      [leader, other, referenceJob()],
      { leader: run(5, 40, 0.97), 'ref:2': run(4, 40) },
      {},
      jobs,
    );
    const d = e.candidates.find((p) => p.c.candidate === 'leader')?.decided?.view?.observation.decision;
    expect(d?.state).toBe('measuring');
    expect(refStop(e)).toBeNull();
    expect(e.referenceJob?.need).toMatchObject({ needed: true });
    expect(e.referenceJob?.need.reason).toContain('leader points at a gain');
  });

  it('stops the reference job once no open decision needs it, and says why', () => {
    const slow = requestedCandidate('slow', 2);
    const e = decideWith([slow, referenceJob()], { slow: run(5, 30, 1.3), 'ref:2': run(4, 30) });
    expect(e.candidates[0]?.decided?.view?.observation.decision?.state).toBe('worse');
    expect(refStop(e)).toMatch(/^reference no longer needed: no open decision would change/);
  });

  it('never stops it while the metrics are unavailable', () => {
    const slow = requestedCandidate('slow', 2);
    const candidates = [slow, referenceJob()];
    const exp = {
      ...experimentOf(candidates, {}, { best: recordedBest(25) }),
      referenceSource: { name: 'model', path: 'p.yaml', topologyHash: '0123abcd' },
    };
    const state = readState([{ exp, jobs: candidates.map((c, i) => runningJob(c.runName, String(11 + i))) }]);
    const e = state.experiments[0] as ExperimentPass;
    for (const p of e.candidates) p.observed = { ended: false };
    e.unavailable = 'Prometheus: rolloutsTotal: 503';
    decideExperiment(e);
    expect(refStop(e)).toBeNull();
  });

  it('stops a second reference job of the same best (one per round) and one of a best that changed', () => {
    const c = requestedCandidate('c', 2);
    const older = { ...referenceJob(3), candidate: 'old-best' };
    const e = decideWith([c, referenceJob(2), referenceJob(4), older], {
      c: run(5, 20),
      'ref:2': run(4, 20),
    });
    const stops = e.candidates.filter((p) => p.c.role === 'reference').map((p) => [p.c.pr, p.decided?.stop]);
    expect(stops).toEqual([
      [2, null],
      [4, expect.stringContaining('another reference job of `model` stands for the round')],
      [3, expect.stringContaining('the current best is now `model`, not `old-best`')],
    ]);
  });
});

describe('the reference Request (issue 38 item 1)', () => {
  it('is asked for when the round’s candidates need one and none stands, in the earliest candidate’s pull request', () => {
    const a = requestedCandidate('a', 5);
    const b = requestedCandidate('b', 7);
    const e = decideWith([b, a], { a: run(5, 20), b: run(6, 20) });
    expect(e.referenceJob?.request).toEqual({ pr: 5, headSha: a.headSha });
  });

  it('is shared by rounds that overlap in time: none is asked for while one stands in another pull request', () => {
    const b = requestedCandidate('b', 7);
    const e = decideWith([b, referenceJob(5)], { b: run(6, 20), 'ref:5': run(4, 20) });
    expect(e.referenceJob?.request).toBeNull();
    expect(e.reference?.beside).toMatchObject({ pr: 5, ended: false });
  });

  it('is asked for in the pull request an earlier round’s reference Request ran on: a rerun-only round’s one pull request (issue 42)', () => {
    // round 1's reference job of `model` ran on #5 and was stopped; `a` is rerun there (attempt 2)
    const at = (NOW - 600) * 1000;
    const earlier = {
      ...referenceJob(5),
      requestedAt: at,
      outcome: { kind: 'stopped' as const, at: new Date(at).toISOString(), evidence: [] },
    };
    const a = requestedCandidate('a', 5);
    const e = decideWith([a, earlier], { a: run(5, 20) }, {}, [runningJob(a.runName, '21')]);
    expect(e.referenceJob?.request).toEqual({ pr: 5, headSha: a.headSha });
    // a pull request carrying a candidate of the best's own name stays no home (one comment per name)
    const own = requestedCandidate('model', 5);
    const f = decideWith([a, own], { a: run(5, 20) }, {}, [runningJob(a.runName, '21')]);
    expect(f.referenceJob?.request).toBeNull();
  });

  it('is not asked for under `reference: recorded`, nor with max_parallel 1 (said so in the comment)', () => {
    const a = requestedCandidate('a', 5);
    for (const over of [{ reference: 'recorded' as const }, { max_parallel: 1 }]) {
      const e = decideWith([a], { a: run(5, 20) }, over);
      expect(e.referenceJob?.request).toBeNull();
      const line = e.candidates[0]?.decided?.view?.referenceJob;
      expect(line).toMatchObject({ run: null });
      expect(line?.note).toMatch(over.max_parallel ? /max_parallel 1/ : /reference: recorded/);
    }
  });

  it('is not asked for again after this round’s reference job failed or was lost: the candidates read the recorded run', () => {
    const a = requestedCandidate('a', 5);
    const failed = {
      ...referenceJob(5),
      outcome: {
        kind: 'failed' as const,
        at: new Date(NOW * 1000).toISOString(),
        evidence: ['out of memory'],
      },
    };
    const e = decideWith([a, failed], { a: run(5, 20) }, {}, [runningJob(a.runName, '11')]);
    expect(e.referenceJob?.request).toBeNull();
    expect(e.reference).toMatchObject({ role: 'current best', live: false });
  });

  it('is first in the queue: started with the candidates, never after them', () => {
    const a = requestedCandidate('a', 5, { requested: true });
    const ref = { ...referenceJob(5), requestedAt: (a.requestedAt ?? 0) + 1000 };
    const e = decideWith([a, ref], {}, {}, []);
    expect(e.queue.order.map((p) => p.c.role ?? p.c.candidate)).toEqual(['reference', 'a']);
  });

  it('shows in each candidate’s comment: its run, state, pull request and GPU-minutes', () => {
    const a = requestedCandidate('a', 7);
    const e = decideWith([a, referenceJob(5)], { a: run(6, 20), 'ref:5': run(4, 20) });
    const line = e.candidates[0]?.decided?.view?.referenceJob;
    expect(line?.run).toMatchObject({
      runName: referenceJob(5).runName,
      pr: 5,
      jobId: '12',
      state: 'RUNNING',
    });
    expect(line?.run?.gpuMinutes).toBeGreaterThan(0);
  });
});
