#!/usr/bin/env node
// Generates catalogues of facts (names, keys, types, expressions) from AlpaSim's public repository at a pinned
// commit into src/catalog/generated/*.json: config keys and groups, metric names/types/label keys, recording
// rules, the dashboard's identity and variables. Facts only: no code or prose is copied.
//   node scripts/gen-alpasim-catalog.mjs --git-dir DIR [--commit SHA] [--out DIR] [--check]
// DIR is a clone or bare mirror of NVlabs/alpasim (or $ALPASIM_GIT_DIR). Beside the catalogues it writes
// manifest.json: the commit and each file's sha256. `--check` exits 1 when a committed file differs from what
// this script generates, 2 without a git dir and 3 when it is absent, so "stale" and "cannot check" differ.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const OUT_DIR = join(root, 'src/catalog/generated');
export const PINNED_COMMIT = '3032e0cfabbd9547e83d204d5bb011bb8e0c78e0';
const REPO = 'NVlabs/alpasim';
const CONFIG_DIR = 'src/wizard/configs';
const SCHEMA_FILE = 'src/wizard/alpasim_wizard/schema.py';
/** The runtime's own config dataclasses: `runtime:` of the wizard's config is their UserSimulatorConfig. */
const RUNTIME_CONFIG = 'src/runtime/alpasim_runtime/config.py';
/** Plugins bundled in the repository register config folders through this entry-point group. */
const PLUGINS_DIR = 'plugins';
const CONFIG_ENTRY_POINTS = 'alpasim.configs';
const RUNTIME_TELEMETRY = 'src/runtime/alpasim_runtime/telemetry/telemetry_context.py';
const PROCESS_EXPORTER = 'src/wizard/alpasim_wizard/telemetry/slurm_process_exporter.py';
const DCGM_COUNTERS = 'src/wizard/alpasim_wizard/telemetry/resources/dcgm-counters.csv';
const RULES_FILE = 'src/utils/alpasim_utils/telemetry/metrics_plot_recording_rules.yml';
const DASHBOARD_FILE = 'src/utils/alpasim_utils/telemetry/alpasim-runtime-dashboard.json';
/** Topology keys (as in src/topology): the composition record keeps what each group option sets of them. */
const TOPOLOGY_PREFIXES = [
  'defines.nre_cache_size',
  'defines.physics_cache_size',
  'services.',
  'runtime.nr_workers',
  'runtime.endpoints.',
  'trafficsim.server.max_workers',
  'eval.num_processes',
];
const TOPOLOGY_LEAVES =
  /^(services\.[a-z]+\.(gpus|replicas_per_container)|runtime\.endpoints\.[a-z]+\.(n_concurrent_rollouts|skip)|defines\.(nre|physics)_cache_size|runtime\.nr_workers|trafficsim\.server\.max_workers|eval\.num_processes)$/;

function git(gitDir, args) {
  return execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

/** Every key path of a parsed YAML mapping (intermediate paths too; lists are leaves). */
function keyPaths(value, prefix, out) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
  for (const [k, v] of Object.entries(value)) {
    if (k === 'defaults') continue;
    const p = prefix ? `${prefix}.${k}` : k;
    out.add(p);
    keyPaths(v, p, out);
  }
}

/** Leaf values (path -> value) of the topology keys a config sets. */
function topologyLeaves(value, prefix, out) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    if (TOPOLOGY_LEAVES.test(prefix)) out[prefix] = value;
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    if (k === 'defaults' && !prefix) continue;
    const p = prefix ? `${prefix}.${k}` : k;
    if (TOPOLOGY_PREFIXES.some((t) => p.startsWith(t) || t.startsWith(`${p}.`) || t === p))
      topologyLeaves(v, p, out);
  }
}

function packageOf(text, group) {
  const m = /^#\s*@package\s+(\S+)/m.exec(text);
  if (!m) return group.replaceAll('/', '.');
  return m[1] === '_global_' ? '' : m[1];
}

function nest(prefix, value) {
  if (!prefix) return value ?? {};
  return prefix.split('.').reduceRight((acc, k) => ({ [k]: acc }), value ?? {});
}

