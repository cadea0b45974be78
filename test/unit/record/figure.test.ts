// The figure every surface shows for a run (src/record/figure.ts): what its decision says.
import { describe, expect, it } from 'vitest';
import { apply, type RecordOutcome } from '../../../src/record/apply.js';
import { figureOf } from '../../../src/record/figure.js';
import { createRecord } from '../../../src/record/model.js';
import type { RecordRun } from '../../../src/types/generated/record.js';
import { decided, EXPERIMENT } from '../../fixtures/record/scenario.js';

const baseline = decided(
  'baseline',
  '2026-12-02T09:00:00Z',
  { projected: 10.0, estimate: 10.1 },
  { state: 'reference', against: 'baseline baseline', change: 0 },
);
// its own values are above the baseline's; its decision says 6% faster
const model = decided(
  'model',
  '2026-12-02T10:00:00Z',
  { projected: 10.1, estimate: 10.2 },
  { state: 'better', against: 'current best baseline', change: -0.06 },
);
const child = decided(
  'child',
  '2026-12-02T11:00:00Z',
  { projected: 9.9, estimate: 9.9 },
  { state: 'better', against: 'current best model', change: -0.05 },
);
const pruned: RecordOutcome = {
  ...decided(
    'pruned',
    '2026-12-02T11:00:01Z',
    { projected: 9.8, estimate: 9.8 },
    { state: 'not-better', against: 'leading candidate child (#4)', change: 0.01 },
  ),
  kind: 'rejected',
};

function runs(...outcomes: RecordOutcome[]): RecordRun[] {
  return outcomes.reduce(apply, createRecord(EXPERIMENT)).runs;
}

describe('figureOf', () => {
  it('a run decided against another is that one × (1 + the decided change), chained, with the interval', () => {
    const all = runs(baseline, model, child, pruned);
    const at = (name: string) => figureOf(all.find((r) => r.name === name)!, all);
    expect(at('baseline')).toMatchObject({ value: 10, basis: 'projection' });
    expect(at('model')).toMatchObject({
      value: 9.4,
      low: 9.2,
      high: 9.6,
      basis: 'decision',
      against: { name: 'baseline', value: 10 },
    });
    expect(at('child')?.value).toBeCloseTo(9.4 * 0.95, 4);
    expect(at('child')?.value).toBeLessThan(at('model')!.value);
  });

  it('the pruner against a live leader, and a run whose reference is not recorded, keep their own value', () => {
    expect(figureOf(runs(baseline, pruned).at(-1)!, runs(baseline, pruned))?.basis).toBe('projection');
    const alone = runs(model);
    expect(figureOf(alone[0]!, alone)).toMatchObject({ value: 10.1, basis: 'projection' });
  });

  it('two runs decided against each other do not loop', () => {
    const a = decided(
      'a',
      '2026-12-02T10:00:00Z',
      { projected: 9, estimate: 9 },
      { state: 'better', against: 'current best b', change: -0.05 },
    );
    const b = decided(
      'b',
      '2026-12-02T10:00:01Z',
      { projected: 9, estimate: 9 },
      { state: 'worse', against: 'current best a', change: 0.05 },
    );
    const both = runs(a, b);
    expect(figureOf(both[0]!, both)?.value).toBeCloseTo(9 * 1.05 * 0.95, 4);
  });
});
