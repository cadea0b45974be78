// One escaping helper for every text a person wrote: no markup, no mention, no way out.
import { describe, expect, it } from 'vitest';
import { codeBlock, inlineText, quotedText } from '../../../src/github/user-text.js';

describe('user text', () => {
  const hostile =
    '</details><img src=x onerror=alert(1)> @acme/team **bold** [x](http://e) `code` #12\n# heading';

  it('inline: no HTML, no mention, no Markdown, one line', () => {
    const t = inlineText(hostile);
    expect(t).not.toMatch(/<[a-z/]/i);
    expect(t).not.toMatch(/@[a-z]/i);
    expect(t).not.toContain('**');
    expect(t).not.toContain('](');
    expect(t).not.toContain('\n');
    expect(t).toContain('&lt;/details&gt;');
  });

  it('quoted: every line is a quote line', () => {
    const q = quotedText('first\n</details>\n@team', 5);
    expect(q.split('\n').every((l) => l.startsWith('> '))).toBe(true);
    expect(q).not.toContain('</details>');
  });

  it('code: the fence is longer than any backtick run inside', () => {
    const c = codeBlock('a ```` b\n```\nc');
    const fence = c.split('\n')[0]?.replace(/text$/, '') ?? '';
    expect(fence.length).toBe(5);
    expect(c.endsWith(`\n${fence}`)).toBe(true);
  });
});

describe('user text in the experiment record', () => {
  it('a hostile reject reason, hypothesis and learning stay text', async () => {
    const { apply } = await import('../../../src/record/apply.js');
    const { createRecord } = await import('../../../src/record/model.js');
    const { renderRecordMarkdown } = await import('../../../src/record/render.js');
    const { EXPERIMENT, OUTCOMES } = await import('../../fixtures/record/scenario.js');
    const evil = '</details></table><img src=x onerror=alert(1)> @acme/everyone | `x` ```';
    const outcome = structuredClone(OUTCOMES[1]!);
    outcome.kind = 'rejected';
    outcome.reason = evil;
    outcome.hypothesis = evil;
    outcome.learnings = [{ topic: 'queries', learning: evil, author: 'mallory' }] as typeof outcome.learnings;
    const md = renderRecordMarkdown(apply(createRecord(EXPERIMENT), outcome));
    expect(md).not.toContain('</details></table>');
    expect(md).not.toContain('<img');
    expect(md).not.toMatch(/@acme/);
    expect(md).not.toContain('| `x`');
    expect(md).toContain('&lt;/details&gt;');
  });
});
