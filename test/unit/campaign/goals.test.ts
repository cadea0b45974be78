// The campaign bench's goals (issue 33): the yardstick is GPU-hours per right conclusion (spent ÷
// share right), each goal printed MET, MISSED (by how much) or UNKNOWN when a figure is absent
// (Optuna not installed); never a silent pass. CAMPAIGN_STRICT=1 fails the bench on any goal not MET.
import { describe, expect, it } from 'vitest';
import {
  judgeGoals,
  perRight,
  perRightInterval,
  strictExitCode,
  summaryLine,
} from '../../../bench/campaign/goals.js';

const figures = {
  topo: 20,
  manual: 60,
  random: 150,
  asha: 140,
  optuna: 130 as number | undefined,
  right: 1,
  oomRuns: 0,
  predictionError: 0.009,
  coverage: 1,
  floor: 14,
};

describe('the campaign goals', () => {
  it('a cheap wrong answer is no bar: GPU-hours per right conclusion is spent ÷ share right', () => {
    // the seed's rule at 10 GPU-h but right 1 time in 20 costs 200 GPU-h per right conclusion
    const rule = perRight(Array(20).fill(10), [true, ...Array(19).fill(false)]);
    expect(rule).toBeCloseTo(200, 6);
    expect(perRight([30, 10], [true, true])).toBe(20);
    expect(perRight([5, 5], [false, false])).toBe(Number.POSITIVE_INFINITY);
    const i = perRightInterval([30, 10, 20, 20], [true, true, true, false]);
    expect(i.low).toBeLessThanOrEqual(perRight([30, 10, 20, 20], [true, true, true, false]));
    expect(i.high).toBeGreaterThanOrEqual(perRight([30, 10, 20, 20], [true, true, true, false]));
  });

  it('says by how much a goal is missed: 40% of the rule (issue 43), 1.5× the floor, below the search tools', () => {
    const [rule, floor, others, right, oom, prediction] = judgeGoals({ ...figures, topo: 40 });
    expect(rule!.status).toBe('MISSED');
    expect(rule!.text).toContain('missed by 16.0 GPU-h (1.67× the goal)');
    expect(floor!.status).toBe('MISSED');
    expect(floor!.text).toContain('missed by 19.0 GPU-h');
    expect(others!.status).toBe('MET');
    expect(right!.status).toBe('MET');
    expect(oom!.status).toBe('MET');
    expect(prediction!.status).toBe('MET');
    const bad = judgeGoals({ ...figures, right: 0.9, oomRuns: 2, coverage: 0.7 });
    expect(bad[3]!.text).toContain('missed by 5.0 points');
    expect(bad[4]!.text).toContain('missed by 2 run(s)');
    expect(bad[5]!.text).toContain('missed by 10.0 points of coverage');
    expect(judgeGoals(figures).every((g) => g.status === 'MET')).toBe(true);
  });

  it('judges nothing against an absent Optuna: UNKNOWN, and the summary line says absent', () => {
    const f = { ...figures, optuna: undefined };
    const goals = judgeGoals(f);
    expect(goals[2]!.status).toBe('UNKNOWN');
    expect(goals[2]!.text).toContain('Optuna absent');
    expect(summaryLine('twin-balanced', f)).toBe(
      'campaign twin-balanced: topo 20.0 GPU-h per right (right 100%), manual 60.0, random 150.0, asha 140.0, optuna absent, floor 14.0, oom-runs 0, prediction-error 0.9% (coverage 100%)',
    );
    expect(summaryLine('x', { ...f, manual: Number.POSITIVE_INFINITY })).toContain('manual ∞,');
  });

  it('CAMPAIGN_STRICT fails the bench unless every goal is MET', () => {
    expect(strictExitCode(judgeGoals(figures), true)).toBe(0);
    expect(strictExitCode(judgeGoals({ ...figures, topo: 40 }), true)).toBe(1);
    expect(strictExitCode(judgeGoals({ ...figures, optuna: undefined }), true)).toBe(1);
    expect(strictExitCode(judgeGoals({ ...figures, topo: 40 }), false)).toBe(0);
  });
});
