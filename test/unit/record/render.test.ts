import { describe, expect, it } from 'vitest';
import { apply } from '../../../src/record/apply.js';
import { initialRecordFiles } from '../../../src/record/files.js';
import { createRecord } from '../../../src/record/model.js';
import { progressTable, renderRecordMarkdown, secondsPerRolloutChart } from '../../../src/record/render.js';
import { serializeRecord } from '../../../src/record/validate.js';
import { EXPERIMENT, OUTCOMES } from '../../fixtures/record/scenario.js';
import { mermaidBlocks, mermaidParse } from '../report/mermaid-parser.js';
import { expectGolden } from './golden.js';

const full = () => OUTCOMES.reduce(apply, createRecord(EXPERIMENT));

describe('record Markdown', () => {
  it('matches the golden document for the worked experiment', () => {
    const record = full();
    expectGolden('record.json.golden', serializeRecord(record));
    expectGolden('record.md.golden', renderRecordMarkdown(record));
  });

  it('matches the golden document for a fresh record (what topo init writes)', () => {
    expectGolden('fresh.md.golden', renderRecordMarkdown(createRecord(EXPERIMENT)));
    const files = initialRecordFiles(EXPERIMENT);
    expect(Object.keys(files)).toEqual([
      `experiments/${EXPERIMENT.experiment_id}.json`,
      `experiments/${EXPERIMENT.experiment_id}.md`,
    ]);
    expect(files[`experiments/${EXPERIMENT.experiment_id}.md`]).toBe(
      renderRecordMarkdown(createRecord(EXPERIMENT)),
    );
  });

  it('has the seed progress-table header and one row per run', () => {
    const table = progressTable(full()).split('\n');
    expect(table[0]).toBe('| Step | Job | Topology | Change | Observation | Decision | Next | Learning |');
    expect(table).toHaveLength(2 + 4);
    expect(table[5]).toMatch(/^\| 4 \| `104` \| `driver-x12`/);
    // every row has the 8 columns (pipes inside cells are escaped)
    for (const row of table.slice(2)) expect(row.split(/(?<!\\)\|/).length).toBe(10);
  });

  it('charts each candidate with a value as a bar coloured by its decision, the baseline and the best as lines', () => {
    const chart = secondsPerRolloutChart(full())!;
    expect(chart).toContain('xychart-beta');
    expect(chart).toContain('x-axis ["baseline", "renderer-x6", "workers-4"]');
    // coloured by decision (accepted green, rejected red), baseline and current best as lines
    expect(chart).toContain('"plotColorPalette": "#2da44e,#cf222e,#1f6feb,#8250df"');
    expect(chart).toContain('bar [5.252, 4.144, 0]');
    expect(chart).toContain('bar [0, 0, 5.656]');
    expect(chart).toContain('line [5.252, 5.252, 5.252]');
    expect(chart).toContain('line [4.144, 4.144, 4.144]');
    expect(chart).toContain(
      '🟩 accepted · 🟥 rejected · 🟦 baseline (5.25 s) · 🟪 current best `renderer-x6` (4.14 s) · without a value: `driver-x12` (failed)',
    );
    expect(chart).toContain(
      'With 95% intervals: [topology-opt-vam-local-20261202.svg](topology-opt-vam-local-20261202.svg)',
    );
    expect(secondsPerRolloutChart(createRecord(EXPERIMENT))).toBeUndefined();
  });

  it("produces Mermaid that Mermaid's own parser accepts", async () => {
    const blocks = mermaidBlocks(renderRecordMarkdown(full()));
    expect(blocks).toHaveLength(1);
    for (const block of blocks)
      await expect(mermaidParse(block)).resolves.toMatchObject({ diagramType: 'xychart' });
  });

  it('is a function of the JSON alone: same record, same text', () => {
    const record = full();
    expect(renderRecordMarkdown(JSON.parse(JSON.stringify(record)))).toBe(renderRecordMarkdown(record));
  });
});
