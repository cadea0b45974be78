// Schema validation with ajv (draft 2020-12, allErrors) against topologies/schema/*.schema.json,
// the one source of truth. Each ajv error is mapped from its JSON pointer back to the YAML node's
// line and rewritten as a message that says what is wrong and what would be right.
import type { ErrorObject, ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import candidateSchema from '../../topologies/schema/candidate.schema.json' with { type: 'json' };
import clustersSchema from '../../topologies/schema/clusters.schema.json' with { type: 'json' };
import experimentSchema from '../../topologies/schema/experiment.schema.json' with { type: 'json' };
import metricsSchema from '../../topologies/schema/metrics.schema.json' with { type: 'json' };
import topologySchema from '../../topologies/schema/topology.schema.json' with { type: 'json' };
import { formatKeyPath, type Issue, type PathSegment } from './issues.js';
import type { LoadedYaml } from './yaml.js';

export type SchemaName = 'topology' | 'candidate' | 'clusters' | 'experiment';

const SCHEMAS: Record<SchemaName, { $id: string }> = {
  topology: topologySchema,
  candidate: candidateSchema,
  clusters: clustersSchema,
  experiment: experimentSchema,
};

let ajv: InstanceType<typeof Ajv2020> | undefined;
const compiled = new Map<SchemaName, ValidateFunction>();

function validator(name: SchemaName): ValidateFunction {
  let fn = compiled.get(name);
  if (fn) return fn;
  if (!ajv) {
    // verbose: errors carry the failing schema and data, which the messages quote.
    ajv = new Ajv2020({ allErrors: true, verbose: true, strict: true, strictTypes: false });
    for (const schema of Object.values(SCHEMAS)) ajv.addSchema(schema);
    // a candidate's `prediction` is metrics.schema.json's (the record keeps it beside the measured value)
    ajv.addSchema(metricsSchema);
  }
  fn = ajv.getSchema(SCHEMAS[name].$id) as ValidateFunction;
  compiled.set(name, fn);
  return fn;
}

/** Schema findings for a loaded YAML file (empty when valid). */
export function schemaIssues(loaded: LoadedYaml, name: SchemaName): Issue[] {
  const validate = validator(name);
  if (validate(loaded.value)) return [];
  // A bad map key fails `propertyNames` and its inner `pattern` (marked with propertyName): keep one.
  const errors = (validate.errors ?? []).filter(
    (e) => !(e.keyword !== 'propertyNames' && e.propertyName !== undefined),
  );
  const issues = errors.map((e) => toIssue(e, loaded, name));
  return dedupe(issues);
}

/** True when `value` matches the schema (for data that does not come from a file, e.g. a preset). */
export function matchesSchema(value: unknown, name: SchemaName): boolean {
  return validator(name)(value) === true;
}

function dedupe(issues: Issue[]): Issue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const key = `${i.line}:${i.column}:${i.keyPath}:${i.rule}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export function pointerToPath(pointer: string): PathSegment[] {
  if (!pointer) return [];
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^(0|[1-9][0-9]*)$/.test(s) ? Number(s) : s));
}

function show(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string')
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (Array.isArray(value)) return `a list`;
  if (typeof value === 'object') return 'a mapping';
  return String(value);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a decimal number';
  return `a ${typeof value}`;
}

const TYPE_WORDS: Record<string, string> = {
  integer: 'a whole number',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  object: 'a mapping of keys',
  array: 'a list',
  null: 'null',
};

function describeOf(schema: unknown): string {
  const d = (schema as { description?: string } | undefined)?.description;
  return d ? ` (${d.replace(/\.$/, '')})` : '';
}

function rangeOf(schema: Record<string, unknown>): string {
  const min = schema.minimum ?? schema.exclusiveMinimum;
  const max = schema.maximum ?? schema.exclusiveMaximum;
  const lo = schema.exclusiveMinimum !== undefined ? `above ${min}` : `at least ${min}`;
  const hi = schema.exclusiveMaximum !== undefined ? `below ${max}` : `at most ${max}`;
  if (min !== undefined && max !== undefined) return `${lo} and ${hi}`;
  if (min !== undefined) return lo;
  if (max !== undefined) return hi;
  return 'in range';
}

/** Keys people put in a candidate that are the experiment's fixed inputs. */
const FIXED_INPUT_NAMES = [
  'deploy',
  'driver',
  'scenes',
  'cameras',
  'rollouts_per_scene',
  'n_rollouts',
  'control_timestep_us',
  'simulation_config',
  'cluster',
  'base_topology',
  'topology_preset',
];

/** Where a misplaced topology key belongs, for a better hint than edit distance alone. */
const KEY_HOME: Record<string, string> = {
  gpus: 'services.<service>.gpus',
  replicas_per_container: 'services.<service>.replicas_per_container',
  n_concurrent_rollouts: 'runtime.endpoints.<service>.n_concurrent_rollouts',
  skip: 'runtime.endpoints.<service>.skip',
  nr_workers: 'runtime.nr_workers',
  nre_cache_size: 'defines.nre_cache_size',
  physics_cache_size: 'defines.physics_cache_size',
};

/** One schema error, read for a message: where it is, what the schema says there, what the file holds. */
interface SchemaFinding {
  error: ErrorObject;
  path: PathSegment[];
  parent: Record<string, unknown>;
  data: unknown;
  /** The key path in backquotes, or "the file". */
  where: string;
  schemaName: SchemaName;
  issue(rule: string, at: PathSegment[], message: string, key?: boolean): Issue;
}

function toIssue(error: ErrorObject, loaded: LoadedYaml, schemaName: SchemaName): Issue {
  const path = pointerToPath(error.instancePath);
  const finding: SchemaFinding = {
    error,
    path,
    parent: (error.parentSchema ?? {}) as Record<string, unknown>,
    data: error.data,
    where: path.length ? `\`${formatKeyPath(path)}\`` : 'the file',
    schemaName,
    issue: (rule, at, message, key = false) => ({
      rule,
      severity: 'error',
      file: loaded.file,
      ...loaded.locate(at, { key }),
      keyPath: formatKeyPath(at),
      message,
    }),
  };
  return (KEYWORD_ISSUES.get(error.keyword) ?? otherIssue)(finding);
}

