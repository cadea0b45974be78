// Issue 43 item 2: a decision whose whole interval lies below −min_improvement is never `not-better`.
// The drift guard held such a leader while its reference's slope stayed frozen from the reference's
// young minutes; at the horizon the closed design settled it `not-better`, and the campaign counted
// the topology as tried. Now it is closed `faster-drift-not-ruled-out` (neutral, final): at the
// horizon, and at once when the reference's data ended before the candidate's age.
import { describe, expect, it } from 'vitest';
import { decideCandidate, shouldStopOnDecision, type VerdictLike } from '../../../src/analysis/decision.js';

/** A verdict whose projected value has a 95% interval of ±`rel` (relative). */
const v = (value: number, rel: number, minutes: number, state: VerdictLike['state'] = 'stabilising') => ({
  state,
  minutes_of_data: minutes,
  warmup_end_minutes: 12,
  projected_full_run: { value, low: value * Math.exp(-rel), high: value * Math.exp(rel) },
});
const drifting = (value: number, minutes: number): VerdictLike => ({
  ...v(value, 0.01, minutes, 'drifting'),
  drift: { slope_relative_per_hour: 0.12 },
});

describe('a faster candidate a guard holds (issue 43 item 2)', () => {
  it('is never settled not-better at the horizon: faster-drift-not-ruled-out, final', () => {
    // 17% faster, its interval far below −2%, but the reference drifts: the guard holds `better`
    const d = decideCandidate(
      v(2.5, 0.01, 125),
      { name: 'baseline', verdict: drifting(3, 125) },
      {
        maxDecisionMinutes: 120,
      },
    );
    expect(d.relative_change!.high).toBeLessThan(-0.02);
    expect(d.state).toBe('faster-drift-not-ruled-out');
    expect(d.evidence.join(' ')).toContain('the horizon');
    expect(shouldStopOnDecision([d]).stop).toBe(true);
  });

  it('is closed at once when its reference ended before its age (a frozen slope), not held to the horizon', () => {
    const reference = { name: 'baseline', verdict: drifting(3, 40), ended: true };
    const d = decideCandidate(v(2.5, 0.01, 60), reference, { maxDecisionMinutes: 120 });
    expect(d.state).toBe('faster-drift-not-ruled-out');
    expect(d.decided_at_minutes).toBe(60);
    expect(d.evidence.join(' ')).toContain("the reference's data end at run-minute 40");
    // a reference that still runs keeps it open (the provisional winner): the guard is re-judged as it measures
    expect(decideCandidate(v(2.5, 0.01, 40), { name: 'baseline', verdict: drifting(3, 40) }).state).toBe(
      'better-at-equal-age',
    );
  });

  it('a near-tie open at the horizon is still not-better (its interval crosses −min_improvement)', () => {
    const near = decideCandidate(
      v(2.91, 0.03, 130),
      { name: 'baseline', verdict: v(3, 0.03, 130) },
      {
        maxDecisionMinutes: 120,
      },
    );
    expect(near.state).toBe('not-better');
  });
});
