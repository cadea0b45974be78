// The round's reference lives as long as its decisions need it (issue 43): src/analysis/
// reference-lifetime.ts, the one rule the campaign bench, the autopilot, the monitor and the demo call.
import { describe, expect, it } from 'vitest';
import {
  type LifetimeDecision,
  needOf,
  pointsAtGain,
  referenceNeeded,
} from '../../../src/analysis/reference-lifetime.js';

/** A decision still measuring; `eta` 'none': no interval yet (no forecast at all). */
const measuring = (value: number, eta: number | null | 'none' = null): LifetimeDecision => ({
  state: 'measuring',
  relative_change: { value, low: value - 0.04, high: value + 0.04 },
  ...(eta === 'none' ? {} : { expected_minutes_to_decision: eta }),
});
const pruned: LifetimeDecision = {
  state: 'not-better',
  relative_change: { value: 0.05, low: 0.01, high: 0.09 },
};
const options = (minute: number) => ({ minImprovement: 0.02, minute, horizonMinutes: 120 });

describe('how long the reference beside a round runs', () => {
  it('keeps running while the leader points at a gain, after the others were pruned at run-minute 15', () => {
    // the others are decided at 15 (pruned by the leader); the leader's guard still holds it open
    for (const minute of [20, 40, 60, 115]) {
      const need = referenceNeeded(
        [
          { name: 'leader', decision: measuring(-0.2, 25) },
          { name: 'other-1', decision: pruned },
          { name: 'other-2', decision: pruned },
        ],
        options(minute),
      );
      expect(need).toMatchObject({ needed: true, by: 'leader', why: 'points-at-gain' });
    }
  });

  it('a candidate pointing at a gain names the need even when another is only forecast to settle', () => {
    const need = referenceNeeded(
      [
        { name: 'tie', decision: measuring(0.005, 60) },
        { name: 'gain', decision: measuring(-0.03, null) },
      ],
      options(30),
    );
    expect(need).toMatchObject({ needed: true, by: 'gain', why: 'points-at-gain' });
  });

  it('stops once no open decision would change with more reference data', () => {
    // decided, or forecast to stay unsettled without pointing at a gain (the futility stop ends those)
    const need = referenceNeeded(
      [
        { name: 'decided', decision: pruned },
        { name: 'tie', decision: measuring(0.001, null) },
        { name: 'far', decision: measuring(-0.005, 400) },
      ],
      options(35),
    );
    expect(need.needed).toBe(false);
    expect(referenceNeeded([], options(5)).needed).toBe(false);
  });

  it('runs while a candidate has no interval yet, or is forecast to settle within the horizon', () => {
    expect(needOf(null, options(5))).toBe('no-interval');
    expect(needOf(measuring(0.01, 'none'), options(5))).toBe('no-interval');
    expect(needOf(measuring(0.01, 80), options(30))).toBe('forecast-to-settle');
    expect(needOf(measuring(0.01, 130), options(30))).toBeNull();
    expect(needOf({ state: 'better' }, options(30))).toBeNull();
  });

  it('never past the horizon, where every decision closes', () => {
    expect(referenceNeeded([{ name: 'gain', decision: measuring(-0.2, 25) }], options(120)).needed).toBe(
      false,
    );
  });

  it('a gain is a change of at most −min_improvement ÷ 2', () => {
    expect(pointsAtGain(measuring(-0.01), 0.02)).toBe(true);
    expect(pointsAtGain(measuring(-0.0099), 0.02)).toBe(false);
    expect(pointsAtGain(null, 0.02)).toBe(false);
  });
});