/** The message for each JSON Schema keyword a file can break; other keywords get Ajv's own words. */
const KEYWORD_ISSUES = new Map<string, (f: SchemaFinding) => Issue>([
  ['additionalProperties', unknownKeyIssue],
  ['required', missingKeyIssue],
  ['type', typeIssue],
  ['minimum', rangeIssue],
  ['maximum', rangeIssue],
  ['exclusiveMinimum', rangeIssue],
  ['exclusiveMaximum', rangeIssue],
  ['minItems', sizeIssue],
  ['maxItems', sizeIssue],
  ['minProperties', sizeIssue],
  ['maxLength', sizeIssue],
  ['minLength', sizeIssue],
  ['pattern', patternIssue],
  ['propertyNames', propertyNameIssue],
  ['enum', enumIssue],
]);

function unknownKeyIssue({ error, path, parent, where, schemaName, issue }: SchemaFinding): Issue {
  const key = String((error.params as { additionalProperty: string }).additionalProperty);
  const known = Object.keys((parent.properties as Record<string, unknown>) ?? {});
  const at = [...path, key];
  const close = didYouMean(key, known);
  const home = KEY_HOME[key];
  let hint = close ? `did you mean \`${close}\`? ` : '';
  if (!close && home) hint = `\`${key}\` belongs at \`${home}\`. `;
  const inTopology = schemaName === 'candidate' && path[0] === 'topology';
  const fixedInput = schemaName === 'candidate' && path.length === 0 && FIXED_INPUT_NAMES.includes(key);
  const why =
    inTopology || fixedInput
      ? ' A candidate may change only AlpaSim topology keys; driver, deploy, scenes, cameras, frequencies and other fixed inputs stay as in experiment.yaml.'
      : '';
  return issue(
    'unknown-key',
    at,
    `unknown key \`${key}\` in ${where}.${why} ${hint}Allowed keys here: ${known.join(', ') || '(none)'}.`,
    true,
  );
}

function missingKeyIssue({ error, path, parent, where, issue }: SchemaFinding): Issue {
  const key = String((error.params as { missingProperty: string }).missingProperty);
  const sub = (parent.properties as Record<string, unknown> | undefined)?.[key];
  return issue(
    'missing-key',
    path,
    `missing required key \`${key}\` in ${where}${describeOf(sub)}: add it`,
    true,
  );
}

