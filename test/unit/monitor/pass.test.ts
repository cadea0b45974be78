import { describe, expect, it } from 'vitest';
import { NO_TELEMETRY_WALL_FLOOR_SECONDS } from '../../../src/judge/observe.js';
import { monitorPass } from '../../../src/monitor/pass.js';
import type { MonitorExperiment } from '../../../src/monitor/ports.js';
import { parseObservationBlock } from '../../../src/report/observation-block.js';
import type { Experiment } from '../../../src/types/generated/experiment.js';
import { BALANCED_64, type TraceProfile } from '../../fixtures/traces/synthetic.js';
import { fakeWorld, runJob } from '../../support/monitor-fakes.js';
import { BASELINE, experimentOf, EXPERIMENT_ID as ID, T0 } from '../../support/monitor-state.js';

const S = 60; // local time scale: one real second is one run-minute
const profile: TraceProfile = { ...BALANCED_64, name: 'p' };
const run = (c: string) => `topo-${ID}-${c}-0123abcd`;

function experiment(over: Partial<Experiment> = {}): MonitorExperiment {
  const candidates = ['a', 'b', 'c', 'd'].map((c, i) => ({
    candidate: c,
    runName: run(c),
    pr: i + 1,
    headSha: `sha${i + 1}`,
    labels: [],
    requested: c !== 'd',
  }));
  // these tests follow runs past their decision; test/unit/monitor/pass-decision.test.ts stops them
  const exp = experimentOf(
    candidates,
    { max_parallel: 2, stop_when_decided: false, ...over },
    { baseline: BASELINE },
  );
  return { ...exp, grafanaUrl: 'http://127.0.0.1:3003' };
}

function setup(over: Partial<Experiment> = {}) {
  const exp = experiment(over);
  const now = T0 + 200;
  const world = fakeWorld([exp], { now, timeScale: S });
  // a: started 110 real s ago → ~105 run-minutes of metrics; b: 12 run-minutes
  runJob(world, run('a'), profile, now - 110, S, '11');
  runJob(world, run('b'), { ...profile, seed: 5 }, now - 15, S, '12');
  return { exp, world };
}

const opts = { tickSeconds: 5, lagSeconds: 0 };

