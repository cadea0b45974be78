// How a user runs the CLI, said one way everywhere: `node bin/topo.js` in a checkout of alpasim-topo, and
// `npx --yes github:<owner>/<name>#<ref>` elsewhere. Never a bare `npx topo`: `topo` on the npm registry
// is an unrelated package, so that line would download and run a stranger's code (issue 24).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { setupFiles } from '../../../src/setup/templates.js';
import { repoRoot } from '../../support/run-action.js';

/** `npx [flags] topo` (or `npm exec topo`, `pnpm dlx topo`, `yarn dlx topo`): a registry lookup of `topo`. */
const REGISTRY_TOPO =
  /\b(?:npx|npm\s+exec|pnpm\s+dlx|yarn\s+dlx|bunx)\s+(?:-{1,2}[\w-]+(?:=\S+)?\s+)*topo(?![\w/.-])/;

function filesUnder(dir: string, keep: (f: string) => boolean): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || (name.startsWith('.') && name !== '.github')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path, keep));
    else if (keep(path)) out.push(path);
  }
  return out;
}

describe('how to run the CLI', () => {
  it('recognises a registry lookup of `topo` and nothing else', () => {
    for (const bad of [
      'npx topo init',
      'npx --yes topo doctor',
      'npx -y topo',
      'npm exec topo -- init',
      '`npx topo`',
    ])
      expect(bad, bad).toMatch(REGISTRY_TOPO);
    for (const good of [
      'npx --yes github:alpasim-topo/alpasim-topo#v1 doctor',
      'node bin/topo.js init',
      'npx topology-tool',
      'topo init',
    ])
      expect(good, good).not.toMatch(REGISTRY_TOPO);
  });

  it('no doc, workflow, script or generated file tells a user to run `npx topo`', () => {
    const files = [
      join(repoRoot, 'README.md'),
      ...filesUnder(join(repoRoot, 'docs'), (f) => f.endsWith('.md')),
      ...filesUnder(join(repoRoot, '.github'), (f) => /\.ya?ml$/.test(f)),
      ...filesUnder(join(repoRoot, 'src'), (f) => /\.(ts|md)$/.test(f)),
      ...filesUnder(join(repoRoot, 'scripts'), (f) => /\.(mjs|sh)$/.test(f) || !f.includes('.')),
    ];
    const offending: string[] = [];
    for (const f of files)
      readFileSync(f, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          // a line warning against it ("never `npx topo`") is the one allowed mention
          if (REGISTRY_TOPO.test(line) && !/\b(never|not)\b[^.]*npx topo/i.test(line))
            offending.push(`${relative(repoRoot, f)}:${i + 1}: ${line.trim()}`);
        });
    expect(offending).toEqual([]);
    for (const { path, text } of setupFiles({
      repository: 'acme/topo-fork',
      ref: 'v1.2.3',
      cluster: 'ord',
      transport: 'ssh',
    }))
      expect(REGISTRY_TOPO.test(text), path).toBe(false);
  });
});