function typeIssue({ error, path, parent, data, where, issue }: SchemaFinding): Issue {
  const wanted = ([] as string[]).concat((error.params as { type: string | string[] }).type as string);
  const words = wanted.map((t) => TYPE_WORDS[t] ?? t).join(' or ');
  if (typeof data === 'number' && !Number.isFinite(data)) {
    return issue(
      'wrong-type',
      path,
      `${where} is ${data}, which is not a finite number: write ${words}${describeOf(parent)}`,
    );
  }
  const isFraction = wanted.includes('integer') && typeof data === 'number' && !Number.isInteger(data);
  if (isFraction) {
    return issue(
      'not-integer',
      path,
      `${where} is ${show(data)}, but it counts things and must be a whole number${describeOf(parent)}: use ${Math.floor(data as number) || 1} or ${Math.ceil(data as number)}`,
    );
  }
  const shown = show(data) === typeName(data) ? '' : ` (${show(data)})`;
  return issue(
    'wrong-type',
    path,
    `${where} is ${typeName(data)}${shown}, but must be ${words}${describeOf(parent)}`,
  );
}

function rangeIssue({ path, parent, data, where, issue }: SchemaFinding): Issue {
  const negative = typeof data === 'number' && data < 0;
  return issue(
    'out-of-range',
    path,
    `${where} is ${show(data)}${negative ? ' (negative)' : ''}, but must be ${rangeOf(parent)}${describeOf(parent)}`,
  );
}

function sizeIssue({ error, path, parent, where, issue }: SchemaFinding): Issue {
  return issue('out-of-range', path, `${where} ${error.message}${describeOf(parent)}`);
}

function patternIssue({ error, path, parent, data, where, issue }: SchemaFinding): Issue {
  const pattern = (error.params as { pattern: string }).pattern;
  return issue(
    'bad-format',
    path,
    `${where} is ${show(data)}, which does not match ${pattern}${describeOf(parent)}: use only the characters that pattern allows`,
  );
}

function propertyNameIssue({ error, path, where, issue }: SchemaFinding): Issue {
  const name = String((error.params as { propertyName: string }).propertyName);
  return issue(
    'bad-format',
    [...path, name],
    `the name \`${name}\` in ${where} is not allowed: use lowercase letters, digits, dashes and underscores, starting with a letter or digit`,
    true,
  );
}

function enumIssue({ error, path, data, where, issue }: SchemaFinding): Issue {
  const allowed = (error.params as { allowedValues: unknown[] }).allowedValues;
  const close = typeof data === 'string' ? didYouMean(data, allowed.map(String)) : undefined;
  return issue(
    'bad-value',
    path,
    `${where} is ${show(data)}, but must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}${close ? ` (did you mean ${JSON.stringify(close)}?)` : ''}`,
  );
}

function otherIssue({ error, path, parent, where, issue }: SchemaFinding): Issue {
  return issue('schema', path, `${where} ${error.message ?? 'is invalid'}${describeOf(parent)}`);
}

/** The known key closest to `word` when it is a plausible typo, else undefined. */
export function didYouMean(word: string, known: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  let best: { key: string; distance: number } | undefined;
  for (const key of known) {
    const d = editDistance(lower, key.toLowerCase());
    if (!best || d < best.distance) best = { key, distance: d };
  }
  if (!best) return undefined;
  const limit = Math.max(2, Math.floor(Math.max(word.length, best.key.length) / 3));
  if (best.distance <= limit) return best.key;
  // A separator slip (`nreCacheSize`, `nre-cache-size`) is still the same key; so is a shortened one (`replicas`).
  const squash = (s: string) => s.toLowerCase().replace(/[-_\s]/g, '');
  return (
    known.find((k) => squash(k) === squash(word)) ??
    (word.length >= 4 ? known.find((k) => squash(k).startsWith(squash(word))) : undefined)
  );
}

/** Damerau-Levenshtein (optimal string alignment) distance. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i]!;
      row[j] = Math.min(d[i - 1]![j]! + 1, row[j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        row[j] = Math.min(row[j]!, d[i - 2]![j - 2]! + 1);
      }
    }
  }
  return d[a.length]![b.length]!;
}
