// Conformance: every Hydra override in the project's presets, examples, sources and tests exists in AlpaSim's
// config tree (the generated catalogue), except the ones written to be refused (the bad-input corpus and
// refusal tests, listed here with the rule that refuses them).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { overrideProblem } from '../../../src/topology/overrides.js';
import { PATTERNS } from '../../../src/topology/render.js';
import { REPO } from './helpers.js';

/** Overrides written to be refused, and why (not by the catalogue check: reserved keys, topology keys). */
const REFUSED_ELSEWHERE: Record<string, string> = {
  'wizard.run_name=mine': 'override-reserved',
  'wizard.run_name=x': 'override-reserved',
  'runtime.nr_workers=4': 'override-topology',
  'runtime.nr_workers=3': 'override-topology',
};

function overridesInRepo(): Array<{ file: string; override: string }> {
  const files = execFileSync(
    'git',
    ['ls-files', 'src/**/*.ts', 'test/**/*.ts', 'bench/**', 'test/**/*.yaml', 'topologies/**/*.yaml'],
    { cwd: REPO, encoding: 'utf8' },
  )
    .split('\n')
    .filter((f) => f && !f.startsWith('test/fixtures/topology/corpus/experiments/'));
  const out: Array<{ file: string; override: string }> = [];
  for (const file of files) {
    const text = readFileSync(join(REPO, file), 'utf8');
    for (const m of text.matchAll(/overrides:\s*\[([^\]]*(?:\][^\]]*)*?)\]/g))
      for (const s of m[1]!.matchAll(/['"`]([^'"`\n]+=[^'"`\n]*)['"`]/g)) out.push({ file, override: s[1]! });
    for (const m of text.matchAll(/overrides:\n((?:\s+- .*\n)+)/g))
      for (const s of m[1]!.matchAll(/- "?([^"\n]+)"?/g)) out.push({ file, override: s[1]! });
  }
  return out;
}

describe('override keys in the repository', () => {
  const found = overridesInRepo();

  it('finds the overrides of the example experiment and the tests', () => {
    expect(found.length).toBeGreaterThan(5);
  });

  it('exist in AlpaSim config tree, or are refused for a stated reason', () => {
    for (const { file, override } of found) {
      const problem = overrideProblem(override);
      if (REFUSED_ELSEWHERE[override]) {
        const key = override.slice(0, override.indexOf('='));
        expect(
          REFUSED_ELSEWHERE[override] === 'override-topology' ? PATTERNS.topologyKey.test(key) : true,
        ).toBe(true);
        continue;
      }
      // hostile fixtures of the security tests (hydra.*, _target_, env_set…): refused, tested as such
      if (problem?.rule === 'override-forbidden') continue;
      if (problem?.rule === 'bad-format') continue; // shell-injection fixtures: refused by syntax, tested as such
      expect(problem?.severity, `${file}: ${override}: ${problem?.message}`).not.toBe('error');
    }
  });
});
