// A loser pruned `not-better` against the round's LEADING candidate is shown at the leader's steady
// figure × (1 + the change), not at the leader's live value when it was pruned (issue 39 item 6).
// Captured by `topo watch` on the local cluster (test/integration/cli/watch.test.ts): the leader
// `model` read 14.23 s when `scale-driver` was pruned +26.8% against it, and settled at 8.28 s; the
// loser was recorded and printed at 18.04 s, 66% slower than the 10.9 s baseline it is ~11% slower
// than. The change is measured at equal run age (start-up cancels), so it belongs on the settled 8.28.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchoredDecision, decidedFigure, steadyAnchor } from '../../../src/analysis/figure.js';
import { decisionOf, type Reference } from '../../../src/judge/decide.js';
import { figureOf } from '../../../src/record/figure.js';
import { renderRecordMarkdown } from '../../../src/record/render.js';
import { parseRecord } from '../../../src/record/validate.js';
import type { Decision } from '../../../src/types/generated/metrics.js';
import type { ExperimentRecord, RecordRun } from '../../../src/types/generated/record.js';
import { repoRoot } from '../../support/cluster.js';

const WATCH = join(repoRoot, 'test/fixtures/one-truth/watch');
const file = readdirSync(WATCH).find((f) => f.endsWith('.json')) as string;
const raw = () => JSON.parse(readFileSync(join(WATCH, file), 'utf8')) as ExperimentRecord;

// the captured run: the leader's live value at pruning, the change, the leader's settled figure
const EARLY = 14.23;
const CHANGE = { value: 0.2678, low: 0.1302, high: 0.4217 };
const SETTLED = 8.28;
const run = (r: ExperimentRecord, name: string) => r.runs.find((x) => x.name === name) as RecordRun;

/** The captured record as old main wrote it: the loser's figure anchored on the leader's 14.23 s. */
function captured(): ExperimentRecord {
  const r = raw();
  const loser = run(r, 'scale-driver').monitor_decision as Decision;
  loser.relative_change = CHANGE;
  loser.figure = decidedFigure(EARLY, CHANGE);
  const leader = run(r, 'model').monitor_decision as Decision;
  leader.figure = { value: SETTLED, low: 8.13, high: 8.43, reference_value: 10.8751 };
  return r;
}

describe("a loser's figure is anchored on its leader's settled figure", () => {
  it('old main showed the loser at 18.04 s: the leader read early × (1 + 26.8%)', () => {
    expect(decidedFigure(EARLY, CHANGE).value).toBeCloseTo(18.04, 2);
  });

  it('the record re-anchors it once the leader settles: 8.28 × 1.268 = 10.50 s, on every record surface', () => {
    const r = parseRecord(JSON.stringify(captured()), file);
    const f = figureOf(run(r, 'scale-driver'));
    expect(f?.value).toBeCloseTo(SETTLED * (1 + CHANGE.value), 3);
    expect(f?.reference?.value).toBe(SETTLED);
    expect(f?.low).toBeCloseTo(SETTLED * (1 + CHANGE.low), 3);
    expect(renderRecordMarkdown(r)).toContain('10.497');
    expect(renderRecordMarkdown(r)).not.toContain('18.04');
  });

  it('a leader not settled in the record leaves the figure its decision was anchored at', () => {
    const r = captured();
    run(r, 'model').monitor_decision = {
      ...(run(r, 'model').monitor_decision as Decision),
      state: 'measuring',
    };
    const f = figureOf(run(parseRecord(JSON.stringify(r), file), 'scale-driver'));
    expect(f?.value).toBeCloseTo(18.04, 2);
  });

  it('the judge re-anchors a kept decision on the leader it reads now (its settled figure)', () => {
    const leader: Reference = {
      role: 'leading candidate',
      name: 'model',
      verdict: { state: 'stable' },
      value: null,
      figure: SETTLED,
      live: true,
      pr: 2,
    };
    const d = rejudged({ reference: null, leader });
    expect(d?.state).toBe('not-better');
    expect(d?.figure?.value).toBeCloseTo(10.497, 3);
    expect(d?.figure?.reference_value).toBe(SETTLED);
  });

  it("and on the same run once it is the record's current best (the reference, no longer the leader)", () => {
    const best: Reference = {
      role: 'current best',
      name: 'model',
      verdict: { state: 'stable' },
      value: { value: 8.3, low: 8.2, high: 8.4 },
      figure: SETTLED,
      live: false,
    };
    const d = rejudged({ reference: best, leader: null });
    expect(d?.figure?.value).toBeCloseTo(10.497, 3);
  });

  it('a decision against a recorded reference keeps the figure it carries; a reading is never an anchor', () => {
    const model = run(raw(), 'model').monitor_decision as Decision;
    expect(anchoredDecision(model, 12)).toBe(model);
    expect(steadyAnchor({ value: 14.23, low: 14.23, high: 14.23, basis: 'reading' })).toBeNull();
    expect(steadyAnchor({ value: 9.08, low: 8.9, high: 9.3, basis: 'estimate' })).toBe(9.08);
  });
});

/** The captured loser's kept decision judged again (its job ended) against `against`. */
function rejudged(against: { reference: Reference | null; leader: Reference | null }) {
  const kept = run(captured(), 'scale-driver').monitor_decision as Decision;
  return decisionOf(
    { experiment: {} },
    { candidate: 'scale-driver', pr: 3 },
    { verdict: { state: 'warming', evidence: [] } },
    { ...against, previous: kept, ended: true },
  );
}
