import { describe, expect, it } from 'vitest';
import { learningFromText, learningsFromBody, learningsSection } from '../../../src/record/learnings.js';

describe('learnings', () => {
  it('reads a topic prefix and a suggested skill update', () => {
    expect(learningFromText('queries: use max over workers -> add it to metrics.md', 'c1', 'ann')).toEqual({
      topic: 'queries',
      learning: 'use max over workers',
      suggested_skill_update: 'add it to metrics.md',
      source: 'c1',
      author: 'ann',
    });
    expect(learningFromText('Note: plain text', null, null)?.topic).toBe('other');
    expect(learningFromText('Note: plain text', null, null)?.learning).toBe('Note: plain text');
    expect(learningFromText('   ', null, null)).toBeNull();
  });

  it('takes the bullets under a Learnings heading, up to the next heading', () => {
    const body = [
      'Moves the renderer.',
      '',
      '## Learnings',
      '<!-- one bullet per learning -->',
      '- topology_knobs: the renderer scales with GPUs',
      '  and not with replicas',
      '* second one',
      '',
      '## Notes',
      '- not a learning',
    ].join('\r\n');
    expect(learningsSection(body)).toEqual([
      'topology_knobs: the renderer scales with GPUs and not with replicas',
      'second one',
    ]);
    const list = learningsFromBody(body, 'ann');
    expect(list.map((l) => [l.topic, l.source])).toEqual([
      ['topology_knobs', 'pull request body'],
      ['other', 'pull request body'],
    ]);
  });

  it('ignores bodies without the section and placeholder bullets', () => {
    expect(learningsSection('no section here')).toEqual([]);
    expect(learningsSection('### Learnings\n- none\n')).toEqual([]);
    expect(learningsSection(null)).toEqual([]);
  });
});
