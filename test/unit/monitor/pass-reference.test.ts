// The reference job through whole monitor passes (issue 38 item 1): the bot's Request made when a
// round's candidates need one (the ports write it to the pull request's state), submitted first and
// counted in max_parallel, the candidates' comments showing it and its cost; stopped once no open
// decision needs it, then `stopped` (not failed) in its own comment with the Outcome `decided`; a
// push supersedes it with its candidates; Slurm forgetting it is `lost` and no new one is asked for.
import { describe, expect, it } from 'vitest';
import type { Outcome, RunRequest } from '../../../src/lifecycle/model.js';
import { referenceRequest } from '../../../src/lifecycle/reference.js';
import { monitorPass } from '../../../src/monitor/pass.js';
import type { MonitorCandidate, MonitorExperiment } from '../../../src/monitor/ports.js';
import { BALANCED_64, type TraceProfile } from '../../fixtures/traces/synthetic.js';
import { fakeWorld, HEAD_SHA, runJob } from '../../support/monitor-fakes.js';
import { EXPERIMENT_ID, experimentOf, NOW, requestedCandidate } from '../../support/monitor-state.js';

const S = 60;
const opts = { tickSeconds: 5, lagSeconds: 0 };
const best: TraceProfile = { ...BALANCED_64, name: 'best', steadySeconds: 3.6, seed: 7 };
const slow: TraceProfile = { ...BALANCED_64, name: 'slow', steadySeconds: 6, seed: 5 };
const source = { name: 'model', path: `topologies/${EXPERIMENT_ID}/model.yaml`, topologyHash: '0123abcd' };

/** A round of `slow` in pull request 3, the record's best `model`, and ports that make reference Requests. */
function round(over: Partial<MonitorExperiment['experiment']> = {}) {
  const candidate = requestedCandidate('slow', 3);
  const value = { value: 3.6, low: 3.55, high: 3.65 };
  const exp: MonitorExperiment = {
    ...experimentOf([candidate], { max_parallel: 2, ...over }),
    best: {
      name: 'model',
      value,
      verdict: { state: 'stable', projected_full_run: value, minutes_of_data: 25 },
    },
    referenceSource: source,
  };
  const w = fakeWorld([exp], { now: NOW, timeScale: S });
  const outcomes = new Map<string, Outcome>();
  const made: RunRequest[] = [];
  w.ports.lifecycle = {
    async recordRun() {},
    async recordOutcome(_pr, id, outcome) {
      if (!outcomes.has(id)) outcomes.set(id, outcome);
      const c = exp.candidates.find((x) => x.request?.id === id);
      if (c && !c.outcome) c.outcome = outcome;
    },
    async requestReference(x, pr, headSha) {
      const request = referenceRequest({
        experiment: x.experiment.experiment_id,
        source,
        pr,
        headSha,
        login: 'topo-bot[bot]',
        requestedAt: new Date(w.ports.now() * 1000).toISOString(),
        label: `ffff${String(made.length).padStart(4, '0')}`,
      });
      made.push(request);
      // the next pass reads it from the pull request's state, as a Request
      exp.candidates.push({
        candidate: request.candidate,
        runName: request.runName,
        pr,
        headSha,
        currentHeadSha: headSha,
        labels: [],
        requested: false,
        requestedAt: Date.parse(request.requestedAt),
        request,
        role: 'reference',
      });
      return request;
    },
  };
  return { w, exp, candidate, outcomes, made };
}

const refOf = (exp: MonitorExperiment) =>
  exp.candidates.find((c) => c.role === 'reference') as MonitorCandidate;

