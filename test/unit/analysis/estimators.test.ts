import { describe, expect, it } from 'vitest';
import {
  combineRates,
  completionRate,
  driftOf,
  harmonicCycle,
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
