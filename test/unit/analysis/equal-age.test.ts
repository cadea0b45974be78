// Issue 31: the equal-run-age reference, an error basis the error's own estimate needs, a standard
// error that does not count the fading congestion as noise, the rollout-level drift guard, and the
// closed design at the horizon. Each test fails on the code before it for the reason named.
import { describe, expect, it } from 'vitest';
import { decideCandidate, referenceAtAge, type VerdictLike } from '../../../src/analysis/decision.js';
import { rolloutEstimate } from '../../../src/analysis/rollouts.js';
import { fadingRun, loop, verdictOf } from '../../support/rollout-loop.js';

/** A precise reference read at `minutes`, at `value` (no rollout estimate: a plain projection). */
const plain = (value: number, minutes: number, rel = 0.002): VerdictLike => ({
  state: 'stable',
  minutes_of_data: minutes,
  projected_full_run: { value, low: value * Math.exp(-rel), high: value * Math.exp(rel) },
});

describe('the reference at equal run age (a)', () => {
  // a reference that slows 6%/h, read over its whole 120 minutes; its trajectory is what the
  // record keeps. A candidate equal to it, read at 15 minutes, is a tie, never `better`.
  const slowing = (i: number) => 3 * (1 + (0.06 * (15 + i)) / 60);
  const recorded: VerdictLike = {
    ...plain(slowing(105), 120),
    decision_estimate: {
      projected_full_run: plain(slowing(105), 120).projected_full_run as NonNullable<
        VerdictLike['projected_full_run']
      >,
      first_wave_end_minutes: 4,
      steady_rollouts: 3000,
      censored_rollouts: 64,
      evidence: 'recorded',
      trajectory: {
        from_minute: 15,
        step_minutes: 1,
        values: Array.from({ length: 106 }, (_, i) => slowing(i)),
        log_se: Array.from({ length: 106 }, () => 0.002),
        basis_from_minute: 15,
      },
    },
  };
  const candidate = { ...plain(slowing(0), 15, 0.004), state: 'stabilising' as const, warmup_end_minutes: 4 };
  it('compares the candidate with the reference as it was at the candidate’s run-minute', () => {
    const at = referenceAtAge(recorded, 15);
    expect(at.projection?.value).toBeCloseTo(slowing(0), 6);
    expect(at.gapMinutes).toBe(0);
    const d = decideCandidate(candidate, { name: 'baseline', verdict: recorded });
    expect(d.state).not.toBe('better');
    expect(Math.abs(d.relative_change?.value ?? 1)).toBeLessThan(0.005);
    expect(d.evidence.join(' ')).toContain('as it was at run-minute 15 (equal run age, from its trajectory)');
  });
  it('without a trajectory (an older record) the age difference widens the interval: no `better`', () => {
    const older = { ...recorded, decision_estimate: null };
    const d = decideCandidate(candidate, { name: 'baseline', verdict: older });
    expect(d.state).not.toBe('better');
    expect(d.evidence.join(' ')).toContain('105 minutes from the candidate');
  });
});

describe('the error basis (b)', () => {
  // a slow run read from one rollout per slot after the first wave: 64 rollouts that all started at
  // once and all ran 10% fast (a shared condition). Their spread says nothing about that.
  const slow = loop({
    slots: 64,
    workers: 4,
    until: 25,
    step: 0.25,
    seed: 7,
    duration: (_t, u, k) =>
      k === 0 ? 10 * (0.95 + 0.1 * u()) : k === 1 ? 9 * (0.97 + 0.06 * u()) : 10 * (0.97 + 0.06 * u()),
  });
  it('makes no claim on fewer independent blocks of starts than the error needs, and says why', () => {
    const v = verdictOf(slow);
    expect(v.decision_estimate?.error_basis?.enough).toBe(false);
    // the reference is the same run's truth: a tie (its steady rollouts last 10 minutes)
    const truth = (60 * 234) / (slow.completed + (64 / 10) * (234 - 25));
    const d = decideCandidate(v, { name: 'baseline', verdict: plain(truth, 25) });
    expect(d.state).toBe('measuring');
    expect(d.evidence.join(' ')).toContain('error basis too thin');
  });
});

