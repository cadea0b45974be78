// The round's reference lives as long as its decisions need it (issue 43): src/analysis/
// reference-lifetime.ts, the one rule the campaign bench, the autopilot, the monitor and the demo call.
import { describe, expect, it } from 'vitest';
import {
  closeWithReference,
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

  it('a candidate pointing at a gain names the need even when another is only young', () => {
    const need = referenceNeeded(
      [
        { name: 'tie', decision: measuring(0.005, 60) },
        { name: 'gain', decision: measuring(-0.03, null) },
      ],
      options(20),
    );
    expect(need).toMatchObject({ needed: true, by: 'gain', why: 'points-at-gain' });
  });

  it('stops once no open decision would change what the round decides with more reference data', () => {
    // decided, or past 30 run-minutes without pointing at a gain, even one forecast to settle
    // `equivalent` (no winner either way): those are closed with it
    const open = [
      { name: 'decided', decision: pruned },
      { name: 'tie', decision: measuring(0.001, null) },
      { name: 'settles', decision: measuring(0.004, 60) },
      { name: 'far', decision: measuring(-0.005, 400) },
    ];
    expect(referenceNeeded(open, options(35)).needed).toBe(false);
    for (const c of open.slice(1)) expect(closeWithReference(c.decision, 0.02)).toBe(true);
    expect(closeWithReference(measuring(-0.05), 0.02)).toBe(false);
    expect(closeWithReference(pruned, 0.02)).toBe(false);
    expect(referenceNeeded([], options(5)).needed).toBe(false);
  });

  it('runs while a candidate has no interval yet, or is younger than 30 run-minutes', () => {
    expect(needOf(null, options(5))).toBe('no-interval');
    expect(needOf(measuring(0.01, 'none'), options(5))).toBe('no-interval');
    expect(needOf(measuring(0.01, 80), options(25))).toBe('young');
    expect(needOf(measuring(0.01, 80), options(30))).toBeNull();
    expect(needOf({ state: 'better' }, options(10))).toBeNull();
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
