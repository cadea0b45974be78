import { describe, expect, it } from 'vitest';
import {
  combineRates,
  completionRate,
  driftOf,
  harmonicCycle,
  harmonicPart,
  increase,
  lag1,
  littleRate,
} from '../../../src/analysis/estimators.js';
import { linearFit, monotone, type Sample, sumCounters } from '../../../src/analysis/series.js';

/** A closed loop of `L` slots with fixed duration `d` minutes, all started at 0 (perfectly synchronized waves). */
function waves(L: number, d: number, until: number, step = 1 / 12) {
  const n: Sample[] = [];
  const sum: Sample[] = [];
  for (let t = 0; t <= until + 1e-9; t += step) {
    const k = Math.floor(t / d + 1e-9);
    n.push({ t, v: L * k });
    sum.push({ t, v: L * k * d * 60 });
  }
  return { n, sum, count: n };
}

describe('increase of a cumulative counter', () => {
  it('is the difference, and survives a counter reset', () => {
    const s: Sample[] = [
      { t: 0, v: 0 },
      { t: 1, v: 10 },
      { t: 2, v: 20 },
      { t: 3, v: 5 }, // restarted worker: counted 5 since
      { t: 4, v: 15 },
    ];
    expect(increase(s, 0, 2)).toBe(20);
    expect(increase(monotone(s), 0, 4)).toBe(35);
  });
  it('sumCounters keeps a restarted worker monotone and ignores a gap in another', () => {
    const a: Sample[] = [
      { t: 0, v: 0 },
      { t: 1, v: 10 },
      { t: 2, v: 2 },
      { t: 3, v: 12 },
    ];
    const b: Sample[] = [
      { t: 0, v: 0 },
      { t: 3, v: 30 },
    ];
    const s = sumCounters([a, b]);
    expect(s.map((p) => p.v)).toEqual([0, 20, 32, 52]);
  });
});

describe('completion-rate estimator', () => {
  it('recovers a constant rate and never gives a zero-width interval on perfectly synchronized waves', () => {
    // 64 slots, 4-minute rollouts: 16 rollouts/min; batches of 8 minutes hold exactly two waves
    const { n } = waves(64, 4, 60);
    const e = completionRate(n, 12, 60, 8, 64);
    expect(e?.rate).toBeCloseTo(16, 5);
    expect(e?.se).toBeGreaterThan(0); // the floor: rollouts cut at the window's ends
  });
  it('widens for waves a batch does not average out (autocorrelated batch means)', () => {
    const { n } = waves(64, 7, 120);
    const e = completionRate(n, 14, 119, 5, 64) as NonNullable<ReturnType<typeof completionRate>>;
    expect(Math.abs(e.rate / (64 / 7) - 1)).toBeLessThan(1.96 * (e.se / e.rate) + 0.01);
    expect(e.se / e.rate).toBeGreaterThan(0.02);
  });
  it('needs two batches', () => {
    expect(completionRate(waves(64, 4, 20).n, 12, 20, 5, 64)).toBeUndefined();
  });
});

describe("Little's law estimator", () => {
  it('is exact on synchronized waves where counting per batch swings', () => {
    const w = waves(64, 7, 120);
    const l = littleRate(w.sum, w.count, { value: 64, source: 'capacity' }, 14, 119, 5);
    expect(l?.rate).toBeCloseTo(64 / 7, 3);
    expect((l?.se ?? 0) / (l?.rate ?? 1)).toBeGreaterThan(0); // never zero width
    expect((l?.se ?? 1) / (l?.rate ?? 1)).toBeLessThan(0.01);
    const c = completionRate(w.n, 14, 119, 5, 64);
    const both = combineRates(c, l);
    expect(both?.method).toBe('littles-law');
  });
  it('is dropped when it disagrees with the completions (durations not covering a slot’s busy time)', () => {
    const w = waves(64, 4, 90);
    // the histogram says 3-minute rollouts while slots complete every 4 minutes
    const sum = w.sum.map((p) => ({ t: p.t, v: (p.v * 3) / 4 }));
    const l = littleRate(sum, w.count, { value: 64, source: 'capacity' }, 12, 88, 4);
    const c = completionRate(w.n, 12, 88, 8, 64);
    const both = combineRates(c, l);
    expect(both?.method).toBe('completions');
    expect(both?.notes.join(' ')).toMatch(/disagrees/);
  });
});