describe('the standard error and the full-run guard (c)', () => {
  // congestion that fades over the first 20 minutes slows every rollout started in it: a transient,
  // not noise. 15% independent noise per rollout.
  const fading = fadingRun;
  it('does not count the fading congestion as noise: the interval stays near the independent rollouts’ one', () => {
    const i = fading(3, 45);
    const e = rolloutEstimate(i);
    expect(e).not.toBeNull();
    if (!e) return;
    const future = (64 / e.mean_duration_minutes) * (234 - 45);
    const share = future / (i.completed + future);
    const iid = (0.15 / Math.sqrt(e.steady_rollouts)) * share; // U(0.74, 1.26): 15% s.d.
    const half = Math.log(e.projected_full_run.high / e.projected_full_run.value);
    expect(half).toBeLessThan(1.96 * iid * 1.6);
    expect(e.error_basis.enough).toBe(true);
  });
  it('holds `better` back on a candidate whose rollout durations drift 30%/h (truly worse over the run)', () => {
    const i = fading(5, 40, 0.85, 0.3);
    const v = verdictOf(i);
    // the reference: the same congestion, no drift, read at the same age; the shared transient
    // cancels in the difference of their drifts
    const r = verdictOf(fading(6, 40));
    const slope = (x: VerdictLike) => x.decision_estimate?.drift?.slope_relative_per_hour ?? Number.NaN;
    expect(slope(v) - slope(r)).toBeGreaterThan(0);
    const d = decideCandidate(v, { name: 'baseline', verdict: r });
    expect(d.state).not.toBe('better');
    expect(d.state).not.toBe('equivalent');
    expect(d.state).toBe('better-at-equal-age');
    expect(d.evidence.join(' ')).toContain('full-run guard: the candidate drifts');
  });
  it('a faster candidate without drift is called better once the full-run guard settles it too', () => {
    const d = decideCandidate(verdictOf(fading(5, 70, 0.85)), {
      name: 'baseline',
      verdict: verdictOf(fading(6, 70)),
    });
    expect(d.state).toBe('better');
    expect(d.full_run?.guard).toBe('settled');
    expect(d.full_run?.change?.high).toBeLessThan(-0.02);
  });
});

describe('the monitor reads a recorded reference with its verdict (a)', () => {
  it('keeps the record run’s age and trajectory, so the candidate is compared at equal run age', async () => {
    const { referenceOf } = await import('../../../src/judge/reference.js');
    const value = { value: 3.3, low: 3.29, high: 3.31 };
    const trajectory = {
      from_minute: 10,
      step_minutes: 1,
      values: Array.from({ length: 111 }, (_, i) => 3 * (1 + (0.06 * (10 + i)) / 60)),
      log_se: Array.from({ length: 111 }, () => 0.002),
      basis_from_minute: 10,
      drift_slope: Array.from({ length: 111 }, () => 0.06),
      drift_se: Array.from({ length: 111 }, () => 0.01),
    };
    const verdict: VerdictLike = {
      state: 'stable',
      minutes_of_data: 120,
      projected_full_run: value,
      decision_estimate: {
        projected_full_run: value,
        first_wave_end_minutes: 3,
        steady_rollouts: 3000,
        censored_rollouts: 64,
        evidence: 'recorded',
        trajectory,
      },
    };
    const exp = { best: { name: 'fast', value, verdict } } as unknown as Parameters<typeof referenceOf>[0];
    const ref = referenceOf(exp, []);
    expect(ref?.verdict.minutes_of_data).toBe(120);
    const candidate = {
      ...plain(3 * (1 + 0.015), 15, 0.004),
      state: 'stabilising' as const,
      warmup_end_minutes: 4,
    };
    const d = decideCandidate(candidate, { name: 'current best fast', verdict: ref?.verdict as VerdictLike });
    expect(d.state).not.toBe('better');
    expect(d.evidence.join(' ')).toContain('as it was at run-minute 15');
  });
});
