// Hydra overrides checked against AlpaSim's config tree (src/catalog/generated/config-keys.json): the key
// must exist (or, with `+`, sit where Hydra may add it), a group choice must name a shipped option, and keys
// that reach into Hydra itself or instantiate code are refused. One checker for experiments, `topo init` and
// render, so validation refuses exactly what render would.
import { CONFIG_CATALOG, configGroup, isConfigKey, isUnderOpenKey } from '../catalog/facts.js';

/**
 * `[+|++]key=value`; the value may hold spaces and Hydra quotes (`scenes.scene_ids='["id"]'`) but no `$`, backticks,
 * backslashes, shell operators or control characters.
 */
export const OVERRIDE_SYNTAX =
  /^(\+{0,2})([A-Za-z_][A-Za-z0-9_]*(?:[./][A-Za-z_0-9][A-Za-z0-9_]*)*)=([^\u0000-\u001f\u007f`$\\;&|<>]{0,500})$/;

/** Key segments that make Hydra instantiate objects, set the process environment or run callbacks. */
const FORBIDDEN_SEGMENTS = new Set([
  '_target_',
  '_args_',
  '_partial_',
  '_recursive_',
  '_convert_',
  'env_set',
  'callbacks',
]);

export interface OverrideProblem {
  rule: 'bad-format' | 'override-forbidden' | 'override-unknown';
  /**
   * error: refused everywhere. warning: not in the public config tree, but AlpaSim's plugins (plugins/internal)
   * may add it, e.g. `deploy=ord`, `trafficsim=internal`; a near miss of a public name is an error.
   */
  severity: 'error' | 'warning';
  message: string;
}

export interface ParsedOverride {
  prefix: '' | '+' | '++';
  key: string;
  value: string;
}

export function parseOverride(text: string): ParsedOverride | undefined {
  const m = OVERRIDE_SYNTAX.exec(text);
  if (!m) return undefined;
  return { prefix: m[1] as ParsedOverride['prefix'], key: m[2]!, value: m[3]! };
}

/** The first problem of an override, or undefined when AlpaSim's config accepts it. */
export function overrideProblem(text: string): OverrideProblem | undefined {
  const o = parseOverride(text);
  if (!o) {
    return {
      rule: 'bad-format',
      severity: 'error',
      message: `\`${text}\` is not a Hydra override AlpaSim takes: write [+|++]key=value with a dotted key and a value without \`$\`, backticks, backslashes or shell characters`,
    };
  }
  const segments = o.key.split(/[./]/);
  if (segments[0] === 'hydra' || segments.some((s) => FORBIDDEN_SEGMENTS.has(s))) {
    return {
      rule: 'override-forbidden',
      severity: 'error',
      message: `\`${o.key}\` reaches into Hydra itself (hydra.*, _target_, _args_, env_set, callbacks) and could run code or change the job's environment: topo never passes it to sbatch; remove it`,
    };
  }
  const group = configGroup(o.key);
  if (group) return groupProblem(o, group);
  if (o.key.includes('/')) {
    const hint = suggest(o.key, Object.keys(CONFIG_CATALOG.groups));
    return {
      rule: 'override-unknown',
      severity: hint ? 'error' : 'warning',
      message: `\`${o.key}\` is not a config group of AlpaSim's public configs${hint || PLUGIN_NOTE}`,
    };
  }
  return keyProblem(o);
}

function groupProblem(
  o: ParsedOverride,
  group: NonNullable<ReturnType<typeof configGroup>>,
): OverrideProblem | undefined {
  const options = Object.keys(group.options);
  if (!group.options[o.value]) {
    const hint = suggest(o.value, options);
    return {
      rule: 'override-unknown',
      severity: hint ? 'error' : 'warning',
      message: `\`${o.key}=${o.value}\`: AlpaSim's public configs have no ${o.key} option \`${o.value}\`${hint || PLUGIN_NOTE}; options: ${options.join(', ')}`,
    };
  }
  const listed = CONFIG_CATALOG.base_defaults.some((d) =>
    d.replace(/^optional /, '').startsWith(`${o.key}=`),
  );
  if (!listed && o.prefix === '') {
    return {
      rule: 'override-unknown',
      severity: 'error',
      message: `\`${o.key}=${o.value}\`: group ${o.key} is not in AlpaSim's defaults list, so Hydra refuses a plain override: append it with \`+${o.key}=${o.value}\``,
    };
  }
  return undefined;
}

function parentOf(key: string): string {
  return key.slice(0, Math.max(0, key.lastIndexOf('.')));
}

function keyProblem(o: ParsedOverride): OverrideProblem | undefined {
  if (isConfigKey(o.key)) return undefined;
  // An element of a list (runtime.simulation_config.cameras.0.frame_interval_us): the list must exist.
  const index = o.key.split('.').findIndex((seg) => /^[0-9]+$/.test(seg));
  if (index > 0 && isConfigKey(o.key.split('.').slice(0, index).join('.'))) return undefined;
  if (o.prefix !== '') {
    const parent = parentOf(o.key);
    if (isUnderOpenKey(o.key) || (parent && isConfigKey(parent))) return undefined;
  }
  const hint = suggest(o.key, CONFIG_CATALOG.keys);
  return {
    rule: 'override-unknown',
    // Beneath a free-form mapping (driver.*, controller.*, runtime.*) a plugin's group may define the key.
    severity: hint || !isUnderOpenKey(o.key) ? 'error' : 'warning',
    message: `\`${o.key}\` is not a key of AlpaSim's config (NVlabs/alpasim@${CONFIG_CATALOG.source.commit.slice(0, 7)})${hint}${o.prefix === '' && !hint ? '; to add a new key Hydra needs `+key=value`' : ''}`,
  };
}

const PLUGIN_NOTE = ' (an AlpaSim plugin may provide it: check the name)';

/**
 * The experiment's driver, checked as `driver=<name>` is: the same note (and "did you mean") as any
 * unknown value, but a warning even for a near miss: the run command it came from ran with it, so a
 * plugin of the team's may well provide it.
 */
export function driverProblem(driver: string): OverrideProblem | undefined {
  const problem = overrideProblem(`driver=${driver}`);
  return problem?.rule === 'override-unknown' ? { ...problem, severity: 'warning' } : problem;
}

/** ` (did you mean `x`?)` for the closest candidate within a small edit distance, else ''. */
export function suggest(word: string, candidates: readonly string[]): string {
  let best: string | undefined;
  let bestD = Number.POSITIVE_INFINITY;
  const limit = Math.max(2, Math.floor(word.length / 5));
  const parent = word.slice(0, word.lastIndexOf('.') + 1);
  const last = word.slice(parent.length);
  for (const c of candidates) {
    // A truncated last segment (defines.nre_cache for defines.nre_cache_size) is a near miss too.
    const truncated =
      parent && c.startsWith(parent) && last.length >= 3 && c.slice(parent.length).startsWith(last);
    if (!truncated && Math.abs(c.length - word.length) > limit) continue;
    const d = truncated && !c.slice(parent.length).includes('.') ? 1 : distance(word, c, limit);
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return best !== undefined && bestD <= limit ? ` (did you mean \`${best}\`?)` : '';
}

/** Levenshtein distance, giving up (returning limit + 1) once every row exceeds the limit. */
function distance(a: string, b: string, limit: number): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      row.push(v);
      rowMin = Math.min(rowMin, v);
    }
    if (rowMin > limit) return limit + 1;
    prev = row;
  }
  return prev[b.length]!;
}
