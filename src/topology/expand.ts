// A candidate's full topology = the base preset (as AlpaSim's Hydra composes it) deep-merged with the
// candidate's `topology` block. normalise() gives the canonical, fully expanded form; its sha256 is the
// topology hash whose first 8 hex digits go into the job name.
import { createHash } from 'node:crypto';
import {
  DEFAULT_PHYSICS_CACHE_SIZE,
  DISABLED_GROUP_CHOICE,
  SERVICE_SWITCH_GROUPS,
  SERVICES,
  type ServiceName,
} from '../catalog/alpasim.js';
import { CONFIG_CATALOG, configGroup } from '../catalog/facts.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { Topology } from '../types/generated/topology.js';

type Plain = Record<string, unknown>;

function isPlainObject(value: unknown): value is Plain {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Objects merge key by key; lists, scalars and null replace (as Hydra overrides do). */
export function deepMerge<T>(base: T, over: unknown): T {
  if (!isPlainObject(base) || !isPlainObject(over)) return (over === undefined ? base : clone(over)) as T;
  const out: Plain = { ...clone(base) };
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) continue;
    out[key] = key in out ? deepMerge(out[key], value) : clone(value);
  }
  return out as T;
}

function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** A command-line group selection (`trafficsim=catk`, `+physics=disabled`) parsed from an override. */
export function parseGroupOverride(
  override: string,
): { group: string; option: string; append: boolean } | undefined {
  const m = /^(\+{0,2})([A-Za-z0-9_/]+)=([A-Za-z0-9_./-]+)$/.exec(override);
  if (!m || !configGroup(m[2]!)) return undefined;
  return { group: m[2]!, option: m[3]!, append: m[1] === '+' };
}

/** The choice the run makes for a config group (`trafficsim=catk`), from the experiment's fixed overrides. */
export function groupChoice(
  experiment: Pick<Experiment, 'fixed_inputs'> | undefined,
  group: string,
): string | undefined {
  const fi = experiment?.fixed_inputs;
  if (group === 'deploy' && fi?.deploy) return fi.deploy;
  if (group === 'driver' && fi?.driver) return fi.driver;
  let choice: string | undefined;
  for (const override of fi?.overrides ?? []) {
    const g = parseGroupOverride(override);
    if (g?.group === group) choice = g.option;
  }
  return choice;
}

/** `skip` as AlpaSim's composed config has it when neither the preset nor a group says otherwise. */
export function defaultSkip(
  experiment: Pick<Experiment, 'fixed_inputs'> | undefined,
  svc: ServiceName,
): boolean {
  const group = SERVICE_SWITCH_GROUPS[svc];
  if (!group) return false;
  return (groupChoice(experiment, svc) ?? group.default) === DISABLED_GROUP_CHOICE;
}

/** Dotted topology keys (as the catalogue lists them) as a nested topology. */
function nestKeys(keys: Record<string, unknown>): Topology {
  const out: Plain = {};
  for (const [key, value] of Object.entries(keys)) {
    const parts = key.split('.');
    let node = out;
    for (const p of parts.slice(0, -1)) {
      if (!isPlainObject(node[p])) node[p] = {};
      node = node[p] as Plain;
    }
    node[parts.at(-1)!] = clone(value);
  }
  return out as Topology;
}

/** The topology keys a group option sets, its own defaults list (same group folder) first. */
function optionLayer(group: string, option: string, depth = 0): Topology {
  const opt = configGroup(group)?.options[option];
  if (!opt || depth > 4) return {};
  let layer: Topology = {};
  for (const d of opt.defaults ?? [])
    if (!d.includes('=')) layer = deepMerge(layer, optionLayer(group, d, depth + 1));
  return deepMerge(layer, nestKeys(opt.topology));
}

/**
 * AlpaSim's composition order around the topology preset: base config, then the defaults list in order
 * (deploy, driver, driver_source before `topology`; trafficsim, controller, … after it, each with the command's
 * choice or its default), then the groups the command appends (`+physics=disabled`), in command order.
 * Returns the topology keys set before and after the preset.
 */
export function compositionLayers(experiment: Pick<Experiment, 'fixed_inputs'> | undefined): {
  before: Topology;
  after: Topology;
} {
  let before: Topology = nestKeys(
    Object.fromEntries(
      Object.entries(CONFIG_CATALOG.base_topology).filter(
        ([k]) => k.startsWith('defines.') || /^runtime\.endpoints\.[a-z]+\.skip$/.test(k),
      ),
    ),
  );
  let after: Topology = {};
  let seenTopology = false;
  const listed = new Set<string>();
  for (const entry of CONFIG_CATALOG.base_defaults) {
    const m = /^(?:optional )?([A-Za-z0-9_/]+)=(.*)$/.exec(entry);
    if (!m) continue;
    const group = m[1]!;
    listed.add(group);
    if (group === 'topology') {
      seenTopology = true;
      continue;
    }
    const choice = groupChoice(experiment, group) ?? (m[2] === 'null' ? undefined : m[2]);
    if (!choice) continue;
    const layer = optionLayer(group, choice);
    if (seenTopology) after = deepMerge(after, layer);
    else before = deepMerge(before, layer);
  }
  for (const override of experiment?.fixed_inputs.overrides ?? []) {
    const g = parseGroupOverride(override);
    if (g && !listed.has(g.group)) after = deepMerge(after, optionLayer(g.group, g.option));
  }
  return { before, after };
}