describe('monitor pass', () => {
  it('computes each candidate’s state, writes comment, check and label', async () => {
    const { world } = setup();
    const report = await monitorPass(world.ports, opts);
    expect(report.errors).toEqual([]);
    const byName = Object.fromEntries(report.candidates.map((c) => [c.candidate, c]));
    expect(byName.a?.state).toBe('stable');
    expect(byName.b?.state).toMatch(/warming|stabilising/);
    expect(byName.c?.state).toBe('queued'); // two jobs live, max_parallel 2
    expect(byName.d).toBeUndefined(); // not asked to run
    expect(world.labels.get(1)).toEqual(['topology:stable']);
    expect(world.labels.get(2)).toEqual(['topology:running']);
    expect(world.labels.get(3)).toEqual(['topology:queued']);
    expect(world.checks.get(1)?.conclusion).toBe('success');
    expect(world.checks.get(2)?.conclusion).toBeUndefined();
    const body = world.comments.get(1) as string;
    expect(body).toMatch(/^### 🟢 `a`: better than the baseline by \d/);
    // its figure is what its decision says, and no fixed-sample comparison stands beside the decision
    expect(body).toMatch(
      /\*\*[\d.]+ s per rollout · [\d,]+ rollouts per hour\*\* \(as decided: −[\d.]+% against `baseline`/,
    );
    expect(body).not.toContain('faster than the baseline: ');
    expect(body.split('<!-- topo:observation')[0]).not.toContain('baseline baseline');
    expect(body).toContain('```mermaid');
    expect(parseObservationBlock(body)?.decision?.state).toBe('better');
    // one Slurm call and one query per quantity (plus fallbacks for the rules this fake lacks)
    expect(world.counters.slurmCalls).toBe(1);
  });

  it('a second pass at the same moment costs no write', async () => {
    const { world } = setup();
    await monitorPass(world.ports, opts);
    const writes = world.counters.githubWrites;
    const report = await monitorPass(world.ports, opts);
    expect(report.candidates.every((c) => !c.changed)).toBe(true);
    expect(world.counters.githubWrites).toBe(writes);
  });

  it('two passes at once leave the same state as one', async () => {
    const one = setup();
    await monitorPass(one.world.ports, opts);
    const two = setup();
    await Promise.all([monitorPass(two.world.ports, opts), monitorPass(two.world.ports, opts)]);
    expect([...two.world.comments.entries()]).toEqual([...one.world.comments.entries()]);
    expect([...two.world.labels.entries()]).toEqual([...one.world.labels.entries()]);
    expect(two.world.jobs.length).toBe(one.world.jobs.length);
  });

  it('submits a queued candidate when a slot frees', async () => {
    const { world } = setup();
    await monitorPass(world.ports, opts);
    const a = world.jobs.find((j) => j.name === run('a'));
    if (a) {
      Object.assign(a, { state: 'COMPLETED', status: 'completed' });
      a.endTs = T0 + 200;
    }
    world.setNow(T0 + 210);
    const report = await monitorPass(world.ports, opts);
    const c = report.candidates.find((x) => x.candidate === 'c');
    expect(c?.submitted).toBeDefined();
    expect(c?.state).toBe('submitted');
    expect(world.labels.get(3)).toEqual(['topology:running']);
    expect(report.candidates.find((x) => x.candidate === 'a')?.state).toBe('finished');
  });

  it('serves the queue first come, first served: the earlier request wins a freed slot', async () => {
    const exp = experiment({ max_parallel: 1 });
    // c (pull request 3) asked before b (pull request 2); neither has a job yet
    exp.candidates = exp.candidates.map((c) =>
      c.candidate === 'b'
        ? { ...c, requestedAt: 2_000 }
        : c.candidate === 'c'
          ? { ...c, requestedAt: 1_000 }
          : c,
    );
    const now = T0 + 200;
    const world = fakeWorld([exp], { now, timeScale: S });
    runJob(world, run('a'), profile, now - 110, S, '11');
    const a = world.jobs.find((j) => j.name === run('a'))!;
    Object.assign(a, { state: 'COMPLETED', status: 'completed' });
    a.endTs = now;
    const report = await monitorPass(world.ports, opts);
    const byName = Object.fromEntries(report.candidates.map((c) => [c.candidate, c]));
    expect(byName.c?.submitted).toBeDefined();
    expect(byName.b?.submitted).toBeUndefined();
    expect(byName.b?.state).toBe('queued');
  });

  it('stop_when_stable never cancels a stable candidate: only the reference is stopped as stable', async () => {
    const { world } = setup({ stop_when_stable: true });
    const first = await monitorPass(world.ports, opts);
    const a = first.candidates.find((c) => c.candidate === 'a');
    expect(a?.state).toBe('stable');
    expect(a?.cancelled).toBeUndefined();
    expect(world.jobs.find((j) => j.name === run('a'))?.state).toBe('RUNNING');
    expect(world.labels.get(1)).toEqual(['topology:stable']);
  });

  it('a failed job gets the failure explained, a failure check and the failed label', async () => {
    const { world } = setup();
    const b = world.jobs.find((j) => j.name === run('b'));
    if (b) {
      Object.assign(b, { state: 'OUT_OF_MEMORY', status: 'failed' });
      b.endTs = T0 + 195;
      b.failure = { kind: 'gpu-oom', message: 'CUDA out of memory', gpu: 4, slurm_state: 'OUT_OF_MEMORY' };
    }
    const report = await monitorPass(world.ports, opts);
    expect(report.candidates.find((c) => c.candidate === 'b')?.state).toBe('failed');
    expect(world.labels.get(2)).toEqual(['topology:failed']);
    expect(world.checks.get(2)?.conclusion).toBe('failure');
    expect(world.comments.get(2)).toContain('**Failure (gpu-oom):**');
  });

  it('a running job without telemetry past the deadline fails with no-telemetry, and is stopped', async () => {
    // stop_when_decided is off here (experiment()): a failed run is stopped whatever the settings say
    const exp = experiment();
    const world = fakeWorld([exp], { now: T0 + 5, timeScale: S });
    world.jobs.push({
      jobId: '7',
      name: run('a'),
      state: 'RUNNING',
      status: 'running',
      submitTs: T0,
      startTs: T0,
    });
    const state = async () =>
      (await monitorPass(world.ports, opts)).candidates.find((c) => c.candidate === 'a');
    // shortly after the start it is only starting
    expect((await state())?.state).toBe('starting');
    // 60 run-minutes (four times the deadline) but 60 s of wall clock at 60×: a slow start, not a failure
    world.setNow(T0 + 60);
    expect((await state())?.state).toBe('starting');
    expect(world.counters.cancels).toBe(0);
    // past the run-minute deadline and the wall-clock floor: failed, and its job cancelled
    world.setNow(T0 + NO_TELEMETRY_WALL_FLOOR_SECONDS);
    const a = await state();
    expect(a?.state).toBe('failed');
    expect(a?.view.observation.failure?.kind).toBe('no-telemetry');
    expect(a?.cancelled).toBe('7');
    expect(world.jobs.find((j) => j.jobId === '7')?.status).toBe('cancelled');
    // the next pass reads it ended: failed with its reason (its record), never stopped again
    const after = await state();
    expect(after?.state).toBe('failed');
    expect(after?.view.observation.failure?.message).toMatch(/^no metrics for run_name=/);
    expect(after?.cancelled).toBeUndefined();
    expect(world.counters.cancels).toBe(1);
    expect(world.labels.get(1)).toEqual(['topology:failed']);
  });
});
