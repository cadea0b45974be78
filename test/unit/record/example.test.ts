// The worked example under experiments/ is what the code renders for the example experiment
// (UPDATE_GOLDEN=1 rewrites it).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordPaths } from '../../../src/record/model.js';
import { recordChartSvg, renderRecordMarkdown } from '../../../src/record/render.js';
import { parseRecord, serializeRecord } from '../../../src/record/validate.js';
import { renderFinalReport } from '../../../src/report/final-report.js';
import { EXAMPLE_ID, exampleRecord } from '../../fixtures/record/example.js';
import { repoRoot } from '../../support/run-action.js';

describe('worked example record (experiments/)', () => {
  it('matches the record, Markdown and report rendered from topologies/' + EXAMPLE_ID, () => {
    const record = exampleRecord(repoRoot);
    record.report = { path: recordPaths(EXAMPLE_ID).report, concluded_at: '2026-12-02T11:00:00Z' };
    const paths = recordPaths(EXAMPLE_ID);
    const expected = {
      [paths.json]: serializeRecord(record),
      [paths.markdown]: renderRecordMarkdown(record),
      [paths.report]: renderFinalReport(record),
      [paths.chart]: recordChartSvg(record),
    };
    for (const [path, text] of Object.entries(expected)) {
      const file = join(repoRoot, path);
      if (process.env.UPDATE_GOLDEN === '1' || !existsSync(file)) writeFileSync(file, text);
      expect(
        readFileSync(file, 'utf8'),
        `${path} is stale: UPDATE_GOLDEN=1 npx vitest run test/unit/record/example.test.ts`,
      ).toBe(text);
    }
    expect(parseRecord(expected[paths.json]!, paths.json).runs.map((r) => r.status)).toEqual([
      'accepted',
      'accepted',
      'rejected',
    ]);
  });
});
