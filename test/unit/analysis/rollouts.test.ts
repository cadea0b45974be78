import { describe, expect, it } from 'vitest';
import { kaplanMeierMean, reconstructRollouts, rolloutEstimate } from '../../../src/analysis/rollouts.js';

/** A seeded uniform (Park–Miller): the same run on every test. */
function uniform(seed: number) {
  let x = seed;
  return () => {
    x = (x * 16807) % 2147483647;
    return x / 2147483647;
  };
}

/**
 * A closed loop of `slots` slots on `workers` workers: every slot starts at minute 0; the first wave
 * is slowed by `congestion` (× its duration), later rollouts last `mean` × U(0.7, 1.3) minutes.
 * Returns each worker's duration-histogram sum and count scraped every `step` minutes, the
 * rollouts' true mean duration after the first wave, and the count of completions by `until`.
 */
function closedLoop(o: {
  slots: number;
  workers: number;
  mean: number;
  congestion: number;
  until: number;
  step: number;
  seed: number;
}) {
  const u = uniform(o.seed);
  const ends: Array<{ worker: number; end: number; d: number }> = [];
  for (let s = 0; s < o.slots; s++) {
    let t = 0;
    let first = true;
    while (t < o.until + 30) {
      const d = o.mean * (0.7 + 0.6 * u()) * (first ? o.congestion : 1);
      ends.push({ worker: s % o.workers, end: t + d, d });
      t += d;
      first = false;
    }
  }
  const series = (w: number, f: (e: { d: number }) => number) => ({
    labels: { worker_id: String(w) },
    points: Array.from({ length: Math.floor(o.until / o.step) + 1 }, (_, i) => {
      const t = i * o.step;
      return { t, v: ends.filter((e) => e.worker === w && e.end <= t).reduce((a, e) => a + f(e), 0) };
    }),
  });
  const ws = Array.from({ length: o.workers }, (_, w) => w);
  return {
    sum: ws.map((w) => series(w, (e) => 60 * e.d)),
    count: ws.map((w) => series(w, () => 1)),
    completed: ends.filter((e) => e.end <= o.until).length,
  };
}

describe('rollouts from the per-worker duration histogram', () => {
  it('reconstructs batches: end at the scrape, mean duration, start = end − duration', () => {
    const sum = [
      {
        labels: { worker_id: 'a' },
        points: [
          { t: 0, v: 0 },
          { t: 1, v: 0 },
          { t: 1.25, v: 90 },
          { t: 1.5, v: 270 },
        ],
      },
    ];
    const count = [
      {
        labels: { worker_id: 'a' },
        points: [
          { t: 0, v: 0 },
          { t: 1, v: 0 },
          { t: 1.25, v: 1 },
          { t: 1.5, v: 3 },
        ],
      },
    ];
    const b = reconstructRollouts(sum, count);
    expect(b).toEqual([
      { worker: 'a', end: 1.25, n: 1, duration: 1.5, start: -0.25 },
      { worker: 'a', end: 1.5, n: 2, duration: 1.5, start: 0 },
    ]);
  });
  it('a counter reset starts the worker again (no negative batch)', () => {
    const sum = [
      {
        labels: { worker_id: 'a' },
        points: [
          { t: 0, v: 60 },
          { t: 1, v: 0 },
          { t: 2, v: 60 },
        ],
      },
    ];
    const count = [
      {
        labels: { worker_id: 'a' },
        points: [
          { t: 0, v: 1 },
          { t: 1, v: 0 },
          { t: 2, v: 1 },
        ],
      },
    ];
    expect(reconstructRollouts(sum, count)).toEqual([{ worker: 'a', end: 2, n: 1, duration: 1, start: 1 }]);
  });
  it('Kaplan–Meier: censored ages count as "at least", not as missing or as ended', () => {
    expect(
      kaplanMeierMean(
        [
          { t: 1, n: 1 },
          { t: 3, n: 1 },
        ],
        [],
      ),
    ).toBeCloseTo(2, 12);
    // one of three at risk censored at 2: S drops to 2/3 at 1, then to 0 at 3 → 1 + 2/3 × 2
    expect(
      kaplanMeierMean(
        [
          { t: 1, n: 1 },
          { t: 3, n: 1 },
        ],
        [2],
      ),
    ).toBeCloseTo(1 + (2 / 3) * 2, 12);
  });
  it('drops the first wave, censors the rollouts in flight, and finds the steady mean within its interval', () => {
    const o = { slots: 48, workers: 4, mean: 2, congestion: 2.5, until: 20, step: 0.25, seed: 5 };
    const run = closedLoop(o);
    const batches = reconstructRollouts(run.sum, run.count);
    const e = rolloutEstimate({
      batches,
      now: o.until,
      runEnd: 234,
      inFlight: o.slots,
      completed: run.completed,
      step: o.step,
    });
    expect(e).not.toBeNull();
    if (!e) return;
    expect(e.first_wave_rollouts).toBe(48);
    expect(e.censored_rollouts).toBeGreaterThan(40);
    // the steady mean is 2 minutes; the congested first wave (5 minutes) would pull a plain mean up
    expect(Math.abs(e.mean_duration_minutes - 2) / 2).toBeLessThan(0.04);
    const truth = (60 * 234) / (run.completed + (o.slots / 2) * (234 - o.until));
    expect(e.projected_full_run.low).toBeLessThanOrEqual(truth * 1.01);
    expect(e.projected_full_run.high).toBeGreaterThanOrEqual(truth * 0.99);
    expect(e.evidence).toContain('48 of the first wave dropped');
  });
  it('too few rollouts after the first wave, or no in-flight count: no estimate', () => {
    const o = { slots: 8, workers: 2, mean: 2, congestion: 2.5, until: 7, step: 0.25, seed: 2 };
    const run = closedLoop(o);
    const batches = reconstructRollouts(run.sum, run.count);
    expect(
      rolloutEstimate({
        batches,
        now: o.until,
        runEnd: 234,
        inFlight: 8,
        completed: run.completed,
        step: 0.25,
      }),
    ).toBeNull();
    expect(
      rolloutEstimate({
        batches,
        now: o.until,
        runEnd: 234,
        inFlight: null,
        completed: run.completed,
        step: 0.25,
      }),
    ).toBeNull();
  });
});
