// Stage `decide` on a state observed in memory: the reference, each candidate's view and Decision,
// its stop intent, the lifecycle's intents and the queue. It takes no ports.
import { describe, expect, it } from 'vitest';
import { decide } from '../../../../src/monitor/decide.js';
import { planQueue } from '../../../../src/usecases/queue.js';
import {
  analysisOf,
  experimentOf,
  observeWith,
  readState,
  requestedCandidate,
  runningJob,
} from '../../../support/monitor-state.js';

const baseline = { name: 'baseline', value: { value: 3.6, low: 3.55, high: 3.65 } };

describe('stage decide', () => {
  it('decides a clearly slower candidate worse against the recorded baseline and says to stop it', async () => {
    const slow = requestedCandidate('slow', 1);
    const state = readState([
      { exp: experimentOf([slow], {}, { baseline }), jobs: [runningJob(slow.runName, '11')] },
    ]);
    const e = state.experiments[0];
    if (!e) throw new Error('no experiment');
    observeWith(e, {
      slow: analysisOf(slow.runName, { projected_full_run: { value: 6, low: 5.9, high: 6.1 } }),
    });
    await decide(state);
    expect(e.reference).toMatchObject({ role: 'baseline', name: 'baseline', live: false });
    const p = e.candidates[0];
    expect(p?.decided?.view?.state).toBe('stabilising');
    expect(p?.decided?.view?.observation.decision).toMatchObject({
      state: 'worse',
      reference: { role: 'baseline', name: 'baseline', pr: null },
    });
    expect(p?.decided?.stop).toMatch(/^decided: .*\(stop_when_decided\)$/);
  });

  it('never stops while the metrics are unavailable', async () => {
    const slow = requestedCandidate('slow', 1);
    const state = readState([
      { exp: experimentOf([slow], {}, { baseline }), jobs: [runningJob(slow.runName, '11')] },
    ]);
    const e = state.experiments[0];
    if (!e) throw new Error('no experiment');
    observeWith(e, {
      slow: analysisOf(slow.runName, { projected_full_run: { value: 6, low: 5.9, high: 6.1 } }),
    });
    e.unavailable = 'Prometheus: rolloutsTotal: 503';
    await decide(state);
    expect(e.candidates[0]?.decided?.stop).toBeNull();
  });

  it('stop_when_stable stops the live baseline (the reference) once stable, never a stable candidate still measuring', async () => {
    const base = requestedCandidate('baseline', 1);
    const fast = requestedCandidate('fast', 2);
    const state = readState([
      {
        exp: experimentOf([base, fast], { stop_when_stable: true, stop_when_decided: false }),
        jobs: [runningJob(base.runName, '11'), runningJob(fast.runName, '12')],
      },
    ]);
    const e = state.experiments[0];
    if (!e) throw new Error('no experiment');
    const stable = { state: 'stable' as const, value: { value: 3.6, low: 3.58, high: 3.62 } };
    observeWith(e, {
      baseline: analysisOf(base.runName, {
        ...stable,
        projected_full_run: { value: 3.6, low: 3.5, high: 3.7 },
      }),
      fast: analysisOf(fast.runName, { ...stable, projected_full_run: stable.value }),
    });
    await decide(state);
    expect(e.reference).toMatchObject({ role: 'baseline', name: 'baseline', live: true });
    const [b, f] = e.candidates;
    expect(b?.decided?.view?.observation.decision?.state).toBe('reference');
    expect(b?.decided?.stop).toBe('stable (stop_when_stable)');
    expect(f?.decided?.view?.state).toBe('stable');
    expect(f?.decided?.view?.observation.decision?.state).toBe('measuring');
    expect(f?.decided?.stop).toBeNull();
  });

  it('plans the lifecycle’s effects and the queue: first come, first served into the free slots', async () => {
    const moved = requestedCandidate('moved', 1, { currentHeadSha: 'b'.repeat(40) });
    const forgotten = requestedCandidate('forgotten', 2, { run: { jobId: '7', submittedAt: 'x' } });
    const late = requestedCandidate('late', 5, { requestedAt: Date.parse('2030-01-01T00:00:00Z') });
    const early = requestedCandidate('early', 4);
    const running = requestedCandidate('running', 3);
    const state = readState([
      {
        exp: experimentOf([moved, forgotten, late, early, running], { max_parallel: 3 }),
        jobs: [runningJob(moved.runName, '11'), runningJob(running.runName, '13')],
      },
    ]);
    const e = state.experiments[0];
    if (!e) throw new Error('no experiment');
    observeWith(e);
    await decide(state);
    const by = (name: string) => e.candidates.find((p) => p.c.candidate === name);
    expect(by('moved')?.decided).toEqual({
      view: null,
      stop: null,
      lifecycle: { kind: 'supersede', jobId: '11' },
    });
    expect(by('forgotten')?.decided?.lifecycle).toEqual({ kind: 'lost', jobId: '7' });
    // two live jobs as read (the superseded one still holds its slot this pass) of three
    expect(e.queue.free).toBe(1);
    expect(e.queue.order.map((p) => p.c.candidate)).toEqual(['early', 'late']);
    expect(by('early')?.decided?.view?.state).toBe('queued');
    expect(by('early')?.decided?.view?.observation.verdict.evidence).toEqual(['waiting for a free slot']);
  });

  it("the queue is the submit path's one rule (planQueue): a run name live twice holds one slot", async () => {
    const running = requestedCandidate('running', 1);
    const waiting = [requestedCandidate('a', 2), requestedCandidate('b', 3)];
    const jobs = [runningJob(running.runName, '11'), runningJob(running.runName, '12')];
    const state = readState([{ exp: experimentOf([running, ...waiting], { max_parallel: 2 }), jobs }]);
    const e = state.experiments[0];
    if (!e) throw new Error('no experiment');
    observeWith(e);
    await decide(state);
    const plan = planQueue(
      waiting.map((c) => ({ jobName: c.runName })),
      jobs.map((j) => ({ id: j.jobId, name: j.name, status: j.status })),
      2,
    );
    expect(e.queue.free).toBe(plan.slots - plan.live);
    expect(e.queue.free).toBe(1);
    expect(e.queue.order.map((p) => p.c.runName)).toEqual([
      ...plan.submitNow.map((r) => r.jobName),
      ...plan.queued.map((q) => q.request.jobName),
    ]);
  });

  it('a candidate nobody asked to run gets no view (the validate workflow owns its comment)', async () => {
    const idle = { ...requestedCandidate('idle', 1), request: undefined, requested: false };
    const state = readState([{ exp: experimentOf([idle]) }]);
    const e = state.experiments[0];
    if (!e) throw new Error('no experiment');
    observeWith(e);
    await decide(state);
    expect(e.candidates[0]?.decided?.view).toBeNull();
  });
});
