// The campaign bench's goals: each printed MET, MISSED (by how much) or UNKNOWN when a figure is absent
// (Optuna not installed); never a silent pass. CAMPAIGN_STRICT=1 fails the bench on any goal not MET.
import { describe, expect, it } from 'vitest';
import { judgeGoals, strictExitCode, summaryLine } from '../../../bench/campaign/goals.js';

const figures = {
  topo: 34,
  manual: 26.7,
  random: 98.3,
  asha: 94.8,
  optuna: 100 as number | undefined,
  right: 1,
  oomRuns: 0,
  predictionError: 0.009,
  coverage: 1,
  floor: 4.1,
};

describe('the campaign goals', () => {
  it('says by how much a goal is missed, against the information floor', () => {
    const [cost, others, right, oom, prediction] = judgeGoals(figures);
    expect(cost!.status).toBe('MISSED');
    expect(cost!.text).toContain('missed by 27.3 GPU-h (5.09× the goal)');
    expect(cost!.text).toContain('the information floor 4.1 GPU-h is 15.4%');
    expect(others!.status).toBe('MET');
    expect(right!.status).toBe('MET');
    expect(oom!.status).toBe('MET');
    expect(prediction!.status).toBe('MET');
    const bad = judgeGoals({ ...figures, right: 0.9, oomRuns: 2, coverage: 0.7 });
    expect(bad[2]!.text).toContain('missed by 5.0 points');
    expect(bad[3]!.text).toContain('missed by 2 run(s)');
    expect(bad[4]!.text).toContain('missed by 10.0 points of coverage');
  });

  it('meets the cost goal at 25% of the manual rule', () => {
    expect(judgeGoals({ ...figures, topo: 6.6 })[0]!.status).toBe('MET');
  });

  it('judges nothing against an absent Optuna: UNKNOWN, and the summary line says absent', () => {
    const f = { ...figures, optuna: undefined };
    const goals = judgeGoals(f);
    expect(goals[1]!.status).toBe('UNKNOWN');
    expect(goals[1]!.text).toContain('Optuna absent');
    expect(summaryLine('twin-balanced', f)).toBe(
      'campaign twin-balanced: topo 34.0 GPU-h (right 100%), manual 26.7, random 98.3, asha 94.8, optuna absent, oom-runs 0, prediction-error 0.9% (coverage 100%)',
    );
  });

  it('CAMPAIGN_STRICT fails the bench unless every goal is MET', () => {
    const met = judgeGoals({ ...figures, topo: 5 });
    expect(strictExitCode(met, true)).toBe(0);
    expect(strictExitCode(judgeGoals(figures), true)).toBe(1);
    expect(strictExitCode(judgeGoals({ ...figures, topo: 5, optuna: undefined }), true)).toBe(1);
    expect(strictExitCode(judgeGoals(figures), false)).toBe(0);
  });
});
