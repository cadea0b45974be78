// Loads and validates a twin hardware profile: src/sim/profiles/<deploy>.yaml, found from the repo root so the
// bundled CLI (<repo>/dist/topo.js) and the sources (<repo>/src/sim) both find it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { isMap, isSeq, LineCounter, parseDocument } from 'yaml';
import type { TwinProfile } from '../types/generated/twin-profile.js';

export const PROFILE_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** The repository root: the nearest ancestor of this module (source or bundle) holding package.json. */
export function repoRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = resolve(from);
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'topologies'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the repository root above ${from}`);
    dir = up;
  }
}

export function profilesDir(root = repoRoot()): string {
  return join(root, 'src/sim/profiles');
}

export function listProfiles(root = repoRoot()): string[] {
  return readdirSync(profilesDir(root))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.slice(0, -5))
    .sort();
}

let validator: ReturnType<Ajv2020['compile']> | undefined;
function validate(root: string) {
  if (!validator) {
    const schema = JSON.parse(readFileSync(join(root, 'topologies/schema/twin-profile.schema.json'), 'utf8'));
    validator = new Ajv2020({ allErrors: true, strict: false }).compile(schema);
  }
  return validator;
}

/** Parses and validates profile text; errors name the file, line and key. */
export function parseProfile(text: string, file: string, root = repoRoot()): TwinProfile {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc });
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    throw new Error(`${file}:${e.linePos?.[0]?.line ?? 1}: invalid YAML: ${e.message.split('\n')[0]}`);
  }
  const data = doc.toJS();
  const check = validate(root);
  if (!check(data)) {
    const msgs = (check.errors ?? []).map((err) => {
      const path = err.instancePath.split('/').filter(Boolean);
      const extra = (err.params as { additionalProperty?: string }).additionalProperty;
      const keyPath = extra ? [...path, extra] : path;
      const line = lineOf(doc, keyPath, lc);
      const key = keyPath.join('.') || '(top level)';
      return `${file}:${line}: ${key}: ${extra ? 'unknown key (not in twin-profile.schema.json)' : err.message}`;
    });
    throw new Error(`invalid twin profile\n${msgs.join('\n')}`);
  }
  return data as TwinProfile;
}

function lineOf(doc: ReturnType<typeof parseDocument>, path: string[], lc: LineCounter): number {
  let node: unknown = doc.contents;
  let offset = 0;
  for (const key of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => String((p.key as { value?: unknown })?.value) === key);
      if (!pair) break;
      offset = (pair.key as { range?: [number, number] }).range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node)) {
      node = node.items[Number(key)];
      offset = (node as { range?: [number, number] })?.range?.[0] ?? offset;
    } else break;
  }
  return lc.linePos(offset).line;
}

/** Loads src/sim/profiles/<name>.yaml; the name must equal the file's `name`. */
export function loadProfile(name: string, root = repoRoot()): TwinProfile {
  if (!PROFILE_NAME_PATTERN.test(name)) {
    throw new Error(`deploy=${name}: not a twin profile name (lower-case letters, digits and dashes)`);
  }
  const file = join(profilesDir(root), `${name}.yaml`);
  if (!existsSync(file)) {
    throw new Error(
      `deploy=${name}: no twin profile ${file}; known deploys: ${listProfiles(root).join(', ')}`,
    );
  }
  const profile = parseProfile(readFileSync(file, 'utf8'), file, root);
  if (profile.name !== name)
    throw new Error(`${file}: name is "${profile.name}", expected "${name}" (the file name)`);
  return profile;
}
