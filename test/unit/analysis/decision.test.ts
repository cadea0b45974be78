import { describe, expect, it } from 'vitest';
import {
  csRadius,
  decideCandidate,
  decisionOptions,
  gpuMinutes,
  leadingCandidate,
  pruneByLeader,
  savingsText,
  shouldStopOnDecision,
  type VerdictLike,
  withGpuMinutes,
} from '../../../src/analysis/decision.js';

/** A verdict whose projected value has a 95% interval of ±`rel` (relative). */
const v = (
  value: number,
  rel: number,
  minutes = 30,
  state: VerdictLike['state'] = 'stabilising',
): VerdictLike => ({
  state,
  minutes_of_data: minutes,
  warmup_end_minutes: 12,
  projected_full_run: {
    value,
    low: value * Math.exp(-rel),
    high: value * Math.exp(rel),
  },
});
const base = (rel = 0.01) => ({ name: 'baseline', verdict: v(3, rel) });

describe('the confidence sequence', () => {
  it('is wider than one look’s 1.96 s and grows with s', () => {
    for (const s of [0.002, 0.01, 0.03, 0.1]) expect(csRadius(s)).toBeGreaterThan(1.96 * s);
    expect(csRadius(0.02)).toBeLessThan(csRadius(0.04));
    expect(csRadius(0)).toBe(0);
  });
  it('covers a zero difference at every look of a Gaussian random walk in ≥ 95% of runs (repeated looks)', () => {
    let seed = 3;
    const gauss = () => {
      seed = (seed * 16807) % 2147483647;
      const u = seed / 2147483647;
      seed = (seed * 16807) % 2147483647;
      const w = seed / 2147483647;
      return Math.sqrt(-2 * Math.log(u + 1e-12)) * Math.cos(2 * Math.PI * w);
    };
    let everWrong = 0;
    let naiveWrong = 0;
    const runs = 400;
    for (let r = 0; r < runs; r++) {
      let sum = 0;
      let wrong = false;
      let naive = false;
      for (let n = 1; n <= 60; n++) {
        sum += 0.05 * gauss(); // each look adds one batch of information
        const est = sum / n;
        const s = 0.05 / Math.sqrt(n);
        if (Math.abs(est) > csRadius(s)) wrong = true;
        if (Math.abs(est) > 1.96 * s) naive = true;
      }
      if (wrong) everWrong++;
      if (naive) naiveWrong++;
    }
    expect(everWrong / runs).toBeLessThan(0.05);
    expect(naiveWrong / runs).toBeGreaterThan(0.15); // why one look's interval is not enough
  });
});

describe('decideCandidate', () => {
  it('a clearly slower candidate is worse long before its own value is precise', () => {
    const d = decideCandidate(v(3.6, 0.06), base(), { minImprovement: 0.02 });
    expect(d.state).toBe('worse');
    expect(d.relative_change?.low).toBeGreaterThan(0);
    expect(d.decided_at_minutes).toBe(30);
    expect(d.reference).toEqual({ role: 'run', name: 'baseline', pr: null });
  });
  it('names the reference in its evidence by its label, and in the decision as a structured reference', () => {
    const d = decideCandidate(v(3.6, 0.06), {
      ...base(),
      label: 'the baseline',
      reference: { role: 'baseline', name: 'baseline', pr: null },
    });
    expect(d.reference).toEqual({ role: 'baseline', name: 'baseline', pr: null });
    expect(d.evidence.join(' ')).toContain('slower than the baseline');
    expect(d.evidence.join(' ')).not.toContain('baseline baseline');
  });
  it('a clearly faster candidate is better (beyond min_improvement)', () => {
    expect(decideCandidate(v(2.6, 0.02), base(), { minImprovement: 0.02 }).state).toBe('better');
  });
  it('faster but not surely by min_improvement: measuring, with a forecast', () => {
    const d = decideCandidate(v(2.9, 0.02), base(), { minImprovement: 0.02 });
    expect(d.state).toBe('measuring');
    expect(d.expected_minutes_to_decision).toBeGreaterThan(30);
  });
  it('a precise tie is equivalent within min_improvement', () => {
    expect(decideCandidate(v(3.01, 0.003), base(0.003), { minImprovement: 0.02 }).state).toBe('equivalent');
    // the same tie with a 0.5% margin is not settled as a tie, but it cannot be 0.5% faster
    expect(decideCandidate(v(3.01, 0.003), base(0.003), { minImprovement: 0.005 }).state).toBe('not-better');
  });
  it('a candidate that cannot be min_improvement faster is not-better long before it is equivalent (futility)', () => {
    // +1% with ±0.6% per run: the change's sequence is about [−1%, +3%]; not settled as a tie,
    // and it cannot win by 2%
    const d = decideCandidate(v(3.03, 0.006), base(0.006), {
      minImprovement: 0.02,
    });
    expect(d.state).toBe('not-better');
    expect(d.relative_change?.low).toBeGreaterThan(-0.02);
    expect(d.relative_change?.high).toBeGreaterThan(0.02);
    expect(d.evidence.join(' ')).toContain('not faster by 2% or more than baseline');
    expect(shouldStopOnDecision([d]).stop).toBe(true);
    // the same estimate 1% faster could still win: measuring, with a forecast
    const maybe = decideCandidate(v(2.97, 0.006), base(0.006), {
      minImprovement: 0.02,
    });
    expect(maybe.state).toBe('measuring');
    expect(maybe.expected_minutes_to_decision).toBeGreaterThan(30);
  });
  it('a decision once reached is final (kept on later looks)', () => {
    const first = decideCandidate(v(3.6, 0.06), base(), {});
    const later = decideCandidate(v(3.05, 0.2), base(), { previous: first });
    expect(later).toEqual(first);
  });
  it('no reference or an unusable verdict: measuring, with the reason', () => {
    expect(decideCandidate(v(3, 0.01), null).state).toBe('measuring');
    expect(decideCandidate({ state: 'warming', projected_full_run: null }, base()).state).toBe('measuring');
    expect(decideCandidate(v(3, 0.01), base(), { isReference: true }).state).toBe('reference');
  });
});

