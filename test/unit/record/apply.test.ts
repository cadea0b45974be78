import { describe, expect, it } from 'vitest';
import { apply, type RecordOutcome } from '../../../src/record/apply.js';
import { createRecord, stabilisedValue } from '../../../src/record/model.js';
import { recordProblems } from '../../../src/record/validate.js';
import { predictionLines } from '../../../src/report/final-report.js';
import { EXPERIMENT, OUTCOMES } from '../../fixtures/record/scenario.js';

const fresh = () => createRecord(EXPERIMENT);
const all = () => OUTCOMES.reduce(apply, fresh());

describe('apply', () => {
  it('adds one run per candidate, in order, and keeps the record schema-valid', () => {
    const record = all();
    expect(record.runs.map((r) => [r.name, r.status, r.decision.outcome])).toEqual([
      ['baseline', 'accepted', 'accept'],
      ['renderer-x6', 'accepted', 'accept'],
      ['workers-4', 'rejected', 'reject'],
      ['driver-x12', 'failed', 'reject'],
    ]);
    expect(recordProblems(record)).toEqual([]);
  });

  it('is idempotent: applying an outcome twice equals applying it once', () => {
    for (const outcome of OUTCOMES) {
      const once = apply(all(), outcome);
      expect(apply(once, outcome)).toEqual(once);
    }
    expect(OUTCOMES.reduce(apply, all())).toEqual(all());
  });

  it('does not modify its input', () => {
    const record = fresh();
    const copy = structuredClone(record);
    apply(record, OUTCOMES[0]!);
    expect(record).toEqual(copy);
  });

  it('commutes across candidates: any merge order gives the same runs and the same best', () => {
    const forward = all();
    const backward = [...OUTCOMES].reverse().reduce(apply, fresh());
    const byName = (r: typeof forward) => Object.fromEntries(r.runs.map((run) => [run.name, run]));
    expect(byName(backward)).toEqual(byName(forward));
    expect(backward.current_best.topology).toBe(forward.current_best.topology);
    expect(backward.current_best.stabilized_seconds_per_rollout_full_run).toBe(
      forward.current_best.stabilized_seconds_per_rollout_full_run,
    );
  });

  it('moves current_best only to a better accepted candidate, using the projected full-run value', () => {
    const afterBaseline = apply(fresh(), OUTCOMES[0]!);
    expect(afterBaseline.current_best.topology).toBe('baseline');
    expect(afterBaseline.current_best.stabilized_seconds_per_rollout_full_run).toBeCloseTo(5.2 * 1.01, 6);
    expect(afterBaseline.current_best.decision_reasoning).toContain('first accepted candidate');
    const record = all();
    expect(record.current_best.topology).toBe('renderer-x6');
    expect(record.current_best.stabilized_seconds_per_rollout_full_run).toBeCloseTo(4.1 * 1.01, 6);
    expect(record.current_best.decision_reasoning).toMatch(
      /renderer-x6 accepted \(pull request #2\): 4\.14 s\/rollout vs 5\.25 s\/rollout of baseline/,
    );
    // A worse candidate merged later does not displace the best.
    const worse: RecordOutcome = { ...OUTCOMES[2]!, candidate: 'worse-merged', kind: 'accepted' };
    expect(apply(record, worse).current_best.topology).toBe('renderer-x6');
  });

  it('falls back to the stable value and then to the full-run reading when no projection exists', () => {
    const obs = structuredClone(OUTCOMES[0]!.observation!);
    obs.verdict.projected_full_run = null;
    let run = apply(fresh(), { ...OUTCOMES[0]!, observation: obs }).runs[0]!;
    expect(stabilisedValue(run)).toBeCloseTo(5.2, 6);
    obs.verdict.value = null;
    run = apply(fresh(), { ...OUTCOMES[0]!, observation: obs }).runs[0]!;
    expect(stabilisedValue(run)).toBeCloseTo(5.2 * 1.03, 6);
  });

  it('records a reject reason from the comment, else from the verdict', () => {
    const record = all();
    expect(record.runs[2]!.decision.reason).toBe(
      'runtime idle fraction fell to 41%: the event loop became the contention point',
    );
    const noReason = apply(fresh(), { ...OUTCOMES[2]!, reason: undefined });
    expect(noReason.runs[0]!.decision.reason).toMatch(
      /^closed without merge \(projected full-run 5\.66 s\/rollout .*; worse than baseline \(ratio 1\.077/,
    );
  });

  it('records a failure with its classified reason, the likely fix as next step, and the telemetry gap', () => {
    const run = all().runs[3]!;
    expect(run.failures).toHaveLength(1);
    expect(run.decision.reason).toBe('gpu-oom: CUDA out of memory on GPU 4 (driver replica 11)');
    expect(run.decision.next).toMatch(/Keep 8 driver replicas/);
    expect(run.stable_metrics?.telemetry_quality?.gaps).toEqual([
      'metrics unavailable: the run failed before its telemetry appeared',
    ]);
  });

  it('merges learnings without duplicates', () => {
    const extra: RecordOutcome = {
      candidate: 'baseline',
      kind: 'accepted',
      learnings: [
        {
          topic: 'other',
          learning: 'A second learning.',
          suggested_skill_update: null,
          source: null,
          author: null,
        },
        { ...OUTCOMES[0]!.learnings![0]! },
      ],
    };
    const record = apply(all(), extra);
    expect(record.runs[0]!.skill_reflections!.map((l) => l.learning)).toEqual([
      'The renderer queue depth max equals its n_concurrent_rollouts when it is the bottleneck.',
      'A second learning.',
    ]);
    expect(apply(record, extra)).toEqual(record);
  });

  it('re-recording the best candidate as rejected hands current_best to the next best accepted one', () => {
    const record = apply(all(), { candidate: 'renderer-x6', kind: 'rejected', reason: 'reverted' });
    expect(record.current_best.topology).toBe('baseline');
    expect(record.current_best.decision_reasoning).toContain('renderer-x6 was re-recorded as rejected');
    expect(recordProblems(record)).toEqual([]);
  });

  it('keeps the prediction beside the measured value: its error and whether the interval held it', () => {
    const predicted = {
      ...OUTCOMES[1]!,
      prediction: {
        seconds_per_rollout: 4.0,
        low: 3.8,
        high: 4.3,
        level: 0.9,
        gain: 0.23,
        parent: 'baseline',
        parent_seconds_per_rollout: 5.25,
        calibrated_on: ['baseline'],
      },
    };
    const record = [OUTCOMES[0]!, predicted].reduce(apply, fresh());
    const run = record.runs.find((r) => r.name === predicted.candidate)!;
    const value = stabilisedValue(run)!;
    expect(run.prediction).toMatchObject({
      seconds_per_rollout: 4.0,
      measured_seconds_per_rollout: value,
      covered: true,
    });
    expect(run.prediction?.error).toBeCloseTo(value / 4.0 - 1, 4);
    expect(recordProblems(record)).toEqual([]);
    // re-recording keeps it; a failed run has no measured value
    expect(apply(record, predicted).runs.find((r) => r.name === predicted.candidate)).toEqual(run);
    const failed = apply(fresh(), { ...predicted, kind: 'failed' }).runs[0]!;
    expect(failed.prediction).toMatchObject({
      measured_seconds_per_rollout: null,
      error: null,
      covered: null,
    });
    // the final report shows the calibration error
    const report = predictionLines(record).join('\n');
    expect(report).toMatch(
      /calibration error [\d.]+% median, [\d.]+% RMS over 1 predicted run\(s\); 1 of 1 inside their 90% interval/,
    );
    expect(report).toContain(`| \`${predicted.candidate}\` | 4.00 |`);
  });
});