/** Seeded uniform and standard normal draws. */
function rand(seed: number) {
  let a = seed >>> 0;
  const u = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { u, gauss: () => Math.sqrt(-2 * Math.log(u() + 1e-12)) * Math.cos(2 * Math.PI * u()) };
}

/**
 * A closed loop of `L` slots whose rollouts last `d` minutes × (1 + `amp` sin(2πt/`period`)) at their
 * start × log-normal noise: the duration histogram's cumulative _sum (seconds) and _count every 5 s.
 */
function cyclicLoop(o: {
  L: number;
  d: number;
  amp: number;
  period: number;
  noise: number;
  until: number;
  seed: number;
}) {
  const r = rand(o.seed);
  const ends: Array<{ t: number; d: number }> = [];
  for (let slot = 0; slot < o.L; slot++)
    for (let t = r.u() * o.d; t < o.until; ) {
      const d = o.d * (1 + o.amp * Math.sin((2 * Math.PI * t) / o.period)) * Math.exp(o.noise * r.gauss());
      t += d;
      ends.push({ t, d });
    }
  ends.sort((a, b) => a.t - b.t);
  const sum: Sample[] = [];
  const count: Sample[] = [];
  let i = 0;
  let S = 0;
  for (let t = 0; t <= o.until + 1e-9; t += 1 / 12) {
    while (i < ends.length && (ends[i] as { t: number }).t <= t) S += 60 * (ends[i++] as { d: number }).d;
    sum.push({ t, v: S });
    count.push({ t, v: i });
  }
  return { sum, count, ends };
}

describe("Little's law on a cycle (harmonic)", () => {
  const inFlight = { value: 64, source: 'active-rollouts' as const };
  it('takes a significant cycle out of the interval: narrower, still covering the long-run rate', () => {
    let covered = 0;
    let narrower = 0;
    const seeds = [1, 2, 3, 4, 5, 6, 7, 8];
    for (const seed of seeds) {
      const run = cyclicLoop({ L: 64, d: 3, amp: 0.2, period: 10, noise: 0.1, until: 800, seed });
      // the truth: completions per minute over a long stretch
      const truth = run.ends.filter((e) => e.t > 100 && e.t <= 800).length / 700;
      const h = littleRate(run.sum, run.count, inFlight, 15, 60, 1, { harmonic: true });
      const plain = littleRate(run.sum, run.count, inFlight, 15, 60, 1);
      expect(h?.cycle?.periodMinutes).toBeGreaterThan(9);
      expect(h?.cycle?.periodMinutes).toBeLessThan(11);
      expect(h?.notes.join(' ')).toMatch(/cycle with a period of (9|10|11)\.\d min/);
      if (Math.abs((h?.rate as number) - truth) <= 1.96 * (h?.se as number)) covered++;
      if ((h?.se as number) < 0.5 * (plain?.se as number)) narrower++;
    }
    expect(covered).toBeGreaterThanOrEqual(7);
    expect(narrower).toBe(seeds.length);
  });
  it('finds no cycle in plain noise (the estimate is the plain one)', () => {
    for (const seed of [11, 12, 13, 14, 15, 16, 17, 18, 19, 20]) {
      const run = cyclicLoop({ L: 64, d: 3, amp: 0, period: 10, noise: 0.15, until: 90, seed });
      const h = littleRate(run.sum, run.count, inFlight, 15, 60, 1, { harmonic: true });
      expect(h?.cycle).toBeUndefined();
      expect(h).toEqual(littleRate(run.sum, run.count, inFlight, 15, 60, 1));
    }
  });
  it('harmonicPart: the period of a sinusoid in noise, with the trend left in; none in a pure trend', () => {
    const r = rand(5);
    const t = Array.from({ length: 60 }, (_, i) => 1000 + i);
    const y = t.map((x) => 0.05 * x + Math.sin((2 * Math.PI * x) / 12) + 0.3 * r.gauss());
    const h = harmonicPart(t, y, 3, 30);
    expect(h?.period).toBeGreaterThan(11);
    expect(h?.period).toBeLessThan(13);
    expect(h?.amplitude).toBeGreaterThan(0.8);
    expect(h?.p).toBeLessThan(1e-3);
    // the fitted part is the sinusoid only: it averages out over whole periods, the trend is not in it
    expect(Math.abs((h?.fitted ?? []).reduce((a, b) => a + b, 0) / 60)).toBeLessThan(0.1);
    expect(
      harmonicPart(
        t,
        t.map((x) => 0.05 * x + 0.3 * r.gauss()),
        3,
        30,
      ),
    ).toBeUndefined();
  });
});