describe('stopping and GPU-minutes', () => {
  const worse = decideCandidate(v(3.6, 0.06), base(), {});
  const measuring = decideCandidate(v(3.0, 0.2, 20), base(), {});
  it('stops a candidate worse than any reference; not while measuring; never a reference; not when off', () => {
    expect(shouldStopOnDecision([worse, measuring]).stop).toBe(true);
    expect(shouldStopOnDecision([measuring]).stop).toBe(false);
    expect(shouldStopOnDecision([]).stop).toBe(false);
    expect(shouldStopOnDecision([worse], { stopWhenDecided: false }).stop).toBe(false);
    const ref = decideCandidate(v(3, 0.01), base(), { isReference: true });
    expect(shouldStopOnDecision([ref, worse]).stop).toBe(false);
  });
  it('GPU-minutes used and saved when stopped on the decision', () => {
    expect(
      gpuMinutes({
        gpus: 8,
        minutesRunning: 30,
        runEndMinutes: 239,
        stopped: true,
      }),
    ).toEqual({
      used: 240,
      saved: 1672,
      savedVsSeed: 160,
    });
    expect(
      gpuMinutes({
        gpus: 8,
        minutesRunning: 30,
        runEndMinutes: 239,
        stopped: false,
      }).saved,
    ).toBeNull();
    const d = withGpuMinutes(worse, {
      gpus: 8,
      minutesRunning: 35,
      runEndMinutes: 239,
      stopped: true,
    });
    expect(d.gpu_minutes_saved).toBe(8 * 204);
  });
  it("counts the savings against the seed's 45-minute read, not only the job's wall time", () => {
    // decided at run-minute 29 of a 4-hour job: 5 minutes of start-up + 29, against the seed's 5 + 45
    const d = withGpuMinutes(worse, {
      gpus: 8,
      minutesRunning: 34,
      runEndMinutes: 239,
      stopped: true,
    });
    expect(d.gpu_minutes_saved_vs_seed).toBe(8 * 16);
    expect(savingsText(d)).toBe(
      "128 GPU-minutes saved against the seed's 45-minute read (1640 against the job's wall time)",
    );
    // a decision that took longer than the seed's read says so
    const late = withGpuMinutes(worse, {
      gpus: 8,
      minutesRunning: 65,
      runEndMinutes: 239,
      stopped: true,
    });
    expect(late.gpu_minutes_saved_vs_seed).toBe(-120);
    expect(savingsText(late)).toMatch(/^120 GPU-minutes more than the seed's 45-minute read/);
    expect(savingsText({ gpu_minutes_saved: null })).toBeNull();
  });
});

describe('the full-run guard on verdicts alone (on `better` and `equivalent` only)', () => {
  const drifting = (value: number, slope: number) => ({
    ...v(value, 0.01, 30, 'drifting'),
    drift: { slope_relative_per_hour: slope },
  });
  it('a drifting candidate that is clearly slower is stopped as worse', () => {
    const d = decideCandidate(drifting(3.6, 0.2), base());
    expect(d.state).toBe('worse');
    expect(shouldStopOnDecision([d]).stop).toBe(true);
  });
  it('a drifting candidate within ±min_improvement is not-better, never equivalent', () => {
    const d = decideCandidate(drifting(3.0, 0.2), base(0.005), {
      minImprovement: 0.02,
    });
    expect(d.state).toBe('not-better');
    expect(d.evidence.join(' ')).toContain("the candidate drifts (the detector's test)");
  });
  it('a drifting candidate that looks faster is only the provisional winner, and keeps running', () => {
    const d = decideCandidate(drifting(2.5, -0.15), base());
    expect(d.state).toBe('better-at-equal-age');
    expect(d.full_run?.guard).toBe('not-measured');
    expect(shouldStopOnDecision([d]).stop).toBe(false);
  });
  it('a drifting reference holds back better too, and the claim names the drift it ruled out', () => {
    const ref = { name: 'baseline', verdict: drifting(3, 0.1) };
    expect(decideCandidate(v(2.5, 0.01), ref).state).toBe('better-at-equal-age');
    const ok = decideCandidate(v(2.5, 0.01), base());
    expect(ok.state).toBe('better');
    expect(ok.full_run?.guard).toBe('settled');
  });
});

describe('the pruner (pruneByLeader, leadingCandidate)', () => {
  const lead = {
    name: 'a',
    reference: { role: 'leading candidate' as const, name: 'a', pr: null },
    label: 'the leading candidate `a`',
    verdict: v(3.0, 0.01),
  };
  it('a candidate clearly slower than the leader is not-better against it: it cannot win', () => {
    const d = pruneByLeader(v(3.3, 0.01), lead, { minImprovement: 0.02 });
    expect(d?.state).toBe('not-better');
    expect(d?.reference).toEqual({ role: 'leading candidate', name: 'a', pr: null });
    expect(d?.evidence.join(' ')).toContain('not 2% faster than the leading candidate `a`');
    expect(shouldStopOnDecision([d as never]).stop).toBe(true);
  });
  it('a drifting candidate that cannot beat the leader is pruned too', () => {
    expect(
      pruneByLeader(v(3.3, 0.01, 60, 'drifting'), lead, {
        minImprovement: 0.02,
      })?.state,
    ).toBe('not-better');
  });
  it('one that may still beat the leader by min_improvement is not pruned (null)', () => {
    expect(pruneByLeader(v(2.9, 0.02), lead, { minImprovement: 0.02 })).toBeNull();
    expect(pruneByLeader(v(3.0, 0.05), lead, { minImprovement: 0.02 })).toBeNull();
  });
  it('the leader is the fastest usable projection, and only when faster than the reference', () => {
    const runs = [
      { name: 'a', verdict: v(3.1, 0.02) },
      { name: 'b', verdict: v(2.9, 0.02) },
      { name: 'c', verdict: v(2.5, 0.02, 30, 'warming') }, // not usable
      { name: 'd', verdict: v(2.4, 0.02, 30, 'drifting') }, // drifting: never the leader
    ];
    expect(leadingCandidate(runs, v(3.2, 0.01))?.name).toBe('b');
    expect(leadingCandidate(runs, null)?.name).toBe('b');
    expect(leadingCandidate(runs, v(2.8, 0.01))).toBeNull();
    expect(leadingCandidate([], v(2.8, 0.01))).toBeNull();
  });
});

describe('the boundary: alpha spending (default) or always-valid', () => {
  it('alpha spending settles a change the always-valid sequence leaves open', () => {
    // 3% slower, with a log-scale s.e. of ≈ 1.1%: one-sided ≈ 2.5 s.e. clears it, 3.1 s.e. two-sided does not
    const c = v(3.09, 0.0155, 60);
    const ref = { name: 'baseline', verdict: v(3, 0.0155, 60) };
    const spend = decideCandidate(c, ref);
    expect(spend.state).toBe('worse');
    expect(spend.method).toContain('Pocock-type');
    expect(spend.evidence.join(' ')).toMatch(/one-sided boundary 2\.\d+ s\.e\./);
    const av = decideCandidate(c, ref, { boundary: 'always-valid' });
    expect(av.state).not.toBe('worse');
    expect(av.relative_change?.low).toBeLessThan(0);
    expect(av.method).toContain('always-valid');
  });
  it('the small-sample guard: no claim on less than 5 steady minutes, however wide the gap', () => {
    const early = { ...v(4, 0.01, 15), warmup_end_minutes: 12 };
    const d = decideCandidate(early, base());
    expect(d.state).toBe('measuring');
    expect(d.evidence.join(' ')).toContain('small-sample guard: 3 of 5 run-minutes of data');
  });
  it('at max_decision_minutes every decision ends (the closed design), with the error it costs', () => {
    // +1% ± 3%: open at the horizon; settled not-better by the futility rule (equivalent is only
    // ever the sequence's own claim)
    const tie = decideCandidate(
      v(3.03, 0.03, 120),
      { name: 'baseline', verdict: v(3, 0.03, 120) },
      {
        maxDecisionMinutes: 120,
      },
    );
    expect(tie.state).toBe('not-better');
    expect(tie.evidence.join(' ')).toContain('closed at the horizon');
    expect(tie.evidence.join(' ')).toMatch(/truly 2% faster reads this slow or slower with probability \d/);
    // 3% faster but not shown 2% faster by the horizon: not-better
    const near = decideCandidate(
      v(2.91, 0.03, 130),
      { name: 'baseline', verdict: v(3, 0.03, 130) },
      {
        maxDecisionMinutes: 120,
      },
    );
    expect(near.state).toBe('not-better');
    // the same reading before the horizon stays open until its forecast may close it (run-minute 30)
    expect(decideCandidate(v(3.03, 0.03, 25), { name: 'baseline', verdict: v(3, 0.03, 25) }).state).toBe(
      'measuring',
    );
    const futile = decideCandidate(v(3.03, 0.03, 60), { name: 'baseline', verdict: v(3, 0.03, 60) });
    expect(futile.state).toBe('not-better');
    expect(futile.evidence.join(' ')).toContain('closed by the forecast');
  });
  it('decisionOptions maps experiment.yaml keys with the defaults', () => {
    expect(decisionOptions({})).toEqual({
      minImprovement: 0.02,
      boundary: 'alpha-spending',
      maxDecisionMinutes: 120,
    });
    expect(
      decisionOptions({ decision_boundary: 'always-valid', max_decision_minutes: 60, min_improvement: 0.05 }),
    ).toEqual({
      minImprovement: 0.05,
      boundary: 'always-valid',
      maxDecisionMinutes: 60,
    });
  });
  it('the pruner splits its error over the possible leaders: with more of them it needs a wider margin', () => {
    const lead = { name: 'a', verdict: v(3.0, 0.0155, 60) };
    const c = v(3.04, 0.0155, 60); // 1.3% slower: not-better needs the interval above −2%
    expect(pruneByLeader(c, lead, { leaders: 1 })?.state).toBe('not-better');
    expect(pruneByLeader(c, lead, { leaders: 1 })?.evidence.join(' ')).toContain(
      'α split over 1 possible leader)',
    );
    expect(pruneByLeader(c, lead, { leaders: 50 })).toBeNull();
  });
});

describe('the decision reads the estimate from rollouts', () => {
  const est = (value: number, rel: number) => ({
    projected_full_run: { value, low: value * Math.exp(-rel), high: value * Math.exp(rel) },
    first_wave_end_minutes: 0.25,
    steady_rollouts: 400,
    censored_rollouts: 64,
    evidence: 'decision estimate from rollouts: …',
  });
  it('decides while the verdict still warms up (its own warm-up rule), and says what the estimate used', () => {
    const cand: VerdictLike = {
      state: 'warming',
      minutes_of_data: 20,
      projected_full_run: null,
      decision_estimate: est(3.3, 0.01),
    };
    const ref = {
      name: 'baseline',
      verdict: { ...v(3, 0.05, 20, 'warming'), decision_estimate: est(3, 0.01) },
    };
    const d = decideCandidate(cand, ref);
    expect(d.state).toBe('worse');
    expect(d.evidence.join(' ')).toContain(
      'estimates: the candidate: 400 rollouts after the first wave (from run-minute 0.3), 64 in flight censored; baseline: 400 rollouts',
    );
  });
  it('prefers the estimate to the verdict’s projection, and falls back to it, saying so', () => {
    const cand = { ...v(3.6, 0.01, 40), decision_estimate: est(3.0, 0.01) };
    expect(decideCandidate(cand, base(0.01)).state).not.toBe('worse');
    const plain = decideCandidate(v(3.6, 0.01, 40), base(0.01));
    expect(plain.state).toBe('worse');
    expect(plain.evidence.join(' ')).toContain(
      "the candidate: the verdict's projection (no rollout estimate yet)",
    );
  });
  it('an unhealthy run is never decided, estimate or not', () => {
    const cand = { ...v(3.6, 0.01, 40, 'unhealthy'), decision_estimate: est(3.6, 0.01) };
    expect(decideCandidate(cand, base()).state).toBe('measuring');
  });
});