/**
 * The preset as the run composes it (see compositionLayers): the keys earlier layers set, the preset, the keys
 * later groups set (`+physics=disabled` skips physics even where the preset says `skip: false`), and `skip`
 * false for every other service the preset has. Overrides are diffed against this.
 */
export function expandPreset(preset: Topology, experiment?: Pick<Experiment, 'fixed_inputs'>): Topology {
  const { before, after } = compositionLayers(experiment);
  const out = deepMerge(deepMerge(before, preset), after);
  out.defines = { physics_cache_size: DEFAULT_PHYSICS_CACHE_SIZE, ...out.defines };
  out.runtime ??= {};
  out.runtime.endpoints ??= {};
  for (const svc of SERVICES) {
    if (!out.services?.[svc] && !out.runtime.endpoints[svc]) continue;
    const ep = out.runtime.endpoints[svc] ?? {};
    out.runtime.endpoints[svc] = { ...ep, skip: ep.skip ?? defaultSkip(experiment, svc) };
  }
  return normalise(out);
}

/** The candidate's full topology: expanded base preset deep-merged with the candidate's block. */
export function expandCandidate(base: Topology, candidateTopology: Topology | undefined): Topology {
  return normalise(deepMerge(base, candidateTopology ?? {}));
}

/** Canonical key order: AlpaSim's file order for known keys, alphabetical for the rest. */
const TOP_ORDER = ['defines', 'services', 'runtime', 'trafficsim', 'eval'];
const ORDER = [
  'nre_cache_size',
  'physics_cache_size',
  ...SERVICES,
  'gpus',
  'replicas_per_container',
  'nr_workers',
  'endpoints',
  'n_concurrent_rollouts',
  'skip',
  'server',
  'max_workers',
  'num_processes',
];

function rank(key: string, top: boolean): number {
  const order = top ? TOP_ORDER : ORDER;
  const i = order.indexOf(key);
  return i === -1 ? order.length : i;
}

function sortValue(value: unknown, top = false): unknown {
  if (Array.isArray(value)) return value.map((v) => sortValue(v));
  if (!isPlainObject(value)) return value;
  const out: Plain = {};
  for (const key of Object.keys(value).sort((a, b) => rank(a, top) - rank(b, top) || a.localeCompare(b))) {
    const v = value[key];
    if (v === undefined) continue;
    out[key] = sortValue(v);
  }
  return out;
}

/** Results of normalise(), so hashing and diffing an expanded topology do not normalise it again. */
const NORMALISED = new WeakSet<object>();

/** Canonical form: keys in AlpaSim's order, undefined dropped, empty mappings dropped. Treat the result as read-only. */
export function normalise(topology: Topology): Topology {
  if (NORMALISED.has(topology)) return topology;
  const out = dropEmpty(sortValue(topology, true)) as Topology;
  NORMALISED.add(out);
  return out;
}

function dropEmpty(value: unknown): unknown {
  if (!isPlainObject(value)) return value;
  const out: Plain = {};
  for (const [k, v] of Object.entries(value)) {
    const d = dropEmpty(v);
    if (isPlainObject(d) && Object.keys(d).length === 0) continue;
    out[k] = d;
  }
  return out;
}

/** JSON with keys sorted at every level: the same topology always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isPlainObject(value)) {
    const keys = Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** sha256 (hex) of the canonical JSON of the normalised, fully expanded topology. */
export function topologyHash(expanded: Topology): string {
  return createHash('sha256')
    .update(canonicalJson(normalise(expanded)))
    .digest('hex');
}

export function hash8(expanded: Topology): string {
  return topologyHash(expanded).slice(0, 8);
}

export interface Leaf {
  /** Hydra key, e.g. `services.driver.gpus`. */
  key: string;
  path: string[];
  value: unknown;
}

/** Every setting as a dotted key (lists are one value), in canonical order. */
export function topologyLeaves(topology: Topology): Leaf[] {
  const leaves: Leaf[] = [];
  const walk = (value: unknown, path: string[]) => {
    if (isPlainObject(value)) {
      for (const [k, v] of Object.entries(value)) walk(v, [...path, k]);
    } else {
      leaves.push({ key: path.join('.'), path, value });
    }
  };
  walk(normalise(topology), []);
  return leaves;
}

export interface Change {
  key: string;
  from: unknown;
  to: unknown;
}

/** Settings of `to` that differ from `from` (keys only in `from` are reported with `to: undefined`). */
export function topologyDiff(from: Topology, to: Topology): Change[] {
  const a = new Map(topologyLeaves(from).map((l) => [l.key, l.value]));
  const changes: Change[] = [];
  for (const leaf of topologyLeaves(to)) {
    const before = a.get(leaf.key);
    if (canonicalJson(before) !== canonicalJson(leaf.value))
      changes.push({ key: leaf.key, from: before, to: leaf.value });
    a.delete(leaf.key);
  }
  for (const [key, before] of a) changes.push({ key, from: before, to: undefined });
  return changes;
}

/** A value as Hydra override text: lists as `[0,0,1,1]`, null as `null`. */
export function hydraValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map(hydraValue).join(',')}]`;
  return String(value);
}
