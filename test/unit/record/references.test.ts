// The monitor decides against the record's baseline and current best (projected s/rollout with interval).
import { describe, expect, it } from 'vitest';
import { baselineRun, bestRun, referenceOf } from '../../../src/record/model.js';
import { exampleRecord } from '../../fixtures/record/example.js';
import { repoRoot } from '../../support/run-action.js';

describe('record references', () => {
  it('gives the baseline and the current best at their projected values', () => {
    const record = exampleRecord(repoRoot);
    expect(referenceOf(baselineRun(record))).toEqual({
      name: 'baseline',
      value: record.runs[0]?.verdict?.projected_full_run,
      verdict: record.runs[0]?.verdict,
    });
    const best = referenceOf(bestRun(record));
    expect(best?.name).toBe('renderer-split');
    expect(best?.value.value).toBeLessThan(referenceOf(baselineRun(record))?.value.value ?? 0);
  });

  it('gives no reference for a run without a value, or no run', () => {
    const record = exampleRecord(repoRoot);
    const run = {
      ...record.runs[0]!,
      verdict: { ...record.runs[0]!.verdict!, value: null, projected_full_run: null },
    };
    expect(referenceOf(run)).toBeNull();
    expect(referenceOf(undefined)).toBeNull();
  });
});
