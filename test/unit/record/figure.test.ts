// The figure every surface shows for a run (src/record/figure.ts): what its decision says. A
// decision an older comment kept without its figure gets the one it implies in the record (its
// reference's figure × (1 + the change)), the leading candidate's included.
import { describe, expect, it } from 'vitest';
import { apply, type RecordOutcome } from '../../../src/record/apply.js';
import { figureOf } from '../../../src/record/figure.js';
import { createRecord } from '../../../src/record/model.js';
import { renderRecordMarkdown } from '../../../src/record/render.js';
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
    const at = (name: string) => figureOf(all.find((r) => r.name === name)!);
    expect(at('baseline')).toMatchObject({ value: 10, basis: 'projection' });
    expect(at('model')).toMatchObject({
      value: 9.4,
      low: 9.2,
      high: 9.6,
      basis: 'decision',
      reference: { name: 'baseline', value: 10 },
    });
    expect(at('child')?.value).toBeCloseTo(9.4 * 0.95, 4);
    expect(at('child')?.value).toBeLessThan(at('model')!.value);
  });

  it("a run pruned against the leading candidate is at the leader's figure × (1 + its change), not its early reading", () => {
    const all = runs(baseline, model, child, pruned);
    const leader = figureOf(all.find((r) => r.name === 'child')!)!.value;
    expect(figureOf(all.at(-1)!)).toMatchObject({ basis: 'decision', reference: { name: 'child' } });
    expect(figureOf(all.at(-1)!)?.value).toBeCloseTo(leader * 1.01, 3);
  });

  it("the record's progress table shows a loser pruned against the leader at what its decision implies", () => {
    // old main showed it at its own early reading (9.90 here), above the leader it lost to
    const record = [baseline, model, child, pruned].reduce(apply, createRecord(EXPERIMENT));
    const leader = 10 * 0.94 * 0.95; // the baseline's 10.0, then model −6%, then child −5%
    const row = renderRecordMarkdown(record)
      .split('\n')
      .find((l) => l.includes('`pruned`'));
    expect(row).toContain(`${(leader * 1.01).toFixed(2)} s/rollout as decided against \`child\``);
  });

  it('a run whose reference is not recorded keeps its own value', () => {
    expect(figureOf(runs(baseline, pruned).at(-1)!)?.basis).toBe('projection');
    expect(figureOf(runs(model)[0]!)).toMatchObject({ value: 10.1, basis: 'projection' });
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
    expect(figureOf(both[0]!)?.value).toBeCloseTo(9 * 1.05 * 0.95, 4);
  });
});
