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

/**
 * Entry points: one per action plus the CLI, and the local GitHub API that `topo demo --autopilot`
 * loads beside the CLI (dist/github-local.js: it reads GitHub's descriptions from the development
 * dependencies, so it stays out of the CLI bundle, which runs without node_modules).
 */
export function entries() {
  const list = [
    { in: join(root, 'src/cli/main.ts'), out: join(root, 'dist/topo.js') },
    { in: join(root, 'src/github-local/index.ts'), out: join(root, 'dist/github-local.js') },
  ];
  for (const name of readdirSync(join(root, 'actions')).sort()) {
    const main = join(root, 'actions', name, 'main.ts');
    if (existsSync(main)) list.push({ in: main, out: join(root, 'actions', name, 'dist/index.js') });
  }
  return list;
}

/**
 * Files shipped beside the bundles: mermaid.min.js draws the demo page's charts in the browser
 * (mermaid is a build-time dependency; `npm ci --omit=dev && node bin/topo.js demo` needs no node_modules).
 */
export function vendored() {
  return [
    {
      from: join(root, 'node_modules/mermaid/dist/mermaid.min.js'),
      out: join(root, 'dist/mermaid.min.js'),
    },
  ];
}

let stale = 0;
for (const file of vendored()) {
  const text = readFileSync(file.from, 'utf8');
  const rel = relative(root, file.out);
  if (check) {
    if (!existsSync(file.out) || readFileSync(file.out, 'utf8') !== text) {
      stale++;
      console.error(
        `stale copy: ${rel} differs from ${relative(root, file.from)}; run \`npm run build\` and commit it`,
      );
    }
  } else {
    writeFileSync(file.out, text);
    console.log(`copied ${rel} (${(text.length / 1024).toFixed(0)} KiB)`);
  }
}
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
