// A closed loop of rollouts with a known truth, scraped into the per-worker duration histogram the
// decision's estimate reads (src/analysis/rollouts.ts): the equal-run-age and reference tests' runs.
import type { VerdictLike } from '../../src/analysis/decision.js';
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
}): RolloutEstimateInput {
  const u = uniform(o.seed);
  const ends: Array<{ worker: number; end: number; d: number }> = [];
  for (let s = 0; s < o.slots; s++)
    for (let t = 0, k = 0; t < o.until + 1; k++) {
      const d = o.duration(t, u, k);
      ends.push({ worker: s % o.workers, end: t + d, d });
      t += d;
    }
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
  return {
    batches,
    now: o.until,
    runEnd: 234,
    inFlight: o.slots,
    completed: ends.filter((e) => e.end <= o.until).length,
    step: o.step,
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
export function fadingRun(seed: number, until: number, factor = 1, drift = 0): RolloutEstimateInput {
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
