// One truth for "the best": the record, its Markdown, the final report, the site and the demo's
// terminal name the same current best, and it agrees with the decisions the pull requests showed
// (the CI failure: a candidate accepted as better while current_best stayed the baseline).
import { describe, expect, it } from 'vitest';
import { bestLine } from '../../../src/demo/run.js';
import { apply, type RecordOutcome } from '../../../src/record/apply.js';
import { baselineRun, bestRun, createRecord, referenceOf } from '../../../src/record/model.js';
import { renderRecordMarkdown } from '../../../src/record/render.js';
import { renderFinalReport } from '../../../src/report/final-report.js';
import { chartPoints } from '../../../src/site/chart.js';
import { renderSite } from '../../../src/site/pages.js';
import type { ExperimentRecord } from '../../../src/types/generated/record.js';
import { decided, EXPERIMENT } from '../../fixtures/record/scenario.js';
import { bestProblems } from '../../support/one-truth.js';

const baseline = decided(
  'baseline',
  '2026-12-02T09:00:00Z',
  { projected: 10.0, estimate: 10.1 },
  { state: 'reference', against: 'baseline baseline', change: 0 },
);
// decided 6% faster on the decision estimate, while the verdict's projection is 1% slower
const model = decided(
  'model',
  '2026-12-02T10:00:00Z',
  { projected: 10.1, estimate: 9.5 },
  { state: 'better', against: 'current best baseline', change: -0.06 },
);
const slower: RecordOutcome = {
  ...decided(
    'slower',
    '2026-12-02T10:01:00Z',
    { projected: 10.6, estimate: 10.7 },
    { state: 'worse', against: 'current best baseline', change: 0.06 },
  ),
  kind: 'rejected',
};

/** Every surface's best, by surface. */
function surfaces(record: ExperimentRecord): Record<string, string | null> {
  const md = renderRecordMarkdown(record);
  const report = renderFinalReport(record);
  const site = renderSite([record]).find((p) => p.path.endsWith('/index.html') && p.path.includes('/'))!;
  const points = chartPoints(record);
  const chartBest = record.runs.find(
    (r) => points.find((p) => p.name === r.name)?.value === points.at(-1)?.best,
  )?.name;
  const refs = {
    baseline: referenceOf(baselineRun(record)),
    best: referenceOf(bestRun(record)),
    current: record.current_best.topology,
  };
  return {
    record: record.current_best.topology,
    markdown: /## Current best\n\n\*\*`([^`]+)`\*\*/.exec(md)?.[1] ?? null,
    report: /\*\*Result:\*\* no candidate beat the baseline/.test(report)
      ? 'baseline'
      : (/\*\*Result:\*\* `([^`]+)` reaches/.exec(report)?.[1] ?? null),
    'report best topology': /## 3\. Best topology\n\n`([^`]+)`/.exec(report)?.[1] ?? null,
    site: /Best so far: <a [^>]*>([^<]+)<\/a>/.exec(site.html)?.[1] ?? null,
    'site chart': chartBest ?? null,
    terminal: /^current best: (\S+)/.exec(bestLine(refs, 'baseline'))?.[1] ?? null,
  };
}

describe('one truth: the best', () => {
  it('a candidate accepted as better than the baseline is the best on every surface, though its projection is not lower', () => {
    const record = [baseline, model, slower].reduce(apply, createRecord(EXPERIMENT));
    expect(bestProblems(record)).toEqual([]);
    const all = surfaces(record);
    for (const [surface, best] of Object.entries(all)) expect(best, surface).toBe('model');
    const report = renderFinalReport(record);
    // the result is told by the decision itself: the baseline's 10.0 × (1 − 6%)
    expect(report).toContain(
      "**Result:** `model` reaches 9.40 s per rollout against the baseline's 10.00 s as decided (-6%; 1.06× the throughput); decided better against the baseline (the current best): change −6% [−8%, −4%].",
    );
  });

  it('when none is accepted as better the baseline is the best on every surface, and the report says none beat it', () => {
    const record = [baseline, slower].reduce(apply, createRecord(EXPERIMENT));
    expect(bestProblems(record)).toEqual([]);
    for (const [surface, best] of Object.entries(surfaces(record))) expect(best, surface).toBe('baseline');
  });

  it('the checker catches the CI failure: an accepted better candidate beside a baseline best', () => {
    const record = [baseline, model].reduce(apply, createRecord(EXPERIMENT));
    const stale = { ...record, current_best: { ...record.current_best, topology: 'baseline' } };
    expect(bestProblems(stale)).toEqual([
      'model was accepted as better than baseline, yet baseline is current_best',
    ]);
  });
});
