// Golden-file comparison: UPDATE_GOLDEN=1 rewrites the file instead of comparing. Golden files end in
// `.golden` so the formatter (which also formats Markdown and JSON) leaves them byte-exact.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../../fixtures/record');

export function expectGolden(name: string, actual: string): void {
  const file = join(FIXTURES, 'golden', name);
  if (process.env.UPDATE_GOLDEN === '1' || !existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, actual);
    if (process.env.UPDATE_GOLDEN !== '1')
      throw new Error(`golden file ${file} was missing: written, re-run`);
    return;
  }
  expect(actual, `differs from golden ${file} (UPDATE_GOLDEN=1 to accept)`).toBe(readFileSync(file, 'utf8'));
}
