// One owner per fact: the check runs' names (what branch protection and autopilot.required_checks
// require) are written once, in src/github/check-runs.ts. They were written in four files, and an
// action and the autopilot each kept its own copy of `topo/validate`.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../../..');
const OWNER = 'src/github/check-runs.ts';

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.parentPath.includes('/dist'))
    .map((e) => join(e.parentPath, e.name).slice(root.length + 1));
}

describe('the check runs are named in one place', () => {
  it('no file of src/ or actions/ but src/github/check-runs.ts writes a check name as a string', () => {
    const writers = [...sources('src'), ...sources('actions')].filter((f) => {
      const text = readFileSync(join(root, f), 'utf8');
      return /['"]topo\/(validate|monitor)['"]/.test(text);
    });
    expect(writers).toEqual([OWNER]);
  });
});