describe('drift and cycles', () => {
  it('a linear trend of the per-batch rate is read as its slope per hour', () => {
    const perBatch = Array.from({ length: 12 }, (_, i) => ({
      t: 20 + 5 * i,
      rate: 10 * (1 - (0.2 * (5 * i)) / 60),
    }));
    const d = driftOf(perBatch);
    expect(d?.slopeRelPerHour).toBeLessThan(-0.15);
  });
  it('a sinusoid of known period and amplitude is found and significant; white noise is not', () => {
    let seed = 7;
    const rand = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647 - 0.5;
    };
    const cyc = Array.from({ length: 120 }, (_, i) => ({
      t: i,
      v: 10 * (1 + 0.2 * Math.sin((2 * Math.PI * i) / 10)) + rand(),
    }));
    const found = harmonicCycle(cyc, 5);
    expect(found?.period).toBeGreaterThan(9);
    expect(found?.period).toBeLessThan(11);
    expect(found?.amplitude).toBeGreaterThan(0.15);
    expect(found?.p).toBeLessThan(1e-6);
    const noise = Array.from({ length: 120 }, (_, i) => ({ t: i, v: 10 + 2 * rand() }));
    expect(harmonicCycle(noise, 5)?.p ?? 1).toBeGreaterThan(1e-3);
  });
  it("one harmonic fit: the cycle test reads the same fit as Little's law (period, F test, amplitude)", () => {
    // a cycle riding on a trend: a fit that detrends first and one that fits the trend jointly differ
    const r = rand(9);
    const y = Array.from({ length: 90 }, (_, i) => ({
      t: i / 2,
      v: 10 + 0.05 * i + 1.5 * Math.sin((2 * Math.PI * i) / 23) + r.gauss(),
    }));
    const cycle = harmonicCycle(y, 3) as NonNullable<ReturnType<typeof harmonicCycle>>;
    const part = harmonicPart(
      y.map((p) => p.t),
      y.map((p) => p.v),
      3,
      (y.at(-1)?.t as number) / 3,
      1,
    ) as NonNullable<ReturnType<typeof harmonicPart>>;
    expect(cycle.period).toBe(part.period);
    expect(cycle.periodsTried).toBe(part.tried);
    expect(cycle.p).toBe(part.p);
    expect(cycle.amplitude).toBeCloseTo(part.amplitude / (y.reduce((a, p) => a + p.v, 0) / y.length), 12);
  });
  it('excluded periods (the completion waves) are not tried', () => {
    const y = Array.from({ length: 120 }, (_, i) => ({
      t: i,
      v: 10 * (1 + 0.3 * Math.sin((2 * Math.PI * i) / 8)),
    }));
    const r = harmonicCycle(y, 5, (p) => Math.abs(p / 8 - 1) < 0.2);
    expect(r === undefined || Math.abs(r.period / 8 - 1) >= 0.2).toBe(true);
  });
  it('the slope’s standard error widens when neighbouring batches are alike (waves), not for independent ones', () => {
    // no trend; a slow swing (period 12 batches) makes the residuals strongly autocorrelated
    const swing = Array.from({ length: 24 }, (_, i) => ({
      t: 2.5 * i,
      rate: 10 + Math.sin((2 * Math.PI * i) / 12),
    }));
    const naive = linearFit(
      swing.map((b) => b.t),
      swing.map((b) => b.rate),
    );
    const d = driftOf(swing) as { seRelPerHour: number };
    const mu = 10;
    // ρ₁ ≈ 0.87 is clipped to 0.8: the standard error is widened by √9 = 3
    expect(d.seRelPerHour / ((naive.seB * 60) / mu)).toBeCloseTo(3, 1);
    // alternating residuals (ρ₁ < 0): not narrowed below the independent-batches figure
    const alt = Array.from({ length: 24 }, (_, i) => ({ t: 2.5 * i, rate: 10 + (i % 2 ? 0.5 : -0.5) }));
    const naiveAlt = linearFit(
      alt.map((b) => b.t),
      alt.map((b) => b.rate),
    );
    expect((driftOf(alt) as { seRelPerHour: number }).seRelPerHour).toBeCloseTo((naiveAlt.seB * 60) / 10, 6);
  });
  it('lag-1 autocorrelation of an alternating sequence is negative', () => {
    expect(lag1([1, -1, 1, -1, 1, -1])).toBeLessThan(-0.5);
  });
});
