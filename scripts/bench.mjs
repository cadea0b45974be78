#!/usr/bin/env node
// Runs the benchmarks in bench/*.bench.ts: each is bundled with esbuild to a temporary file and run
// with node from the repository root (TOPO_REPO_ROOT is set for files it reads). The bundles are
// written under node_modules/.cache so that what they leave out (packages read at run time, JSON
// files such as @octokit/openapi's description) resolves from the repository's node_modules, as in a
// clean clone after `npm ci`. Figures are printed,
// never asserted. `npm run bench` runs all; `npm run bench -- <name> [<name>…]` runs bench/<name>.bench.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { nodeBundleOptions } from './esbuild-options.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const benchDir = join(root, 'bench');
const all = readdirSync(benchDir)
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.slice(0, -'.bench.ts'.length))
  .sort();
const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
for (const name of wanted) {
  if (!all.includes(name)) {
    console.error(`no benchmark bench/${name}.bench.ts (have: ${all.join(', ')})`);
    process.exit(2);
  }
}
const names = wanted.length ? wanted : all;

const cache = join(root, 'node_modules', '.cache');
mkdirSync(cache, { recursive: true });
const out = mkdtempSync(join(cache, 'topo-bench-'));
let failed = 0;
try {
  for (const name of names) {
    const outfile = join(out, `${name}.mjs`);
    await build({
      ...nodeBundleOptions(['esbuild', 'vitest', 'playwright-core']),
      entryPoints: [join(benchDir, `${name}.bench.ts`)],
      outfile,
    });
    console.log(`\n=== bench/${name}.bench.ts`);
    const run = spawnSync(process.execPath, [outfile], {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, TOPO_REPO_ROOT: root, TOPO_BENCH_BUNDLE: outfile },
    });
    if (run.status !== 0) {
      failed++;
      console.error(`bench/${name}.bench.ts exited with ${run.status ?? run.signal}`);
    }
  }
} finally {
  if (existsSync(out)) rmSync(out, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