/** The dataclass schema: class -> [{ name, type }], and the open (free-form) prefixes, from `root` under `prefix`. */
function schemaKeys(text, root = 'AlpasimConfig', rootPrefix = '') {
  const classes = new Map();
  let current;
  for (const line of text.split('\n')) {
    const c = /^class (\w+)(?:\((\w+)\))?:/.exec(line);
    if (c) {
      current = { fields: [], base: c[2] };
      classes.set(c[1], current);
      continue;
    }
    const f = /^ {4}(\w+): ([^=]+?)(?:\s*=.*)?$/.exec(line);
    if (current && f && !line.trimStart().startsWith('#'))
      current.fields.push({ name: f[1], type: f[2].trim() });
  }
  const fieldsOf = (name) => {
    const cls = classes.get(name);
    if (!cls) return [];
    return [...(cls.base ? fieldsOf(cls.base) : []), ...cls.fields];
  };
  const keys = new Set();
  const open = new Set();
  const walk = (cls, prefix) => {
    for (const { name, type } of fieldsOf(cls)) {
      const p = prefix ? `${prefix}.${name}` : name;
      keys.add(p);
      const bare = type.replace(/\s*\|\s*None/, '').trim();
      if (classes.has(bare) && classes.get(bare).fields.length) walk(bare, p);
      else if (/^(DictConfig|dict\[)/.test(bare)) open.add(p);
    }
  };
  walk(root, rootPrefix);
  return { keys, open };
}

/**
 * Config folders the repository's bundled plugins register (pyproject.toml
 * `[project.entry-points."alpasim.configs"] name = "module.path"`): { plugin, dir } each.
 */
function pluginConfigDirs(gitDir, commit) {
  const tomls = git(gitDir, ['ls-tree', '-r', '--name-only', commit, PLUGINS_DIR])
    .split('\n')
    .filter((f) => /^plugins\/[^/]+\/pyproject\.toml$/.test(f));
  const dirs = [];
  for (const toml of tomls) {
    const text = git(gitDir, ['show', `${commit}:${toml}`]);
    const section = new RegExp(
      `^\\[project\\.entry-points\\."${CONFIG_ENTRY_POINTS.replace('.', '\\.')}"\\]\\s*$([\\s\\S]*?)(?=^\\[|(?![\\s\\S]))`,
      'm',
    ).exec(text);
    if (!section) continue;
    for (const m of section[1].matchAll(/^\s*([\w-]+)\s*=\s*"([\w.]+)"/gm))
      dirs.push({ plugin: m[1], dir: `${dirname(toml)}/${m[2].replaceAll('.', '/')}` });
  }
  return dirs.sort((a, b) => a.dir.localeCompare(b.dir));
}

function configCatalogue(gitDir, commit) {
  const yamlUnder = (dir) =>
    git(gitDir, ['ls-tree', '-r', '--name-only', commit, dir])
      .split('\n')
      .filter((f) => f.endsWith('.yaml'));
  const plugins = pluginConfigDirs(gitDir, commit);
  const sources = [
    ...yamlUnder(CONFIG_DIR).map((file) => ({ file, dir: CONFIG_DIR })),
    ...plugins.flatMap(({ plugin, dir }) => yamlUnder(dir).map((file) => ({ file, dir, plugin }))),
  ];
  const keys = new Set();
  const schema = schemaKeys(git(gitDir, ['show', `${commit}:${SCHEMA_FILE}`]));
  const runtime = schemaKeys(
    git(gitDir, ['show', `${commit}:${RUNTIME_CONFIG}`]),
    'UserSimulatorConfig',
    'runtime',
  );
  for (const k of [...schema.keys, ...runtime.keys]) keys.add(k);
  const groups = {};
  let baseDefaults = [];
  let baseTopology = {};
  for (const { file, dir, plugin } of sources) {
    const rel = file.slice(dir.length + 1, -'.yaml'.length);
    const text = git(gitDir, ['show', `${commit}:${file}`]);
    const data = parse(text) ?? {};
    const slash = rel.lastIndexOf('/');
    if (slash < 0) {
      keyPaths(data, '', keys);
      baseDefaults = (data.defaults ?? []).map((d) => (typeof d === 'string' ? d : Object.entries(d)[0]));
      topologyLeaves(data, '', baseTopology);
      baseTopology = Object.fromEntries(Object.entries(baseTopology).sort());
      continue;
    }
    const group = rel.slice(0, slash);
    const option = rel.slice(slash + 1);
    const pkg = packageOf(text, group);
    const placed = nest(pkg, data);
    keyPaths(placed, '', keys);
    const sets = {};
    topologyLeaves(placed, '', sets);
    const defaults = (data.defaults ?? [])
      .map((d) => (typeof d === 'string' ? d : Object.entries(d).map(([g, o]) => `${g}=${o}`)[0]))
      .filter((d) => d !== '_self_');
    groups[group] ??= { options: {} };
    groups[group].options[option] = {
      ...(plugin ? { plugin } : {}),
      package: pkg || '_global_',
      ...(defaults.length ? { defaults } : {}),
      topology: Object.fromEntries(Object.entries(sets).sort()),
    };
  }
  // base_config's defaults list: the choice each group has when the command names none.
  for (const d of baseDefaults) {
    if (!Array.isArray(d)) continue;
    const [g, choice] = d;
    const name = g.replace(/^optional /, '');
    if (groups[name]) groups[name].default = choice;
  }
  const sortedGroups = Object.fromEntries(
    Object.entries(groups)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([g, v]) => [
        g,
        {
          default: v.default ?? null,
          options: Object.fromEntries(Object.entries(v.options).sort(([a], [b]) => a.localeCompare(b))),
        },
      ]),
  );
  return {
    source: {
      repo: REPO,
      commit,
      paths: [CONFIG_DIR, SCHEMA_FILE, RUNTIME_CONFIG, ...plugins.map((p) => p.dir)],
    },
    composition: [
      'base_config',
      'base_config defaults (groups, in order)',
      'command-line groups',
      'command-line overrides',
    ],
    base_defaults: baseDefaults.map((d) => (Array.isArray(d) ? `${d[0]}=${d[1]}` : d)),
    base_topology: baseTopology,
    keys: [...keys].sort(),
    open: [...new Set([...schema.open, ...runtime.open])].sort(),
    groups: sortedGroups,
  };
}

