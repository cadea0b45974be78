// The JSON Schemas of the CLI's --json outputs (schemas/cli/<command>.schema.json), compiled once.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsImport from 'ajv-formats';
import { repoRoot } from './run-action.js';

// ajv-formats is CommonJS: its default export arrives wrapped in some module modes.
const addFormats = ((addFormatsImport as unknown as { default?: unknown }).default ?? addFormatsImport) as (
  ajv: Ajv2020,
) => void;

export const CLI_SCHEMA_DIR = join(repoRoot, 'schemas/cli');
const ajv = new Ajv2020({
  allErrors: true,
  strict: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
});
addFormats(ajv);
export const cliSchemaNames = readdirSync(CLI_SCHEMA_DIR)
  .filter((f) => f.endsWith('.schema.json'))
  .map((f) => f.slice(0, -'.schema.json'.length))
  .sort();
const validators = new Map(
  cliSchemaNames.map((n) => [
    n,
    ajv.compile(JSON.parse(readFileSync(join(CLI_SCHEMA_DIR, `${n}.schema.json`), 'utf8'))),
  ]),
);

/** The schema's errors for `doc` (empty when it conforms), and every camelCase key in it. */
export function cliSchemaErrors(command: string, doc: unknown): string[] {
  const validate = validators.get(command);
  if (!validate) throw new Error(`no schemas/cli/${command}.schema.json`);
  const errors = validate(doc) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  return [...errors, ...camelCaseKeys(doc).map((p) => `${p} is camelCase: every --json key is snake_case`)];
}

/** JSON pointers of the keys with a lower-to-upper hump (jobName); UPPER_CASE (env names) is fine. */
export function camelCaseKeys(doc: unknown, at = ''): string[] {
  if (Array.isArray(doc)) return doc.flatMap((v, i) => camelCaseKeys(v, `${at}/${i}`));
  if (doc === null || typeof doc !== 'object') return [];
  return Object.entries(doc).flatMap(([k, v]) => [
    ...(/[a-z][A-Z]/.test(k) ? [`${at}/${k}`] : []),
    ...camelCaseKeys(v, `${at}/${k}`),
  ]);
}
