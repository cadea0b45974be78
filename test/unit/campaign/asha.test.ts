// The campaign bench's ASHA is Ray Tune's ASHAScheduler (async_hyperband.py's _Bracket): checked on
// the example of Ray's own docstring, and on the bench's settings (grace 15, reduction factor 3,
// max_t 120 run-minutes: rungs at 15 and 45).
import { describe, expect, it } from 'vitest';
import { AshaScheduler, percentile } from '../../../bench/campaign/methods.js';

describe("ASHA as Ray Tune's ASHAScheduler runs it", () => {
  it("follows Ray's docstring example (_Bracket(1, 10, 2, 0), reward maximised = value minimised)", () => {
    const b = new AshaScheduler(1, 10, 2);
    expect(b.onResult('t1', 1, -2)).toBe('continue');
    expect(b.onResult('t2', 1, -4)).toBe('continue');
    // cutoff of the rung is 3 (the 50th percentile of 2 and 4): a reward of 1 is below it
    expect(b.onResult('t3', 1, -1)).toBe('stop');
  });

  it('has rungs at 15 and 45 run-minutes and stops every trial at max_t', () => {
    const s = new AshaScheduler(15, 120, 3);
    expect(s.onResult('a', 10, 5)).toBe('continue'); // before the first rung
    expect(s.onResult('a', 15, 5)).toBe('continue'); // first at the rung
    expect(s.onResult('b', 15, 4)).toBe('continue');
    expect(s.onResult('c', 15, 6)).toBe('stop'); // slower than the best third so far
    expect(s.onResult('a', 20, 9)).toBe('continue'); // already recorded at 15, not yet at 45
    expect(s.onResult('a', 45, 3)).toBe('continue');
    expect(s.onResult('a', 120, 3)).toBe('stop');
  });

  it("computes numpy's linear percentile", () => {
    expect(percentile([2, 4], 50)).toBe(3);
    expect(percentile([1, 2, 3, 4], 100 * (1 - 1 / 3))).toBeCloseTo(3, 9);
  });
});