/** Metrics registered by the runtime (prometheus_client constructors) and written by the process exporter. */
function metricsCatalogue(gitDir, commit) {
  const metrics = [];
  const rt = git(gitDir, ['show', `${commit}:${RUNTIME_TELEMETRY}`]);
  const workerLabels = /WORKER_LABELS = \(([^)]*)\)/
    .exec(rt)[1]
    .match(/"(\w+)"/g)
    .map((s) => s.slice(1, -1));
  const ctor =
    /(?:(Histogram|Counter|Gauge)\(|worker_gauge\()\s*"(\w+)",\s*"[^"]*",([\s\S]*?)\)\s*(?:\.labels|\n\s{8}(?:self\.|#)|$)/g;
  for (const m of rt.matchAll(ctor)) {
    const kind = m[1] ?? 'Gauge';
    const rest = m[3].replace(/HISTOGRAM_BUCKETS\[[^\]]*\]/g, '');
    const labels = [];
    const list = /(?:labelnames=)?\[([^\]]*)\]/.exec(rest);
    if (list) for (const l of list[1].matchAll(/"(\w+)"/g)) labels.push(l[1]);
    if (!m[1] || /WORKER_LABELS/.test(rest)) labels.push(...workerLabels);
    const type = kind.toLowerCase();
    // prometheus_client exposes a Counter named x as x_total.
    const name = type === 'counter' && !m[2].endsWith('_total') ? `${m[2]}_total` : m[2];
    metrics.push({ name, type, labels: [...new Set(labels)].sort(), source: 'runtime' });
  }
  const pe = git(gitDir, ['show', `${commit}:${PROCESS_EXPORTER}`]);
  for (const m of pe.matchAll(/# TYPE (\w+) (\w+)/g)) {
    const sample = new RegExp(`${m[1]}\\{\\{([\\s\\S]*?)\\}\\}`).exec(pe);
    const pairs = sample ? [...sample[1].matchAll(/(\w+)="([^"]*)"/g)] : [];
    const fixed = Object.fromEntries(pairs.filter((l) => !l[2].includes('{')).map((l) => [l[1], [l[2]]]));
    metrics.push({
      name: m[1],
      type: m[2],
      labels: pairs.map((l) => l[1]).sort(),
      ...(Object.keys(fixed).length ? { label_values: fixed } : {}),
      source: 'process-exporter',
    });
  }
  const dcgm = git(gitDir, ['show', `${commit}:${DCGM_COUNTERS}`]);
  for (const line of dcgm.split('\n')) {
    const m = /^(DCGM_\w+),\s*(\w+),/.exec(line);
    if (m) metrics.push({ name: m[1], type: m[2], labels: [], source: 'dcgm' });
  }
  return {
    source: { repo: REPO, commit, paths: [RUNTIME_TELEMETRY, PROCESS_EXPORTER, DCGM_COUNTERS] },
    note: 'labels: the label keys the source sets; DCGM exporter labels come from the exporter, not AlpaSim',
    metrics: metrics.sort((a, b) => a.name.localeCompare(b.name)),
  };
}

