#!/usr/bin/env node
// Bundles every action (actions/<name>/main.ts -> actions/<name>/dist/index.js) and the CLI
// (src/cli/main.ts -> dist/topo.js). The bundles are committed; `--check` rebuilds in memory and
// exits 1 when a committed bundle differs (the check-dist habit of actions/typescript-action).
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { nodeBundleOptions } from './esbuild-options.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');

/** Entry points: one per action plus the CLI. */
export function entries() {
  const list = [{ in: join(root, 'src/cli/main.ts'), out: join(root, 'dist/topo.js') }];
  for (const name of readdirSync(join(root, 'actions')).sort()) {
    const main = join(root, 'actions', name, 'main.ts');
    if (existsSync(main)) list.push({ in: main, out: join(root, 'actions', name, 'dist/index.js') });
  }
  return list;
}

let stale = 0;
for (const entry of entries()) {
  const result = await build({
    ...nodeBundleOptions(),
    entryPoints: [entry.in],
    write: false,
    outfile: entry.out,
    legalComments: 'none',
  });
  const text = result.outputFiles[0].text;
  const rel = relative(root, entry.out);
  if (check) {
    const current = existsSync(entry.out) ? readFileSync(entry.out, 'utf8') : null;
    if (current !== text) {
      stale++;
      console.error(`stale bundle: ${rel} differs from a fresh build; run \`npm run build\` and commit it`);
    }
  } else {
    mkdirSync(dirname(entry.out), { recursive: true });
    // Write then rename, so a test running a bundle never reads a half-written file.
    const tmp = `${entry.out}.${process.pid}.tmp`;
    writeFileSync(tmp, text);
    renameSync(tmp, entry.out);
    console.log(`built ${rel} (${(text.length / 1024).toFixed(0)} KiB)`);
  }
}
if (stale) process.exit(1);
