import { describe, expect, it } from 'vitest';
import { apply } from '../../../src/record/apply.js';
import { createRecord } from '../../../src/record/model.js';
import { renderFinalReport } from '../../../src/report/final-report.js';
import { EXPERIMENT, OUTCOMES } from '../../fixtures/record/scenario.js';
import { mermaidBlocks, mermaidParse } from '../report/mermaid-parser.js';
import { expectGolden } from './golden.js';

const full = () => OUTCOMES.reduce(apply, createRecord(EXPERIMENT));

describe('final report', () => {
  it('matches the golden report for the worked experiment', () => {
    expectGolden('report.md.golden', renderFinalReport(full()));
  });

  it('has the seed five parts, in order, and Mermaid charts', () => {
    const text = renderFinalReport(full(), { recordUrl: 'https://example/blob/main/experiments/x.md' });
    const headings = text.split('\n').filter((l) => l.startsWith('## '));
    expect(headings).toEqual([
      '## 1. Baseline',
      '## 2. Tried topologies',
      '## 3. Best topology',
      '## 4. Advice for improving the workflow',
      '## 5. Experiment record',
    ]);
    expect(text).toContain(
      "`renderer-x6` reaches 4.14 s per rollout against the baseline's 5.25 s as decided (-21.1%; 1.27× the throughput)",
    );
    expect(text.match(/```mermaid/g)).toHaveLength(3);
    expect(text).toContain('(https://example/blob/main/experiments/x.md)');
    expect(text).toContain('Suggested skill update: State the cache memory per scene in topology-knobs.md.');
    expect(text).toContain('1 candidate(s) failed with gpu-oom (`driver-x12`)');
  });

  it("has charts Mermaid's own parser accepts", async () => {
    const blocks = mermaidBlocks(renderFinalReport(full()));
    expect(blocks).toHaveLength(3);
    for (const block of blocks)
      await expect(mermaidParse(block)).resolves.toMatchObject({ diagramType: 'xychart' });
  });

  it('says so when nothing was accepted', () => {
    const text = renderFinalReport(createRecord(EXPERIMENT));
    expect(text).toContain('no candidate beat the baseline');
    expect(text).toContain('No baseline was recorded.');
    expect(text).toContain('No candidate was accepted.');
  });
});
