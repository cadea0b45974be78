import { describe, expect, it } from 'vitest';
import { apply, type RecordOutcome } from '../../../src/record/apply.js';
import { createRecord, stabilisedValue } from '../../../src/record/model.js';
import { recordProblems } from '../../../src/record/validate.js';
import { predictionLines } from '../../../src/report/final-report.js';
import { decided, EXPERIMENT, OUTCOMES } from '../../fixtures/record/scenario.js';

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

  it('moves current_best only to an accepted candidate decided better (here by the comparison of an older observation)', () => {
    const afterBaseline = apply(fresh(), OUTCOMES[0]!);
    expect(afterBaseline.current_best.topology).toBe('baseline');
    expect(afterBaseline.current_best.stabilized_seconds_per_rollout_full_run).toBeCloseTo(5.2 * 1.01, 6);
    expect(afterBaseline.current_best.decision_reasoning).toContain('first accepted candidate');
    const record = all();
    expect(record.current_best.topology).toBe('renderer-x6');
    // what its comparison says: the baseline's value × its ratio (0.789)
    expect(record.current_best.stabilized_seconds_per_rollout_full_run).toBeCloseTo(5.2 * 1.01 * 0.789, 3);
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
      /^closed without merge \(projected full-run 5\.66 s\/rollout .*; decided worse against the baseline: change \+7\.7%/,
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

// One truth for the best (the CI failure of the demo): the decisions say which candidate is better,
// and current_best follows them, not the verdict's projection they did not read.
describe('current_best follows the decisions', () => {
  const baseline = decided(
    'baseline',
    '2026-12-02T09:00:00Z',
    { projected: 10.0, estimate: 10.1 },
    { state: 'reference', against: 'baseline baseline', change: 0 },
  );
  const best = (outcomes: RecordOutcome[]) => outcomes.reduce(apply, fresh()).current_best;

  it('an accepted candidate decided better than the current best becomes the best, though its projection is not lower', () => {
    // decided 6% faster on the decision estimate; the verdict's projection is 1% slower
    const model = decided(
      'model',
      '2026-12-02T10:00:00Z',
      { projected: 10.1, estimate: 9.5 },
      { state: 'better', against: 'current best baseline', change: -0.06 },
    );
    const record = [baseline, model].reduce(apply, fresh());
    expect(record.runs.map((r) => r.decision.outcome)).toEqual(['accept', 'accept']);
    expect(record.current_best.topology).toBe('model');
    // its figure is what its decision says: the baseline's 10.0 × (1 − 6%), never its projection
    expect(record.current_best.stabilized_seconds_per_rollout_full_run).toBeCloseTo(9.4, 6);
    expect(record.current_best.decision_reasoning).toMatch(
      /^model accepted: 9\.40 s\/rollout vs 10\.00 s\/rollout of baseline; decided better against the baseline \(the current best\): change −6%/,
    );
    expect(recordProblems(record)).toEqual([]);
    expect(apply(record, model)).toEqual(record);
  });

  it('a candidate merged though decided not faster than the best does not displace it, though its projection is lower', () => {
    for (const state of ['worse', 'equivalent', 'not-better'] as const) {
      const merged = decided(
        'merged',
        '2026-12-02T10:00:00Z',
        { projected: 9.0, estimate: 10.05 },
        { state, against: 'current best baseline', change: state === 'worse' ? 0.05 : -0.005 },
      );
      expect(best([baseline, merged]).topology, state).toBe('baseline');
    }
    // `better` by less than min_improvement is shown (and checked) as equivalent: not a new best either
    const small = decided(
      'small',
      '2026-12-02T10:00:00Z',
      { projected: 9.0, estimate: 9.95 },
      { state: 'better', against: 'current best baseline', change: -0.01 },
    );
    expect(best([baseline, small]).topology).toBe('baseline');
  });

  it('two candidates decided better than an older reference, not against each other: the lower decided figure wins, in any merge order', () => {
    const a = decided(
      'a',
      '2026-12-02T10:00:00Z',
      { projected: 9.0, estimate: 9.4 },
      { state: 'better', against: 'current best baseline', change: -0.07 },
    );
    const b = decided(
      'b',
      '2026-12-02T10:05:00Z',
      { projected: 9.2, estimate: 9.2 },
      { state: 'better', against: 'current best baseline', change: -0.09 },
    );
    for (const order of [
      [baseline, a, b],
      [baseline, b, a],
      [b, a, baseline],
      [a, baseline, b],
    ]) {
      const current = best(order);
      expect(current.topology, order.map((o) => o.candidate).join(' ')).toBe('b');
      expect(current.decision_reasoning).toMatch(
        /b accepted: 9\.10 s\/rollout vs 9\.30 s\/rollout of a; not decided against each other, so chosen by their decided figures/,
      );
    }
    // the next round is decided against that best, and its winner takes over
    const c = decided(
      'c',
      '2026-12-02T11:00:00Z',
      { projected: 9.3, estimate: 8.8 },
      { state: 'better', against: 'current best b', change: -0.04 },
    );
    expect(best([baseline, a, b, c]).topology).toBe('c');
    expect(best([c, b, baseline, a]).topology).toBe('c');
  });

  it('the same candidate recorded again (closed unmerged, then merged; or re-run) names one best', () => {
    const model = decided(
      'model',
      '2026-12-02T10:00:00Z',
      { projected: 10.1, estimate: 9.5 },
      { state: 'better', against: 'current best baseline', change: -0.06 },
    );
    const closed: RecordOutcome = { ...model, kind: 'rejected', reason: 'closed' };
    const afterClose = [baseline, closed].reduce(apply, fresh());
    expect(afterClose.current_best.topology).toBe('baseline');
    const merged = apply(afterClose, model);
    expect(merged.current_best.topology).toBe('model');
    expect(apply(merged, model)).toEqual(merged);
    // re-recorded as rejected (a revert): the baseline is the best again, and the reasoning says why
    const reverted = apply(merged, closed);
    expect(reverted.current_best.topology).toBe('baseline');
    expect(reverted.current_best.decision_reasoning).toContain('model was re-recorded as rejected');
    expect(apply(reverted, closed)).toEqual(reverted);
  });
});
