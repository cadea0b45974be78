// Several candidates on one pull request (`/topo submit <candidate>` each): each keeps a comment of
// its own, the pull request gets ONE check run on its head over all of them and ONE state label
// computed from all of them, and a Request the ports refuse at its turn leaves the pass.
import { describe, expect, it } from 'vitest';
import { monitorPass } from '../../../src/monitor/pass.js';
import { parseObservationBlock } from '../../../src/report/observation-block.js';
import { pullStateLabel as pullLabel } from '../../../src/report/state-label.js';
import { BALANCED_64, type TraceProfile } from '../../fixtures/traces/synthetic.js';
import { fakeWorld, runJob } from '../../support/monitor-fakes.js';
import { BASELINE, experimentOf, EXPERIMENT_ID as ID, T0 } from '../../support/monitor-state.js';

const S = 60;
const profile: TraceProfile = { ...BALANCED_64, name: 'p' };
const run = (c: string) => `topo-${ID}-${c}-0123abcd`;
const opts = { tickSeconds: 5, lagSeconds: 0 };

function setup(candidates = ['a', 'b']) {
  const exp = experimentOf(
    candidates.map((c, i) => ({
      candidate: c,
      runName: run(c),
      pr: 7,
      headSha: 'head7',
      labels: [],
      requested: true,
      requestedAt: i,
    })),
    { max_parallel: 2, stop_when_decided: false },
    { baseline: BASELINE },
  );
  const now = T0 + 200;
  const world = fakeWorld([exp], { now, timeScale: S });
  runJob(world, run('a'), profile, now - 110, S, '11'); // ~105 run-minutes: stable, better
  runJob(world, run('b'), { ...profile, seed: 5 }, now - 15, S, '12'); // 12 run-minutes: measuring
  return { exp, world, now };
}

describe('two candidates of one pull request', () => {
  it('get a comment each, one check run over both and one label', async () => {
    const { world } = setup();
    const report = await monitorPass(world.ports, opts);
    expect(report.errors).toEqual([]);
    expect(report.candidates.map((c) => [c.candidate, c.pr])).toEqual([
      ['a', 7],
      ['b', 7],
    ]);
    const a = world.candidateComments.get('7/a') as string;
    const b = world.candidateComments.get('7/b') as string;
    expect(parseObservationBlock(a)?.run_name).toBe(run('a'));
    expect(parseObservationBlock(b)?.run_name).toBe(run('b'));
    expect(a).toMatch(/^### 🟢 `a`/);
    expect(b).toMatch(/`b`/);
    // one check run on the head, over both: b still measures, so it stays in progress
    expect(world.checkWrites).toHaveLength(1);
    const check = world.checkWrites[0];
    expect(check?.headSha).toBe('head7');
    expect(check?.check.conclusion).toBeUndefined();
    expect(check?.check.title).toMatch(/^2 candidates: b: Measuring.*; a: Better than the baseline/);
    expect(check?.check.summary).toContain('### `a`: success');
    expect(check?.check.summary).toContain('### `b`: measuring');
    // one label for the pull request, from both: running (b) wins over stable (a)
    expect(world.labelWrites).toEqual([{ pr: 7, state: 'running' }]);
  });

  it('a second pass in the same tick writes nothing (the candidates do not overwrite each other)', async () => {
    const { world } = setup();
    await monitorPass(world.ports, opts);
    const writes = world.counters.githubWrites;
    const second = await monitorPass(world.ports, opts);
    expect(second.candidates.every((c) => !c.changed)).toBe(true);
    expect(world.counters.githubWrites).toBe(writes);
    expect(parseObservationBlock(world.candidateComments.get('7/a') as string)?.run_name).toBe(run('a'));
  });

  it('one failed candidate fails the pull request’s check and label, the other keeps its comment', async () => {
    const { world, now } = setup();
    await monitorPass(world.ports, opts);
    const aBefore = world.candidateComments.get('7/a');
    const b = world.jobs.find((j) => j.jobId === '12');
    if (!b) throw new Error('no job 12');
    Object.assign(b, {
      state: 'OUT_OF_MEMORY',
      status: 'failed',
      endTs: now + 5,
      failure: { kind: 'host-oom', message: 'out of memory' },
    });
    world.setNow(now + 30);
    const report = await monitorPass(world.ports, opts);
    expect(report.errors).toEqual([]);
    expect(report.candidates.find((c) => c.candidate === 'b')?.state).toBe('failed');
    expect(world.checkWrites.at(-1)?.check.conclusion).toBe('failure');
    expect(world.checkWrites.at(-1)?.check.title).toMatch(/^2 candidates: b: Failed/);
    expect(world.labels.get(7)).toEqual(['topology:failed']);
    expect(world.candidateComments.get('7/b')).toContain('**Failure (');
    expect(parseObservationBlock(world.candidateComments.get('7/a') as string)?.run_name).toBe(run('a'));
    expect(aBefore).toBeDefined();
  });

  it('a Request the ports refuse at its turn leaves the pass; the label comes from the others', async () => {
    const { world, exp } = setup(['a', 'b', 'c']);
    exp.experiment.max_parallel = 3; // a and b run; c's turn comes
    const asked: string[] = [];
    world.ports.submit = async (_exp, c) => {
      asked.push(c.candidate);
      return { refused: true };
    };
    const report = await monitorPass(world.ports, opts);
    expect(report.errors).toEqual([]);
    expect(report.candidates.map((c) => c.candidate).sort()).toEqual(['a', 'b']);
    expect(world.candidateComments.has('7/c')).toBe(false);
    expect(asked).toEqual(['c']);
    expect(world.labels.get(7)).toEqual(['topology:running']);
  });
});

describe('pullLabel', () => {
  const v = (state: string, value = false) =>
    ({
      state,
      observation: { verdict: { state: 'stable', evidence: [], ...(value ? { value: {} } : {}) } },
    }) as never;
  it('shows the most urgent state of the pull request’s candidates', () => {
    expect(pullLabel([v('stable', true), v('failed')])).toBe('failed');
    expect(pullLabel([v('stable', true), v('warming'), v('queued')])).toBe('running');
    expect(pullLabel([v('finished', true), v('queued')])).toBe('queued');
    expect(pullLabel([v('finished', true), v('stopped')])).toBe('stable');
    expect(pullLabel([v('stopped')])).toBeNull();
    expect(pullLabel([])).toBeNull();
  });
});
