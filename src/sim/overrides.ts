// The twin plays AlpaSim's wizard: it parses the Hydra overrides AlpaSim's submit.sh receives and refuses what
// AlpaSim would refuse. Deliberately independent of src/topology's renderer, so rendering is checked end to end.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  CACHE_KEYS,
  CLI_DRIVEN_PRESET,
  DISABLED_GROUP_CHOICE,
  PRESETS,
  REQUIRED_GROUPS,
  RUN_NAME_OVERRIDE,
  SERVICE_SWITCH_GROUPS,
  SERVICES,
  type ServiceName,
} from '../catalog/alpasim.js';
import type { Topology } from '../types/generated/topology.js';

export interface TwinInvocation {
  deploy: string;
  preset: string;
  driver: string;
  runName?: string;
  topology: Topology;
  testSuiteId?: string;
  nRollouts: number;
  /** Every override as given, for the log. */
  overrides: string[];
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const KEY = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
/** Config groups the twin accepts besides the mandatory ones (trafficsim/physics switch services on and off). */
const OPTIONAL_GROUPS = [
  'trafficsim',
  'physics',
  'controller',
  'renderer',
  'driver_source',
  'scenes_catalog',
  'image_defaults',
];
/** Prefixes the twin accepts without interpreting them (they change what is simulated, not the topology). */
const PASS_THROUGH = [
  'scenes.',
  'wizard.',
  'runtime.simulation_config.',
  'eval.',
  'trafficsim.',
  'cameras',
  'control_timestep_us',
  'defines.',
];

export class OverrideError extends Error {}

/** Parses a Hydra value: null, booleans, numbers, flat lists `[0,0,1]`, else a string. */
export function parseValue(raw: string): unknown {
  const v = raw.trim();
  if (v === 'null' || v === '~') return null;
  if (v === 'true' || v === 'false') return v === 'true';
  if (/^-?\d+$/.test(v)) return Number(v);
  if (/^-?\d+\.\d*(e-?\d+)?$/.test(v)) return Number(v);
  if (v.startsWith('[')) {
    if (!v.endsWith(']')) throw new OverrideError(`malformed list "${raw}": missing "]"`);
    const inner = v.slice(1, -1).trim();
    if (inner === '') return [];
    return inner.split(',').map((x) => {
      const item = parseValue(x);
      if (Array.isArray(item))
        throw new OverrideError(`malformed list "${raw}": nested lists are not supported`);
      return item;
    });
  }
  return v.replace(/^(['"])(.*)\1$/, '$2');
}

export function parseOverrides(
  argv: string[],
  opts: { repoRoot: string; gpusPerNode: number },
): TwinInvocation {
  const { groups, sets } = splitOverrides(argv);
  const preset = groups.topology!;
  const topology = presetTopology(groups, opts.repoRoot);
  const inv: TwinInvocation = {
    deploy: groups.deploy!,
    preset,
    driver: groups.driver!,
    topology,
    nRollouts: 1,
    overrides: [...argv],
  };
  for (const { key, value } of sets) applySet(inv, key, value, opts.gpusPerNode);
  switchServices(topology, groups, sets);
  for (const svc of SERVICES) {
    const gpus = topology.services?.[svc]?.gpus;
    if (Array.isArray(gpus)) checkGpus(`services.${svc}.gpus`, gpus, opts.gpusPerNode);
  }
  return inv;
}

interface KeySet {
  key: string;
  value: unknown;
  raw: string;
}

/** Config group choices (`topology=8gpu`) apart from key overrides (`services.driver.gpus=[1]`). */
function splitOverrides(argv: string[]): { groups: Record<string, string>; sets: KeySet[] } {
  const groups: Record<string, string> = {};
  const sets: KeySet[] = [];
  for (const arg of argv) {
    const m = /^(\+{0,2})([^=]+)=(.*)$/s.exec(arg);
    if (!m) throw new OverrideError(`"${arg}": not a Hydra override (expected key=value)`);
    const key = m[2]!.trim();
    if (!KEY.test(key)) throw new OverrideError(`"${arg}": "${key}" is not a valid config key`);
    let value: unknown;
    try {
      value = parseValue(m[3]!);
    } catch (e) {
      throw new OverrideError(`${key}: ${(e as Error).message}`);
    }
    if ((REQUIRED_GROUPS as readonly string[]).includes(key) || OPTIONAL_GROUPS.includes(key)) {
      if (typeof value !== 'string' || !NAME.test(value)) {
        throw new OverrideError(`${key}=${m[3]}: not a config name`);
      }
      groups[key] = value;
      continue;
    }
    sets.push({ key, value, raw: arg });
  }
  return { groups, sets };
}

/** The topology preset the mandatory groups name, read from topologies/presets. */
function presetTopology(groups: Record<string, string>, repoRoot: string): Topology {
  const missing = REQUIRED_GROUPS.filter((g) => !groups[g]);
  if (missing.length) {
    throw new OverrideError(
      `missing mandatory config group${missing.length > 1 ? 's' : ''} ${missing.map((g) => `${g}=<name>`).join(', ')} (AlpaSim needs deploy=, topology= and driver=)`,
    );
  }
  const preset = groups.topology!;
  const presetFile = join(repoRoot, 'topologies/presets', `${preset}.yaml`);
  if (preset === CLI_DRIVEN_PRESET) {
    throw new OverrideError(
      `topology=${preset}: AlpaSim's CLI-driven daemon preset takes its GPUs and concurrency from the launch script; the twin runs the file presets: ${PRESETS.join(', ')}`,
    );
  }
  if (!(PRESETS as readonly string[]).includes(preset) || !existsSync(presetFile)) {
    throw new OverrideError(`topology=${preset}: unknown topology preset; known: ${PRESETS.join(', ')}`);
  }
  return parseYaml(readFileSync(presetFile, 'utf8')) as Topology;
}

/** Services switched by a config group (trafficsim is disabled unless an implementation is chosen). */
function switchServices(topology: Topology, groups: Record<string, string>, sets: readonly KeySet[]): void {
  for (const [svc, group] of Object.entries(SERVICE_SWITCH_GROUPS)) {
    const name = svc as ServiceName;
    topology.runtime ??= {};
    topology.runtime.endpoints ??= {};
    const ep = topology.runtime.endpoints;
    const current = ep[name];
    // Hydra's order: preset, then the chosen group (+physics=disabled beats the preset's skip: false), then
    // key overrides (an explicit runtime.endpoints.<svc>.skip=… wins over both).
    if (sets.some((x) => x.key === `runtime.endpoints.${name}.skip`)) continue;
    const chosen = groups[name];
    if (chosen === undefined && current?.skip !== undefined) continue;
    const choice = chosen ?? group?.default;
    if (topology.services?.[name] || current)
      ep[name] = { ...current, skip: choice === DISABLED_GROUP_CHOICE };
  }
}

function applySet(inv: TwinInvocation, key: string, value: unknown, gpusPerNode: number): void {
  const t = inv.topology;
  const parts = key.split('.');
  if (key === RUN_NAME_OVERRIDE) {
    if (typeof value !== 'string' || !NAME.test(value)) throw new OverrideError(`${key}: not a run name`);
    inv.runName = value;
    return;
  }
  if (key === 'scenes.test_suite_id') {
    inv.testSuiteId = String(value);
    return;
  }
  if (key === 'runtime.simulation_config.n_rollouts') {
    inv.nRollouts = positiveInt(key, value);
    return;
  }
  if (parts[0] === 'services') {
    setServiceKey(t, key, value, gpusPerNode);
    return;
  }
  if (parts[0] === 'runtime' && parts[1] === 'endpoints') {
    setEndpointKey(t, key, value);
    return;
  }
  if (key === 'runtime.nr_workers') {
    t.runtime ??= {};
    t.runtime.nr_workers = positiveInt(key, value);
    return;
  }
  if (parts[0] === 'defines' && (parts[1] === CACHE_KEYS.renderer || parts[1] === CACHE_KEYS.physics)) {
    t.defines ??= {};
    t.defines[parts[1] as 'nre_cache_size'] = positiveInt(key, value);
    return;
  }
  if (parts[0] === 'runtime' && !key.startsWith('runtime.simulation_config.')) {
    throw new OverrideError(`${key}: unknown runtime key`);
  }
  if (!PASS_THROUGH.some((p) => key === p || key.startsWith(p))) {
    throw new OverrideError(`${key}: key not in AlpaSim's config (use +${key}=… to add a new key)`);
  }
}

/** `services.<svc>.gpus` and `services.<svc>.replicas_per_container`. */
function setServiceKey(t: Topology, key: string, value: unknown, gpusPerNode: number): void {
  const parts = key.split('.');
  const svc = service(key, parts[1]);
  const field = parts[2];
  t.services ??= {};
  t.services[svc] ??= {};
  const spec = t.services[svc];
  if (parts.length !== 3) throw new OverrideError(`${key}: unknown key`);
  if (field === 'gpus') {
    if (value === null) {
      spec.gpus = null;
      return;
    }
    if (!Array.isArray(value) || value.length === 0) {
      throw new OverrideError(
        `${key}=${String(value)}: expected a non-empty list of GPU indices like [0,1] or null`,
      );
    }
    checkGpus(key, value, gpusPerNode);
    spec.gpus = value as [number, ...number[]];
    return;
  }
  if (field === 'replicas_per_container') {
    spec.replicas_per_container = positiveInt(key, value);
    return;
  }
  throw new OverrideError(`${key}: unknown key (services.<svc> has gpus and replicas_per_container)`);
}

/** `runtime.endpoints.<svc>.n_concurrent_rollouts` and `runtime.endpoints.<svc>.skip`. */
function setEndpointKey(t: Topology, key: string, value: unknown): void {
  const parts = key.split('.');
  const svc = service(key, parts[2]);
  t.runtime ??= {};
  t.runtime.endpoints ??= {};
  t.runtime.endpoints[svc] ??= {};
  const ep = t.runtime.endpoints[svc];
  if (parts.length !== 4) throw new OverrideError(`${key}: unknown key`);
  if (parts[3] === 'n_concurrent_rollouts') {
    ep.n_concurrent_rollouts = positiveInt(key, value);
    return;
  }
  if (parts[3] === 'skip') {
    if (typeof value !== 'boolean')
      throw new OverrideError(`${key}=${String(value)}: expected true or false`);
    ep.skip = value;
    return;
  }
  throw new OverrideError(`${key}: unknown key (endpoints have n_concurrent_rollouts and skip)`);
}

function service(key: string, name: string | undefined): ServiceName {
  if (!name || !(SERVICES as readonly string[]).includes(name)) {
    throw new OverrideError(`${key}: unknown service "${name ?? ''}"; services are ${SERVICES.join(', ')}`);
  }
  return name as ServiceName;
}

function positiveInt(key: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new OverrideError(`${key}=${String(value)}: expected a positive integer`);
  }
  return value;
}

function checkGpus(key: string, gpus: unknown[], gpusPerNode: number): void {
  for (const g of gpus) {
    if (typeof g !== 'number' || !Number.isInteger(g) || g < 0) {
      throw new OverrideError(`${key}: "${String(g)}" is not a GPU index (non-negative integer)`);
    }
    if (g >= gpusPerNode) {
      throw new OverrideError(`${key}: GPU index ${g} is not below the node's ${gpusPerNode} GPUs`);
    }
  }
}
