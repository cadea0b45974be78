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
  const local = new Set(
    Object.values(schema.$defs ?? {})
      .map((d) => d?.title)
      .filter(Boolean),
  );
  const imports = importExternalRefs(schema, new Map(), local);
  const importLines = [...imports]
    .map(([module, names]) => `import type { ${[...names].sort().join(', ')} } from './${module}.js';`)
    .join('\n');
  const ts = await compile(schema, schema.title ?? file, {
    bannerComment: `/* Generated from topologies/schema/${file} by scripts/gen-types.mjs. Do not edit. */${importLines ? `\n${importLines}` : ''}`,
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

/**
 * A `$ref` to another schema file becomes an import of that file's type instead of an inlined copy:
 * the node is replaced by `tsType: <Title>` and the import is collected (module → names).
 */
function importExternalRefs(node, imports = new Map(), local = new Set()) {
  if (Array.isArray(node)) {
    for (const item of node) importExternalRefs(item, imports, local);
  } else if (node && typeof node === 'object') {
    const ref = node.$ref;
    if (typeof ref === 'string' && !ref.startsWith('#')) {
      const [target, pointer = ''] = ref.split('#');
      const targetSchema = JSON.parse(readFileSync(join(schemaDir, target), 'utf8'));
      const def = pointer
        .split('/')
        .filter(Boolean)
        .reduce((n, key) => n?.[key], targetSchema);
      if (!def?.title) throw new Error(`${ref}: the referenced schema needs a title to be imported by name`);
      const module = target.replace('.schema.json', '');
      if (!imports.has(module)) imports.set(module, new Set());
      // a title the importing schema defines too is imported under its module's prefix
      const alias = local.has(def.title)
        ? `${module[0].toUpperCase()}${module.slice(1).replace(/-(.)/g, (_, c) => c.toUpperCase())}${def.title}`
        : def.title;
      imports.get(module).add(alias === def.title ? def.title : `${def.title} as ${alias}`);
      delete node.$ref;
      node.tsType = alias;
    }
    for (const value of Object.values(node)) importExternalRefs(value, imports, local);
  }
  return imports;
}
