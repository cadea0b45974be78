// The monitor under the lifecycle: only standing Requests run; a push supersedes; a forgotten job is
// lost, never resubmitted; an outage is never a verdict; an ended run gets one Outcome, judged at its end.
import { describe, expect, it } from 'vitest';
import type { Outcome, RunRecord } from '../../../src/lifecycle/model.js';
import { monitorPass } from '../../../src/monitor/pass.js';
import type { MonitorCandidate } from '../../../src/monitor/ports.js';
import { renderCommentStamp } from '../../../src/report/comment-throttle.js';
import { renderObservationBlock } from '../../../src/report/observation-block.js';
import type { Experiment } from '../../../src/types/generated/experiment.js';
import { BALANCED_64, type TraceProfile } from '../../fixtures/traces/synthetic.js';
import {
  requestedCandidate as candidate,
  type FakeWorld,
  fakeWorld,
  runJob,
  T0,
} from '../../support/monitor-fakes.js';
import { experimentOf } from '../../support/monitor-state.js';

const S = 60;
const PUSHED = 'b'.repeat(40);
const profile: TraceProfile = { ...BALANCED_64, name: 'p' };
const opts = { tickSeconds: 5, lagSeconds: 0 };

function world(candidates: MonitorCandidate[], over: Partial<Experiment> = {}) {
  const exp = experimentOf(candidates, { max_parallel: 2, ...over });
  const w = fakeWorld([exp], { now: T0 + 200, timeScale: S });
  const runs = new Map<string, RunRecord>();
  const outcomes = new Map<string, Outcome>();
  w.ports.lifecycle = {
    async recordRun(_pr, id, run) {
      if (!runs.has(id)) runs.set(id, run);
    },
    async recordOutcome(_pr, id, outcome) {
      if (!outcomes.has(id)) outcomes.set(id, outcome);
    },
  };
  return { w, exp, runs, outcomes };
}

function job(w: FakeWorld, c: MonitorCandidate, id: string, ago = 110) {
  runJob(w, c.runName, profile, T0 + 200 - ago, S, id);
  return w.jobs.find((j) => j.jobId === id)!;
}

