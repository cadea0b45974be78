import { describe, expect, it } from 'vitest';
import { annotationBatches } from '../../../src/github/check-runs.js';
import { planStateLabels } from '../../../src/github/labels.js';

describe('planStateLabels', () => {
  it('leaves exactly one state label (any other topology:* label goes) and never touches other labels', () => {
    expect(planStateLabels(['bug', 'topology:queued'], 'running')).toEqual({
      remove: ['topology:queued'],
      add: ['topology:running'],
    });
    expect(planStateLabels(['topology:running'], 'running')).toEqual({ remove: [], add: [] });
    expect(planStateLabels(['bug', 'topology:running', 'topology:submit'], null)).toEqual({
      remove: ['topology:running', 'topology:submit'],
      add: [],
    });
  });
});

describe('annotationBatches', () => {
  const a = (i: number) => ({
    path: 'a.yaml',
    start_line: i,
    end_line: i,
    annotation_level: 'failure' as const,
    message: `m${i}`,
  });
  it('sends at most 50 per request, at least one request', () => {
    expect(annotationBatches([])).toEqual([[]]);
    const batches = annotationBatches(Array.from({ length: 120 }, (_, i) => a(i + 1)));
    expect(batches.map((b) => b.length)).toEqual([50, 50, 20]);
  });
});
