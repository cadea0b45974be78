// A closed loop of rollouts with a known truth, scraped into the per-worker duration histogram the
// decision's estimate reads (src/analysis/rollouts.ts): the equal-run-age and reference tests' runs.
import type { VerdictLike } from '../../src/analysis/decision.js';
import { decisionReading } from '../../src/analysis/reading.js';
import {
  estimateTrajectory,
  type RolloutEstimateInput,
  reconstructRollouts,
  rolloutEstimate,
} from '../../src/analysis/rollouts.js';

export function uniform(seed: number) {
  let x = seed;
  return () => {
    x = (x * 16807) % 2147483647;
    return x / 2147483647;
  };
}

/**
 * A closed loop: every slot starts at 0 and runs rollouts back to back; `duration(start, u, k)` is a
 * rollout's duration in minutes (k: its index in the slot, u: a uniform draw). Scraped per worker
 * every `step` minutes into the histogram's sum and count, read back as rollouts.ts does.
 */
export function loop(o: {
  slots: number;
  workers: number;
  until: number;
  step: number;
  seed: number;
  duration: (start: number, u: () => number, k: number) => number;
  /** The suite's rollouts in all: once that many have started, a slot that ends starts no other (the drain). */
  suite?: number;
}): LoopRun {
  const ends = o.suite === undefined ? slotByslot(o) : inStartOrder(o, o.suite);
  const ticks = Math.floor(o.until / o.step) + 1;
  const series = (w: number, f: (e: { d: number }) => number) => ({
    labels: { worker_id: String(w) },
    points: Array.from({ length: ticks }, (_, i) => ({
      t: i * o.step,
      v: ends.filter((e) => e.worker === w && e.end <= i * o.step).reduce((a, e) => a + f(e), 0),
    })),
  });
  const ws = Array.from({ length: o.workers }, (_, w) => w);
  const batches = reconstructRollouts(
    ws.map((w) => series(w, (e) => 60 * e.d)),
    ws.map((w) => series(w, () => 1)),
  );
  // the in-flight gauge: rollouts started and not yet ended at each scrape
  const active = Array.from({ length: ticks }, (_, i) => ({
    t: i * o.step,
    v: ends.filter((e) => e.start <= i * o.step && e.end > i * o.step).length,
  }));
  return {
    batches,
    now: o.until,
    runEnd: 234,
    inFlight: o.slots,
    completed: ends.filter((e) => e.end <= o.until).length,
    step: o.step,
    active,
    expectedRollouts: o.suite ?? null,
  };
}

type LoopOptions = Parameters<typeof loop>[0];
type Ended = { worker: number; start: number; end: number; d: number };

/** Each slot runs rollouts back to back to the end. */
function slotByslot(o: LoopOptions): Ended[] {
  const u = uniform(o.seed);
  const ends: Ended[] = [];
  for (let s = 0; s < o.slots; s++)
    for (let t = 0, k = 0; t < o.until + 1; k++) {
      const d = o.duration(t, u, k);
      ends.push({ worker: s % o.workers, start: t, end: t + d, d });
      t += d;
    }
  return ends;
}

/** A suite of `suite` rollouts: the slot whose rollout ends first starts the next, until all have started. */
function inStartOrder(o: LoopOptions, suite: number): Ended[] {
  const u = uniform(o.seed);
  const ends: Ended[] = [];
  const next = Array.from({ length: o.slots }, () => 0);
  const ks = Array.from({ length: o.slots }, () => 0);
  for (let started = 0; started < suite; started++) {
    const s = next.indexOf(Math.min(...next));
    const t = next[s] as number;
    if (t >= o.until + 1) break;
    const k = ks[s] as number;
    ks[s] = k + 1;
    const d = o.duration(t, u, k);
    ends.push({ worker: s % o.workers, start: t, end: t + d, d });
    next[s] = t + d;
  }
  return ends;
}

/** A loop's reading: what the estimate reads, and the in-flight gauge and suite size the cohorts read too. */
export type LoopRun = RolloutEstimateInput & {
  active: Array<{ t: number; v: number }>;
  expectedRollouts: number | null;
};

/**
 * A run's verdict as observe.ts builds it (src/analysis/reading.ts): its estimate with trajectory and
 * its start cohorts; `final`: its job ended at `now` (a reference stopped there).
 */
export function readingOf(i: RolloutEstimateInput & Partial<LoopRun>, final = false): VerdictLike {
  const r = decisionReading({ ...i, final });
  return {
    state: r.estimate ? 'stabilising' : 'warming',
    minutes_of_data: i.now,
    run_end_minutes: i.runEnd,
    projected_full_run: r.estimate?.projected_full_run ?? null,
    decision_estimate: r.estimate,
    cohorts: r.cohorts,
  };
}

/** The loop read back at an earlier run-minute `at` (the scrapes up to it). */
export function at(run: LoopRun, minute: number): LoopRun {
  return {
    ...run,
    now: minute,
    batches: run.batches.filter((b) => b.end <= minute + 1e-9),
    completed: run.batches.filter((b) => b.end <= minute + 1e-9).reduce((a, b) => a + b.n, 0),
    active: run.active.filter((p) => p.t <= minute + 1e-9),
  };
}

/** The candidate's verdict from its rollouts, as observe.ts builds it (trajectory included). */
export function verdictOf(i: RolloutEstimateInput): VerdictLike {
  const e = rolloutEstimate(i);
  if (!e) throw new Error('no estimate');
  return {
    state: 'stabilising',
    minutes_of_data: i.now,
    projected_full_run: e.projected_full_run,
    decision_estimate: { ...e, trajectory: estimateTrajectory(i) },
  };
}

/**
 * A twin-like run: 64 rollouts in flight on 4 workers, a congestion that slows the rollouts started
 * at minute 0 by ×2 and fades over 20 minutes, a 15% spread per rollout (uniform), × `factor`, and a
 * drift of `drift` per hour of start time. Read at run-minute `until`.
 */
export function fadingRun(seed: number, until: number, factor = 1, drift = 0): LoopRun {
  return loop({
    slots: 64,
    workers: 4,
    until,
    step: 0.25,
    seed,
    duration: (t, u) =>
      3 * factor * (1 + Math.max(0, 1 - t / 20)) * (1 + (drift * t) / 60) * (0.74 + 0.52 * u()),
  });
}
