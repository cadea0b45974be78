#!/usr/bin/env node
// Derives the TypeScript types from the JSON Schemas in topologies/schema/ (the one source of truth).
// `--check` exits 1 when the committed types differ from the schemas.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile } from 'json-schema-to-typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const schemaDir = join(root, 'topologies/schema');
const outDir = join(root, 'src/types/generated');
const check = process.argv.includes('--check');
let stale = 0;
mkdirSync(outDir, { recursive: true });
for (const file of readdirSync(schemaDir)
  .filter((f) => f.endsWith('.schema.json'))
  .sort()) {
  const schema = JSON.parse(readFileSync(join(schemaDir, file), 'utf8'));
  const ts = await compile(schema, schema.title ?? file, {
    bannerComment: `/* Generated from topologies/schema/${file} by scripts/gen-types.mjs. Do not edit. */`,
    cwd: schemaDir,
    additionalProperties: false,
    unreachableDefinitions: true,
    style: { singleQuote: true, printWidth: 110 },
  });
  const out = join(outDir, file.replace('.schema.json', '.ts'));
  if (check) {
    if (!existsSync(out) || readFileSync(out, 'utf8') !== ts) {
      stale++;
      console.error(`stale types: ${out} differs from ${file}; run \`npm run gen:types\``);
    }
  } else {
    writeFileSync(out, ts);
    console.log(`generated src/types/generated/${file.replace('.schema.json', '.ts')}`);
  }
}
if (stale) process.exit(1);