describe('the reference job through monitor passes', () => {
  it('is asked for by the bot, submitted first, shown with its cost, and stopped once no decision needs it', async () => {
    const { w, exp, candidate, outcomes, made } = round();
    // the candidate is queued (its /topo submit found no free slot): the pass asks for the reference
    candidate.requested = true;
    const first = await monitorPass(w.ports, opts);
    expect(first.errors).toEqual([]);
    expect(made.map((r) => [r.pr, r.headSha, r.role])).toEqual([[3, HEAD_SHA, 'reference']]);
    // both fit max_parallel 2: the reference first
    expect(w.jobs.map((j) => j.name)).toEqual([made[0]?.runName, candidate.runName]);
    expect(w.candidateComments.get('3/model')).toMatch(/Keep: candidates are compared with this run/);

    // both run; the slow candidate is decided worse against the job beside it
    for (const j of w.jobs) {
      Object.assign(j, { state: 'RUNNING', status: 'running' });
      j.startTs = NOW - 60;
    }
    runJob(w, refOf(exp).runName, best, NOW - 60, S, 'x');
    runJob(w, candidate.runName, slow, NOW - 60, S, 'y');
    w.jobs.splice(2); // runJob added duplicates: keep the submitted jobs (their ids), with the traces
    w.setNow(NOW + 2);
    const second = await monitorPass(w.ports, opts);
    const c = second.candidates.find((x) => x.candidate === 'slow');
    expect(c?.view.observation.decision).toMatchObject({
      state: 'worse',
      reference: { role: 'current best', name: 'model', pr: null },
    });
    expect(c?.view.referenceJob?.run).toMatchObject({ runName: refOf(exp).runName, pr: 3, state: 'RUNNING' });
    expect(w.candidateComments.get('3/slow')).toMatch(
      /Reference: the current best `model`, run `topo-.*ffff0000` beside this candidate \(#3, Slurm job 1000: RUNNING\) · \d+ GPU-minutes/,
    );
    // no open decision needs the reference: it is stopped in the same pass
    const r = second.candidates.find((x) => x.runName === refOf(exp).runName);
    expect(r?.cancelled).toBe('1000');
    expect(made).toHaveLength(1);

    // later passes: stopped (not failed), and its Outcome says why
    w.setNow(NOW + 4);
    const third = await monitorPass(w.ports, opts);
    const ref = third.candidates.find((x) => x.runName === refOf(exp).runName);
    expect(ref?.state).toBe('stopped');
    expect(ref?.view.stoppedBy).toBe('no-longer-needed');
    expect(w.candidateComments.get('3/model')).toMatch(
      /CANCELLED once no open decision needed this reference/,
    );
    w.setNow(NOW + 12);
    await monitorPass(w.ports, opts);
    w.setNow(NOW + 20);
    await monitorPass(w.ports, opts);
    expect(outcomes.get('ffff0000')).toMatchObject({ kind: 'decided' });
    expect(outcomes.get('ffff0000')?.evidence.join(' ')).toContain('reference no longer needed');
    expect(made).toHaveLength(1);
  });

  it('asks for none with max_parallel 1 or `reference: recorded`: decided against the recorded best', async () => {
    for (const over of [{ max_parallel: 1 }, { reference: 'recorded' as const }]) {
      const { w, candidate, made } = round(over);
      candidate.requested = true;
      await monitorPass(w.ports, opts);
      expect(made).toEqual([]);
      expect(w.jobs.map((j) => j.name)).toEqual([candidate.runName]);
      expect(w.candidateComments.get('3/slow')).toMatch(/Reference: the current best `model` as recorded/);
    }
  });

  it('is superseded with its candidates by a push (both jobs cancelled)', async () => {
    const { w, exp, candidate, outcomes, made } = round();
    candidate.requested = true;
    await monitorPass(w.ports, opts);
    const ref = refOf(exp);
    // a push: both Requests are superseded and both jobs cancelled
    for (const c of exp.candidates) c.currentHeadSha = 'b'.repeat(40);
    w.setNow(NOW + 2);
    await monitorPass(w.ports, opts);
    expect(outcomes.get(ref.request?.id as string)?.kind).toBe('superseded');
    expect(outcomes.get(candidate.request?.id as string)?.kind).toBe('superseded');
    expect(w.jobs.every((j) => j.state === 'CANCELLED')).toBe(true);
    expect(made).toHaveLength(1);
  });

  it('when Slurm forgets the reference job it is `lost`, and the candidates fall back to the recorded best', async () => {
    const { w, exp, candidate, outcomes, made } = round();
    candidate.requested = true;
    await monitorPass(w.ports, opts);
    const ref = refOf(exp);
    ref.run = { jobId: '1000', submittedAt: new Date(NOW * 1000).toISOString() };
    w.jobs.splice(
      w.jobs.findIndex((j) => j.name === ref.runName),
      1,
    );
    w.setNow(NOW + 2);
    const r = await monitorPass(w.ports, opts);
    expect(outcomes.get(ref.request?.id as string)?.kind).toBe('lost');
    expect(made).toHaveLength(1);
    w.setNow(NOW + 4);
    const next = await monitorPass(w.ports, opts);
    expect(made).toHaveLength(1);
    const c = next.candidates.find((x) => x.candidate === 'slow');
    expect(c?.view.referenceJob).toMatchObject({ run: null });
    expect(r.errors).toEqual([]);
  });
});
