#!/usr/bin/env node
// Runs the benchmarks in bench/*.bench.ts: each is bundled with esbuild to a temporary file and run
// with node from the repository root (TOPO_REPO_ROOT is set for files it reads). Figures are printed,
// never asserted. `npm run bench` runs all; `npm run bench -- <name> [<name>…]` runs bench/<name>.bench.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

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

// Same shims as scripts/build.mjs: ESM bundles of CommonJS dependencies need require and __dirname.
const banner = [
  "import { createRequire as __topoCreateRequire } from 'node:module';",
  "import { fileURLToPath as __topoFileURLToPath } from 'node:url';",
  "import { dirname as __topoDirname } from 'node:path';",
  'const require = __topoCreateRequire(import.meta.url);',
  'const __filename = __topoFileURLToPath(import.meta.url);',
  'const __dirname = __topoDirname(__filename);',
].join('\n');

const out = mkdtempSync(join(tmpdir(), 'topo-bench-'));
let failed = 0;
try {
  for (const name of names) {
    const outfile = join(out, `${name}.mjs`);
    await build({
      entryPoints: [join(benchDir, `${name}.bench.ts`)],
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'esm',
      outfile,
      banner: { js: banner },
      logLevel: 'warning',
      external: [
        'cpu-features',
        './crypto/build/Release/sshcrypto.node',
        'esbuild',
        'vitest',
        'playwright-core',
      ],
      loader: { '.node': 'empty' },
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
