// Where a base preset comes from: one rule for every command and action (init, validate, submit,
// the monitor, the record, suggest, the demo), in this order:
//   1. an explicit override folder (TOPO_PRESETS_DIR, the validate action's presets-dir input);
//   2. the repository's own <topologies>/presets/<name>.yaml, which overrides a shipped preset of the
//      same name (and is reported as such: `describePreset`);
//   3. the presets shipped with this version of alpasim-topo (src/topology/shipped.ts), so a
//      repository written by `topo setup` needs no copy.
// The repository's file is read through the caller's reader (the working tree, or the default
// branch through the API); the override and shipped folders are local.
import { readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, posix, resolve } from 'node:path';
import { shippedRoot } from './shipped.js';

export const PRESET_NAME = /^[A-Za-z0-9_]{1,64}$/;

export type PresetOrigin = 'override' | 'repository' | 'shipped';

export interface PresetOptions {
  /** Folder of the topology files in the repository (default `topologies`). */
  topologiesDir?: string;
  /** Absolute folder searched first (TOPO_PRESETS_DIR); none by default. */
  overrideDir?: string;
  /** Absolute folder of the shipped presets; default this version's, null for none. */
  shippedDir?: string | null;
}

export interface PresetLocation {
  origin: PresetOrigin;
  /** Repository-relative for `repository`, absolute for the others. */
  path: string;
}

export interface FoundPreset {
  name: string;
  text: string;
  /** Where it was read: repository-relative (origin repository) or absolute. */
  path: string;
  origin: PresetOrigin;
  /** A shipped preset of this name exists and this one is used instead. */
  overridesShipped: boolean;
}

export function shippedPresetsDir(): string | undefined {
  const root = shippedRoot();
  return root ? join(root, 'topologies', 'presets') : undefined;
}

/** The override folder from TOPO_PRESETS_DIR (relative to `base`), or undefined. */
export function presetOverrideDir(env: NodeJS.ProcessEnv, base: string): string | undefined {
  const dir = env.TOPO_PRESETS_DIR;
  if (!dir) return undefined;
  return isAbsolute(dir) ? dir : resolve(base, dir);
}

/** Where preset `name` is looked for, in order. Empty for a name that is not a preset name. */
export function presetLocations(name: string, options: PresetOptions = {}): PresetLocation[] {
  if (!PRESET_NAME.test(name)) return [];
  const file = `${name}.yaml`;
  const shipped = options.shippedDir === undefined ? shippedPresetsDir() : options.shippedDir;
  return [
    ...(options.overrideDir ? [{ origin: 'override' as const, path: join(options.overrideDir, file) }] : []),
    { origin: 'repository', path: posix.join(options.topologiesDir ?? 'topologies', 'presets', file) },
    ...(shipped ? [{ origin: 'shipped' as const, path: join(shipped, file) }] : []),
  ];
}

function readLocal(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function pick(
  name: string,
  locations: PresetLocation[],
  texts: (string | undefined)[],
): FoundPreset | undefined {
  const at = texts.findIndex((t) => t !== undefined);
  const location = locations[at];
  if (!location) return undefined;
  const shippedIndex = locations.findIndex((l) => l.origin === 'shipped');
  return {
    name,
    text: texts[at] as string,
    path: location.path,
    origin: location.origin,
    overridesShipped: location.origin !== 'shipped' && shippedIndex > at && texts[shippedIndex] !== undefined,
  };
}

/** The preset, reading the repository's copy through `repository` (a working tree or the API). */
export async function readPreset(
  name: string,
  repository: { read(path: string): Promise<string | undefined> },
  options: PresetOptions = {},
): Promise<FoundPreset | undefined> {
  const locations = presetLocations(name, options);
  const texts: (string | undefined)[] = [];
  for (const l of locations)
    texts.push(l.origin === 'repository' ? await repository.read(l.path) : readLocal(l.path));
  return pick(name, locations, texts);
}

/** The same rule over a checkout on this machine (`root` holds `<topologiesDir>/presets`). */
export function readPresetFromCheckout(
  name: string,
  root: string,
  options: PresetOptions = {},
): FoundPreset | undefined {
  const locations = presetLocations(name, options);
  return pick(
    name,
    locations,
    locations.map((l) => readLocal(l.origin === 'repository' ? join(root, l.path) : l.path)),
  );
}

/** "the repository's own topologies/presets/x.yaml, instead of the shipped one" and the like. */
export function describePreset(found: FoundPreset): string {
  switch (found.origin) {
    case 'override':
      return `${found.path} (TOPO_PRESETS_DIR${found.overridesShipped ? ', instead of the shipped one' : ''})`;
    case 'repository':
      return `the repository's own ${found.path}${found.overridesShipped ? ', instead of the one shipped with alpasim-topo' : ''}`;
    default:
      return 'the one shipped with alpasim-topo';
  }
}

/** Names of the presets each local folder holds (the override and shipped ones), for messages. */
export function localPresetNames(options: PresetOptions = {}): string[] {
  const dirs = [
    options.overrideDir,
    options.shippedDir === undefined ? shippedPresetsDir() : options.shippedDir,
  ];
  const names = new Set<string>();
  for (const dir of dirs) {
    if (!dir) continue;
    try {
      for (const f of readdirSync(dir)) if (f.endsWith('.yaml')) names.add(f.slice(0, -'.yaml'.length));
    } catch {}
  }
  return [...names].sort();
}

/** The not-found message: where it looked and what is there. */
export function presetNotFound(
  name: string,
  options: PresetOptions = {},
  repositoryNames: string[] = [],
): string {
  const looked = presetLocations(name, options).map((l) =>
    l.origin === 'repository'
      ? `the repository's ${posix.dirname(l.path)}/`
      : l.origin === 'shipped'
        ? 'the presets shipped with alpasim-topo'
        : `${l.path.slice(0, l.path.lastIndexOf('/') + 1)} (TOPO_PRESETS_DIR)`,
  );
  const known = [...new Set([...repositoryNames, ...localPresetNames(options)])].sort();
  return `no preset \`${name}\` in ${looked.join(', ')}${known.length ? ` (there: ${known.join(', ')})` : ''}`;
}
