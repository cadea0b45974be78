// One owner per fact: the check runs' names (what branch protection and autopilot.required_checks
// require) are written once, in src/github/check-runs.ts. They were written in four files, and an
// action and the autopilot each kept its own copy of `topo/validate`.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tsFiles } from '../../support/source-files.js';

const root = join(import.meta.dirname, '../../..');
const OWNER = 'src/github/check-runs.ts';

describe('the check runs are named in one place', () => {
  it('no file of src/ or actions/ but src/github/check-runs.ts writes a check name as a string', () => {
    const writers = [...tsFiles(join(root, 'src')), ...tsFiles(join(root, 'actions'))]
      .map((f) => relative(root, f))
      .filter((f) => {
        const text = readFileSync(join(root, f), 'utf8');
        return /['"]topo\/(validate|monitor)['"]/.test(text);
      });
    expect(writers).toEqual([OWNER]);
  });
});