describe('the monitor pass under the lifecycle', () => {
  it('submits a standing Request and remembers its job; a candidate without one never runs', async () => {
    const a = candidate('a', 1);
    const unasked = { ...candidate('b', 2), request: undefined, requested: false };
    const { w, runs } = world([a, unasked]);
    const report = await monitorPass(w.ports, opts);
    expect(report.errors).toEqual([]);
    expect(w.counters.submits).toBe(1);
    expect(runs.get('00000001')?.jobId).toBeDefined();
    expect(report.candidates.map((c) => c.candidate)).toEqual(['a']);
  });

  it('serves Requests strictly by request time', async () => {
    const later = candidate('a', 1, { requestedAt: T0 * 1000 + 9_000 });
    const earlier = candidate('b', 2, { requestedAt: T0 * 1000 + 1_000 });
    const { w } = world([later, earlier], { max_parallel: 1 });
    const report = await monitorPass(w.ports, opts);
    expect(report.candidates.find((c) => c.candidate === 'b')?.submitted).toBeDefined();
    expect(report.candidates.find((c) => c.candidate === 'a')?.state).toBe('queued');
  });

  it('a push supersedes: the job is cancelled, the Outcome says why, nothing is submitted', async () => {
    const a = candidate('a', 1, { currentHeadSha: PUSHED, run: { jobId: '11', submittedAt: 'x' } });
    const { w, outcomes } = world([a]);
    const j = job(w, a, '11');
    const report = await monitorPass(w.ports, opts);
    expect(j.state).toBe('CANCELLED');
    expect(outcomes.get('00000001')).toMatchObject({ kind: 'superseded', jobId: '11' });
    expect(outcomes.get('00000001')?.evidence[0]).toContain('/topo submit');
    expect(w.counters.submits).toBe(0);
    expect(report.candidates).toEqual([]);
  });

  it('a job Slurm forgot is lost, never submitted again', async () => {
    const a = candidate('a', 1, { run: { jobId: '11', submittedAt: 'x' } });
    const { w, outcomes } = world([a]);
    await monitorPass(w.ports, opts);
    await monitorPass(w.ports, opts);
    expect(w.counters.submits).toBe(0);
    expect(outcomes.get('00000001')).toMatchObject({ kind: 'lost', jobId: '11' });
  });

  it('slurmdbd down: a job only accounting would know is unknown for the pass, never lost, and its comment says why (issue 40)', async () => {
    const a = candidate('a', 1, { run: { jobId: '11', submittedAt: 'x' } });
    const { w, outcomes } = world([a]);
    await w.ports.github.writeComment(1, 'a', 'the last comment');
    w.ports.slurm.accountingProblem = () => 'Problem talking to the database: Connection refused';
    const report = await monitorPass(w.ports, opts);
    expect(outcomes.size).toBe(0);
    expect(w.counters.submits).toBe(0);
    // a warning, never an error: the monitor action exits 0 on it
    expect(report.errors).toEqual([]);
    expect(report.warnings.join('\n')).toContain('Slurm accounting unreachable');
    const noted = await w.ports.github.readComment(1, 'a');
    expect(noted).toMatch(/^> ⚠️ Accounting unreachable since .*Problem talking to the database/);
    expect(noted).toContain('the last comment');
    // accounting back, and the job still unknown to it: lost, as before
    w.ports.slurm.accountingProblem = () => null;
    await monitorPass(w.ports, opts);
    expect(outcomes.get('00000001')).toMatchObject({ kind: 'lost', jobId: '11' });
  });

  it("slurmdbd down: a running candidate's comment and check say accounting is unreachable, at once, and stop saying it once it answers (issue 40)", async () => {
    const a = candidate('a', 1, { run: { jobId: '11', submittedAt: 'x' } });
    const { w, exp, outcomes } = world([a]);
    job(w, a, '11');
    await monitorPass(w.ports, opts); // a healthy pass writes the comment and the check
    expect(await w.ports.github.readComment(1, 'a')).not.toContain('Slurm accounting is unreachable');
    w.ports.slurm.accountingProblem = (id) =>
      id === exp.experiment.experiment_id ? 'Connection refused' : null;
    const down = await monitorPass(w.ports, opts);
    expect(down.errors).toEqual([]);
    expect(down.candidates[0]?.state).not.toBe('failed');
    const comment = await w.ports.github.readComment(1, 'a');
    expect(comment).toMatch(
      /> ⚠️ Slurm accounting is unreachable \(Connection refused\): live jobs are read from squeue/,
    );
    expect(w.checks.get(1)?.summary).toContain('Slurm accounting is unreachable (Connection refused)');
    expect(outcomes.size).toBe(0);
    w.ports.slurm.accountingProblem = () => null;
    await monitorPass(w.ports, opts);
    expect(await w.ports.github.readComment(1, 'a')).not.toContain('Slurm accounting is unreachable');
    expect(w.checks.get(1)?.summary).not.toContain('Slurm accounting is unreachable');
  });

  it('a consumed Request never runs again, whatever Slurm remembers', async () => {
    const outcome: Outcome = { kind: 'failed', at: new Date(T0 * 1000).toISOString(), evidence: ['x'] };
    const a = candidate('a', 1, { run: { jobId: '11', submittedAt: 'x' }, outcome });
    const { w } = world([a]);
    const report = await monitorPass(w.ports, opts);
    expect(w.counters.submits).toBe(0);
    expect(report.candidates).toEqual([]);
  });

  it('Prometheus down across the end of a run: no verdict, no failure; judged as of the end once back', async () => {
    const a = candidate('a', 1, { run: { jobId: '11', submittedAt: 'x' } });
    const { w, outcomes } = world([a]);
    const j = job(w, a, '11');
    await monitorPass(w.ports, opts); // a healthy, stable pass first
    const range = w.ports.prometheus.range;
    w.ports.prometheus.range = async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:9093');
    };
    Object.assign(j, { state: 'COMPLETED', status: 'completed' });
    j.endTs = T0 + 205;
    w.setNow(T0 + 260);
    const down = await monitorPass(w.ports, opts);
    expect(down.candidates[0]?.state).not.toBe('failed');
    expect(w.comments.get(1)).toContain('Metrics unavailable since');
    expect(w.checks.get(1)?.conclusion).not.toBe('failure');
    expect(w.labels.get(1)).not.toContain('topology:failed');
    expect(outcomes.size).toBe(0);
    w.ports.prometheus.range = range;
    w.setNow(T0 + 270);
    const back = await monitorPass(w.ports, opts);
    expect(back.candidates[0]?.state).toBe('finished');
    expect(w.comments.get(1)).not.toContain('Metrics unavailable since');
    expect(outcomes.get('00000001')).toMatchObject({ kind: 'finished', jobId: '11' });
    expect(outcomes.get('00000001')?.evidence[0]).toMatch(/s\/rollout/);
  });

  it('a job listed in an unknown Slurm state holds its slot and is not resubmitted', async () => {
    const a = candidate('a', 1, { run: { jobId: '11', submittedAt: 'x' } });
    const b = candidate('b', 2);
    const { w } = world([a, b], { max_parallel: 1 });
    const j = job(w, a, '11');
    Object.assign(j, { state: 'UNKNOWN', status: 'unknown' });
    await monitorPass(w.ports, opts);
    expect(w.counters.submits).toBe(0);
  });

  it('Slurm unreachable: the pass fails, the comment says since when, nothing is judged or recorded', async () => {
    const a = candidate('a', 1, { run: { jobId: '11', submittedAt: 'x' } });
    const { w, outcomes } = world([a]);
    job(w, a, '11');
    await monitorPass(w.ports, opts);
    const jobs = w.ports.slurm.jobs;
    w.ports.slurm.jobs = async () => {
      throw new Error('ssh: connect ECONNREFUSED');
    };
    const checks = w.counters.githubWrites;
    const down = await monitorPass(w.ports, opts);
    expect(down.errors.join()).toContain('ECONNREFUSED');
    expect(w.comments.get(1)).toMatch(/^> ⚠️ Cluster unreachable since /);
    expect(w.counters.githubWrites).toBe(checks + 1); // the notice only
    expect(w.counters.submits).toBe(0);
    expect(outcomes.size).toBe(0);
    w.ports.slurm.jobs = jobs;
    w.setNow(T0 + 230);
    await monitorPass(w.ports, opts);
    expect(w.comments.get(1)).not.toContain('Cluster unreachable');
  });
});

