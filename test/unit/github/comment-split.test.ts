import { describe, expect, it } from 'vitest';
import { GITHUB_COMMENT_LIMIT, splitComment, truncateComment } from '../../../src/github/comment-split.js';

/** Fences and <details> must balance inside every part for it to render. */
function balanced(part: string): boolean {
  let fence = false;
  for (const line of part.split('\n')) if (/^ {0,3}```/.test(line)) fence = !fence;
  const opens = (part.match(/<details\b/g) ?? []).length;
  const closes = (part.match(/<\/details>/g) ?? []).length;
  return !fence && opens === closes;
}

describe('splitComment', () => {
  it('returns a short body unchanged', () => {
    expect(splitComment('hello')).toEqual(['hello']);
  });

  it('uses GitHub’s limit by default', () => {
    const body = 'a\n'.repeat(40_000);
    const parts = splitComment(body);
    expect(parts.length).toBe(2);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(GITHUB_COMMENT_LIMIT);
  });

  it('never ends a part inside a code block or <details>, and reopens them', () => {
    const lines = ['# Report', '<details><summary>Job log</summary>', '', '```text'];
    for (let i = 0; i < 400; i++) lines.push(`log line ${i} ${'x'.repeat(40)}`);
    lines.push('```', '</details>', 'END');
    const parts = splitComment(lines.join('\n'), 2000);
    expect(parts.length).toBeGreaterThan(5);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(2000);
      expect(balanced(p)).toBe(true);
    }
    expect(parts[1]).toContain('<details><summary>Job log</summary>');
    expect(parts[1]).toContain('```text');
    expect(parts.at(-1)).toMatch(/END$/);
    // Nothing lost: every log line is in some part.
    const all = parts.join('\n');
    for (let i = 0; i < 400; i++) expect(all).toContain(`log line ${i} `);
  });

  it('cuts a single line longer than a part', () => {
    const parts = splitComment(`start\n${'y'.repeat(5000)}\nend`, 1000);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(1000);
    expect(parts.join('').replace(/[^y]/g, '').length).toBeGreaterThanOrEqual(5000);
  });

  it('keeps the END when parts are limited', () => {
    const body = `${Array.from({ length: 300 }, (_, i) => `row ${i}`).join('\n')}\n<!-- topo:observation v1\n{}\n-->`;
    const [only, ...rest] = splitComment(body, 500, { maxParts: 1 });
    expect(rest).toEqual([]);
    expect(only).toMatch(/earlier parts? omitted/);
    expect(only).toMatch(/<!-- topo:observation v1\n\{\}\n-->$/);
    expect(only).not.toContain('row 0\n');
    expect(truncateComment(body, 500)).toBe(only);
  });

  it('refuses a limit too small to be useful', () => {
    expect(() => splitComment('x'.repeat(300), 100)).toThrow(/too small/);
  });
});
