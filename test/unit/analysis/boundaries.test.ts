import { describe, expect, it } from 'vitest';
import {
  boundaryAt,
  lookIndex,
  pocockSpending,
  spendingBoundaries,
} from '../../../src/analysis/boundaries.js';

/** A seeded standard normal (Park–Miller and Box–Muller): the same paths on every run. */
function gaussian(seed: number) {
  let x = seed;
  const next = () => {
    x = (x * 16807) % 2147483647;
    return x / 2147483647;
  };
  return () => Math.sqrt(-2 * Math.log(next() + 1e-12)) * Math.cos(2 * Math.PI * next());
}

describe('Pocock-type alpha spending (Lan–DeMets)', () => {
  it('spends nothing at 0, all of α at the horizon, and more early than linear', () => {
    expect(pocockSpending(0.05, 0)).toBe(0);
    expect(pocockSpending(0.05, 1)).toBeCloseTo(0.05, 12);
    expect(pocockSpending(0.05, 0.25)).toBeGreaterThan(0.05 * 0.25);
  });
  it('boundaries start at the first look’s tail quantile, fall and stay above one look’s 1.645', () => {
    const b = spendingBoundaries(120, 0.05);
    expect(b).toHaveLength(120);
    expect(b[0]).toBeCloseTo(3.19, 2); // P(Z > z1) = α · ln(1 + (e − 1)/120)
    for (let k = 1; k < b.length; k++)
      expect(b[k] as number).toBeLessThanOrEqual((b[k - 1] as number) + 2e-3);
    expect(b[119]).toBeGreaterThan(1.645);
    expect(b[119]).toBeLessThan(2.4);
  });
  it('a null random walk looked at every step crosses in ≈ α of runs (exact, not conservative)', () => {
    const b = spendingBoundaries(120, 0.05);
    const g = gaussian(11);
    const runs = 4000;
    let crossed = 0;
    for (let r = 0; r < runs; r++) {
      let s = 0;
      for (let k = 1; k <= 120; k++) {
        s += g();
        if (s / Math.sqrt(k) > (b[k - 1] as number)) {
          crossed++;
          break;
        }
      }
    }
    // α = 0.05; 4000 runs have a binomial s.e. of 0.0034
    expect(crossed / runs).toBeGreaterThan(0.04);
    expect(crossed / runs).toBeLessThan(0.06);
  });
  it('maps run-minutes to the look by steady information, and refuses past the horizon', () => {
    expect(lookIndex({ minutes: 10, warmupEnd: 10, maxMinutes: 120 })?.k).toBe(1);
    expect(lookIndex({ minutes: 65, warmupEnd: 10, maxMinutes: 120 })?.k).toBe(60);
    expect(lookIndex({ minutes: 120, warmupEnd: 10, maxMinutes: 120 })?.k).toBe(120);
    expect(lookIndex({ minutes: 121, warmupEnd: 10, maxMinutes: 120 })).toBeNull();
    expect(boundaryAt({ minutes: 121, warmupEnd: 10, maxMinutes: 120 }, 0.05)).toBeNull();
    expect(boundaryAt({ minutes: 65, warmupEnd: 10, maxMinutes: 120 }, 0.05)).toBeCloseTo(
      spendingBoundaries(120, 0.05)[59] as number,
      12,
    );
  });
});
