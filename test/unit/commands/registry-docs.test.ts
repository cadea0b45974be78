// The registry against what people read: the command tables of README.md and docs/github.md, and the
// dashboard's controls in docs/autopilot.md, list exactly the registry's commands, each with the
// argument its rule takes (the help prints the same usage). Adding a command is its file, its line
// in the registry and its test; this test then names the docs that do not say it yet.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { argumentHint } from '../../../src/commands/parse.js';
import { COMMANDS } from '../../../src/commands/registry.js';
import { repoRoot } from '../../support/run-action.js';

const doc = (path: string) => readFileSync(join(repoRoot, path), 'utf8');
const usage = (c: (typeof COMMANDS)[number]) => `/topo ${c.name}${argumentHint(c.argument)}`;
const usages = (where: 'pull' | 'dashboard') =>
  COMMANDS.filter((c) => c.where === where)
    .map(usage)
    .sort();

/** The `/topo …` usages in the first cell of a Markdown table's rows. */
function tableUsages(text: string): string[] {
  return [...text.matchAll(/^\|\s*`(\/topo [^`]+)`\s*\|/gm)].map((m) => m[1] as string).sort();
}

/** The section of `text` under the heading `title`, up to the next heading of its level or higher. */
function section(text: string, title: string): string {
  const start = text.indexOf(title);
  expect(start, `no section "${title}"`).toBeGreaterThanOrEqual(0);
  const level = /^#+/.exec(title)?.[0].length ?? 2;
  const rest = text.slice(start + title.length);
  const end = rest.search(new RegExp(`^#{1,${level}} `, 'm'));
  return end < 0 ? rest : rest.slice(0, end);
}

describe('the registry and the docs', () => {
  it.each([
    ['README.md', '### Comment commands'],
    ['docs/github.md', '## Comment commands'],
  ])('%s lists every pull request command with its argument, and no other', (path, title) => {
    expect(tableUsages(section(doc(path), title))).toEqual(usages('pull'));
  });

  it('docs/autopilot.md lists every dashboard control, and no other', () => {
    const controls = section(doc('docs/autopilot.md'), '## The dashboard and its controls');
    const named = [...controls.matchAll(/^- `\/topo ([a-z]+)[^`]*`:/gm)].map((m) => m[1]);
    expect([...new Set(named)].sort()).toEqual(
      COMMANDS.filter((c) => c.where === 'dashboard')
        .map((c) => c.name)
        .sort(),
    );
  });
});