/** Record names and expressions (whitespace collapsed) of AlpaSim's recording rules file. */
function rulesCatalogue(gitDir, commit) {
  const doc = parse(git(gitDir, ['show', `${commit}:${RULES_FILE}`]));
  const rules = [];
  for (const g of doc.groups)
    for (const r of g.rules) rules.push({ record: r.record, expr: normaliseExpr(r.expr) });
  return { source: { repo: REPO, commit, paths: [RULES_FILE] }, group: doc.groups[0].name, rules };
}

export function normaliseExpr(expr) {
  return String(expr).replace(/\s+/g, ' ').replace(/\( /g, '(').replace(/ \)/g, ')').trim();
}

function dashboardCatalogue(gitDir, commit) {
  const d = JSON.parse(git(gitDir, ['show', `${commit}:${DASHBOARD_FILE}`]));
  return {
    source: { repo: REPO, commit, paths: [DASHBOARD_FILE] },
    uid: d.uid ?? null,
    title: d.title,
    time: d.time ?? null,
    variables: (d.templating?.list ?? []).map((v) => v.name),
  };
}

export function generate(gitDir, commit) {
  return {
    'config-keys.json': configCatalogue(gitDir, commit),
    'metrics.json': metricsCatalogue(gitDir, commit),
    'rules.json': rulesCatalogue(gitDir, commit),
    'dashboard.json': dashboardCatalogue(gitDir, commit),
  };
}

/** The manifest beside the catalogues: the pinned commit and each file's sha256, so a test can check the
 *  committed catalogues are exactly what this script wrote without AlpaSim's repository at hand. */
export function manifest(files, commit) {
  return {
    generator: 'scripts/gen-alpasim-catalog.mjs',
    source: { repo: REPO, commit },
    files: Object.fromEntries(
      Object.entries(files)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, text]) => [name, createHash('sha256').update(text).digest('hex')]),
    ),
  };
}

export const MANIFEST = 'manifest.json';

/** Every file the generator writes (catalogues and manifest) as name -> text. */
export function render(gitDir, commit) {
  const files = Object.fromEntries(
    Object.entries(generate(gitDir, commit)).map(([f, data]) => [f, `${JSON.stringify(data, null, 2)}\n`]),
  );
  return { ...files, [MANIFEST]: `${JSON.stringify(manifest(files, commit), null, 2)}\n` };
}

function arg(argv, name) {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

const USAGE =
  'usage: node scripts/gen-alpasim-catalog.mjs --git-dir <NVlabs/alpasim clone or mirror> [--commit SHA] [--out DIR] [--check]\n' +
  '  (or set ALPASIM_GIT_DIR; fetch it with `git clone --mirror https://github.com/NVlabs/alpasim`)';

/** The command line: returns the exit code (0 written/fresh, 1 stale, 2 usage, 3 no AlpaSim git dir). */
export function main(argv, env = process.env, { out = console.log, err = console.error } = {}) {
  const gitDir = arg(argv, '--git-dir') ?? env.ALPASIM_GIT_DIR;
  const commit = arg(argv, '--commit') ?? PINNED_COMMIT;
  const outDir = arg(argv, '--out') ?? OUT_DIR;
  const check = argv.includes('--check');
  if (!gitDir) {
    err(`gen-alpasim-catalog: no AlpaSim git directory given\n${USAGE}`);
    return 2;
  }
  if (!existsSync(gitDir)) {
    err(`gen-alpasim-catalog: no AlpaSim git directory at ${gitDir}\n${USAGE}`);
    return 3;
  }
  let full;
  try {
    full = git(gitDir, ['rev-parse', '--verify', '--quiet', `${commit}^{commit}`]).trim();
  } catch {
    err(`gen-alpasim-catalog: ${gitDir} has no commit ${commit} (fetch it, or pass --commit)`);
    return 3;
  }
  mkdirSync(outDir, { recursive: true });
  let stale = 0;
  for (const [file, text] of Object.entries(render(gitDir, full))) {
    const path = join(outDir, file);
    if (check) {
      if (!existsSync(path) || readFileSync(path, 'utf8') !== text) {
        stale++;
        err(`stale catalogue: ${path}; run \`node scripts/gen-alpasim-catalog.mjs --git-dir ${gitDir}\``);
      }
    } else {
      writeFileSync(path, text);
      out(`generated ${path} (${REPO}@${full.slice(0, 12)})`);
    }
  }
  return stale ? 1 : 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(main(process.argv.slice(2)));
