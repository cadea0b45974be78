// The watch loop (src/monitor/loop.ts, issue 25 item 3): after the scheduled pass, a look every
// minute while candidates are live. A candidate decided between two scheduled passes is stopped by
// the look that decides it; looks write nothing else to GitHub and read nothing but the queued-
// command check; they never submit; a queued command ends the loop.
import { describe, expect, it } from 'vitest';
import { watchPass } from '../../../src/monitor/loop.js';
import type { MonitorCandidate, MonitorExperiment } from '../../../src/monitor/ports.js';
import { parseObservationBlock } from '../../../src/report/observation-block.js';
import type { Experiment } from '../../../src/types/generated/experiment.js';
import { BALANCED_64, type TraceProfile } from '../../fixtures/traces/synthetic.js';
import { EXPERIMENT_ID, fakeWorld, requestedCandidate, runJob, T0 } from '../../support/monitor-fakes.js';

const S = 60; // one real second is one run-minute
const NOW = T0 + 200;
const opts = { tickSeconds: 1, lagSeconds: 0 };
const slow: TraceProfile = { ...BALANCED_64, name: 'slow', steadySeconds: 6, seed: 5 };
const fast: TraceProfile = { ...BALANCED_64, name: 'fast' };

function setup(runs: Array<[string, TraceProfile, number]>, over: Partial<Experiment> = {}) {
  const candidates = [
    ...runs.map(([name], i) => requestedCandidate(name, i + 1)),
    requestedCandidate('next', 9),
  ];
  const exp: MonitorExperiment = {
    experiment: {
      experiment_id: EXPERIMENT_ID,
      cluster: 'local',
      base_topology: '8gpu_64rollouts',
      fixed_inputs: { deploy: 'twin-balanced', driver: 'vam', slurm: { time: '04:00:00' } },
      max_parallel: runs.length,
      ...over,
    },
    timeScale: S,
    scrapeSeconds: 1,
    baseline: { name: 'baseline', value: { value: 3.6, low: 3.55, high: 3.65 } },
    candidates,
  };
  const w = fakeWorld([exp], { now: NOW, timeScale: S });
  for (const [i, [, profile, ago]] of runs.entries())
    runJob(w, (candidates[i] as MonitorCandidate).runName, profile, NOW - ago, S, String(11 + i));
  let now = NOW;
  // GitHub requests of each look: the counters when each wait begins (after the pass, after each look)
  const marks: Array<{ reads: number; writes: number }> = [];
  let checks = 0;
  const deps = (queued: (n: number) => string[] = () => []) => ({
    queued: async () => {
      marks.push({ reads: w.counters.githubReads, writes: w.counters.githubWrites });
      return queued(++checks);
    },
    sleep: async (s: number) => {
      now += s;
      w.setNow(now);
    },
  });
  return {
    w,
    deps,
    marks,
    checks: () => checks,
    run: (n: string) => candidates.find((c) => c.candidate === n)?.runName,
  };
}

describe('the watch loop', () => {
  it('stops a candidate decided between two scheduled passes in the look that decides it, writing only then', async () => {
    // 8 run-minutes in: still measuring at the scheduled pass
    const { w, deps, marks, run } = setup([['slow', slow, 8]]);
    const r = await watchPass(w.ports, opts, { minutes: 4, lookSeconds: 5, yieldCheckSeconds: 5 }, deps());
    expect(r.errors).toEqual([]);
    const first = r.pass.candidates.find((c) => c.candidate === 'slow');
    expect(first?.view.observation.decision?.state).toBe('measuring');
    expect(first?.cancelled).toBeUndefined();
    const i = r.looks.findIndex((l) => l.stopped.includes(run('slow') as string));
    expect(i, JSON.stringify(r.looks)).toBeGreaterThanOrEqual(0);
    expect(r.ended).toBe('no live candidates');
    expect(w.jobs.find((j) => j.name === run('slow'))?.state).toBe('CANCELLED');
    // the comment carries the decision the look stopped it on
    expect(['worse', 'not-better']).toContain(
      parseObservationBlock(w.comments.get(1) ?? '')?.decision?.state,
    );
    // GitHub: the looks before it wrote and read nothing (the queued check is the deps'); the stop wrote
    for (let k = 1; k <= i; k++) expect(marks[k], `look ${k}`).toEqual(marks[0]);
    // (the loop ends after the stop: no candidate is live)
    expect(marks).toHaveLength(i + 1);
    expect(w.counters.githubWrites).toBeGreaterThan((marks[0] as { writes: number }).writes);
    // (the fakes' check write lists the ref's checks first: the action's ports know its id)
    expect(w.counters.githubReads).toBeLessThanOrEqual((marks[0] as { reads: number }).reads + 1);
    // the slot it freed is not served by a look: the next scheduled pass submits `next`
    expect(w.counters.submits).toBe(0);
  });

  it('yields the runner as soon as a command is queued', async () => {
    const { w, deps, checks } = setup([['fast', fast, 8]], { stop_when_decided: false });
    const r = await watchPass(
      w.ports,
      opts,
      { minutes: 4, lookSeconds: 60, yieldCheckSeconds: 30 },
      deps((n) => (n >= 3 ? ['topology-submit #7'] : [])),
    );
    expect(r.ended).toBe('yielded');
    expect(r.yieldedTo).toEqual(['topology-submit #7']);
    // checked before each wait and every 30 s: the third check is 30 s into the second look's wait
    expect(checks()).toBe(3);
    expect(r.looks).toHaveLength(1);
  });

  it('ends before the next scheduled pass, and is one pass without watch minutes', async () => {
    const a = setup([['fast', fast, 8]], { stop_when_decided: false });
    const r = await watchPass(a.w.ports, opts, { minutes: 3, lookSeconds: 60 }, a.deps());
    expect(r.ended).toBe('time');
    expect(r.looks.length).toBe(3);
    expect(r.looks.every((l) => l.stopped.length === 0)).toBe(true);
    expect(new Set(a.marks.slice(1).map((m) => m.writes))).toEqual(new Set([a.marks[0]?.writes]));
    const b = setup([['fast', fast, 8]], { stop_when_decided: false });
    const one = await watchPass(b.w.ports, opts, { minutes: 0 }, b.deps());
    expect(one.ended).toBe('one pass');
    expect(b.checks()).toBe(0);
  });
});