describe('a finished candidate whose job Slurm forgot', () => {
  it('stays in its pull request’s check and label, as its final comment says', async () => {
    const finished: Outcome = {
      kind: 'finished',
      at: new Date(T0 * 1000).toISOString(),
      jobId: '7',
      evidence: [],
    };
    const a = candidate('a', 1, { run: { jobId: '7', submittedAt: 'x' }, outcome: finished });
    const b0 = candidate('b', 1);
    const runName = b0.runName.replace(/00000001$/, '0000000b');
    const b = {
      ...b0,
      runName,
      request: { ...(b0.request as NonNullable<typeof b0.request>), id: '0000000b', runName },
    };
    const { w } = world([a, b]);
    const value = { value: 2.5, low: 2.4, high: 2.6 };
    w.candidateComments.set(
      `1/a`,
      [
        '<!-- topo:sticky:monitor-a -->',
        '### ✅ `a`: 12% faster than the baseline',
        '<details><summary>Verdict</summary></details>',
        renderObservationBlock({
          run_name: a.runName,
          verdict: { state: 'stable', evidence: [], value },
          stable_metrics: {},
        }),
        '<!-- topo:monitor-hash:0123456789abcdef final-job:7 -->',
        renderCommentStamp({
          state: 'finished',
          outcome: 'better',
          hash: '0123456789abcdef',
          writtenAtMs: T0 * 1000,
        }),
      ].join('\n'),
    );
    job(w, b, '12');
    const report = await monitorPass(w.ports, opts);
    expect(report.candidates.map((c) => c.candidate)).toEqual(['b']);
    const check = w.checks.get(1);
    expect(check?.title).toMatch(/^2 candidates: /);
    expect(check?.title).toContain('a: a finished (better), as its final comment says');
    expect(check?.summary).toContain('12% faster than the baseline');
    expect(w.labels.get(1)).toEqual(['topology:stable']);
  });
});
