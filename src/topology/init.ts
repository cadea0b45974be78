// `topo init`: from the user's launch command to experiment.yaml + baseline.yaml.
// buildExperiment() is pure; writeExperimentFiles() is the only I/O.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Document, isSeq, visit } from 'yaml';
import { CLI_DRIVEN_PRESET, FIXED_INPUT_KEYS, PRESETS, RUN_NAME_OVERRIDE } from '../catalog/alpasim.js';
import type { Candidate } from '../types/generated/candidate.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { Topology } from '../types/generated/topology.js';
import { deepMerge, expandPreset, normalise } from './expand.js';
import { checkPreset } from './files.js';
import { driverProblem, overrideProblem } from './overrides.js';
import {
  describePreset,
  type FoundPreset,
  type PresetOptions,
  presetNotFound,
  readPresetFromCheckout,
} from './presets.js';
import { PATTERNS } from './render.js';
import { type ParsedRunCommand, parseRunCommand, RunCommandError } from './run-command.js';
import { matchesSchema } from './schemas.js';

export interface InitOptions {
  /** YYYYMMDD; default today (UTC). */
  date?: string;
  /** Cluster name (clusters.yaml); default the deploy target. */
  cluster?: string;
  /** The clusters clusters.yaml defines, with its path: another cluster is refused. */
  knownClusters?: { file: string; names: readonly string[] };
}

export interface BuiltExperiment {
  experiment: Experiment;
  baseline: Candidate;
  /** What was dropped or ignored from the command, said once to the user. */
  notes: string[];
}

function today(): string {
  return new Date().toISOString().slice(0, 10).replace(/-/g, '');
}

/** A Hydra value of a topology key: integer, boolean, null or a list of integers. */
function parseTopologyValue(key: string, text: string): unknown {
  if (/^(0|[1-9][0-9]*)$/.test(text)) return Number(text);
  if (text === 'true' || text === 'false') return text === 'true';
  if (text === 'null') return null;
  const list = /^\[\s*((0|[1-9][0-9]*)(\s*,\s*(0|[1-9][0-9]*))*)?\s*\]$/.exec(text);
  if (list) return list[1] ? list[1].split(',').map((v) => Number(v.trim())) : [];
  throw new RunCommandError(
    `override ${key}=${text}: a topology value must be a whole number, true/false, null or a list like [0,1]`,
  );
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const seg of path.slice(0, -1)) {
    if (typeof node[seg] !== 'object' || node[seg] === null) node[seg] = {};
    node = node[seg] as Record<string, unknown>;
  }
  node[path[path.length - 1] as string] = value;
}

const LOG_DIR_OVERRIDE = 'wizard.log_dir';

/** LOGDIR and DESCRIPTION of the command's environment prefix, checked against the experiment schema's patterns. */
function submitEnvOf(env: Record<string, string>): NonNullable<Experiment['fixed_inputs']['submit_env']> {
  const out: NonNullable<Experiment['fixed_inputs']['submit_env']> = {};
  if (env.LOGDIR !== undefined) {
    if (!PATTERNS.logDir.test(env.LOGDIR) || env.LOGDIR.split('/').includes('..'))
      throw new RunCommandError(
        `LOGDIR=${env.LOGDIR}: use a plain folder path (letters, digits, . _ - /, no ..); submit.sh reads it relative to the submit directory`,
      );
    out.LOGDIR = env.LOGDIR;
  }
  if (env.DESCRIPTION !== undefined) {
    if (!PATTERNS.description.test(env.DESCRIPTION))
      throw new RunCommandError(
        `DESCRIPTION=${JSON.stringify(env.DESCRIPTION)}: use up to 200 letters, digits, spaces and . , : / @ + = ( ) - _`,
      );
    out.DESCRIPTION = env.DESCRIPTION;
  }
  return out;
}

/**
 * The experiment and its baseline candidate from a parsed command and the preset it names.
 * Throws RunCommandError when the command cannot become a valid experiment.
 */
export function buildExperiment(
  parsed: ParsedRunCommand,
  preset: Topology,
  command: string,
  options: InitOptions = {},
): BuiltExperiment {
  const notes: string[] = [];
  const { cluster, experimentId } = experimentIdentity(parsed, options);
  checkOverrides(parsed, notes);
  const { fixed, topologyPatch } = fixedInputs(parsed, notes);
  const experiment: Experiment = {
    experiment_id: experimentId,
    objective: 'minimize stabilized full-run seconds_per_rollout',
    command: command.trim(),
    cluster,
    base_topology: parsed.topology,
    max_parallel: 3,
    fixed_inputs: fixed,
  };
  if (!matchesSchema(experiment, 'experiment')) {
    throw new RunCommandError(
      'the command gives values the experiment schema refuses (check deploy, driver, account, partition and time for unusual characters)',
    );
  }
  const topology = normalise(deepMerge(expandPreset(preset, experiment), topologyPatch));
  if (!matchesSchema(topology, 'topology')) {
    throw new RunCommandError(
      "the command's topology overrides give a topology the schema refuses (see docs/topology.md for the allowed keys and ranges)",
    );
  }
  const baseline: Candidate = {
    name: 'baseline',
    parent: null,
    hypothesis: `The starting point: preset ${parsed.topology} as launched by the experiment's command${Object.keys(topologyPatch).length ? ', with its topology overrides' : ''}.`,
    expected_effect: 'Reference seconds_per_rollout that the other candidates are compared against.',
    topology,
  };
  return { experiment, baseline, notes };
}

/** The experiment's cluster and id (topology-opt-<driver>-<cluster>-<YYYYMMDD>), checked; one node only. */
function experimentIdentity(
  parsed: ParsedRunCommand,
  options: InitOptions,
): { cluster: string; experimentId: string } {
  const date = options.date ?? today();
  if (!/^[0-9]{8}$/.test(date)) throw new RunCommandError(`--date ${date}: use YYYYMMDD`);
  const cluster = options.cluster ?? parsed.deploy.toLowerCase().replace(/[^a-z0-9_-]/g, '_');
  if (!/^[a-z0-9][a-z0-9_-]{0,31}$/.test(cluster)) {
    throw new RunCommandError(
      `cluster name \`${cluster}\` is not valid: use lowercase letters, digits, - and _ (pass --cluster NAME)`,
    );
  }
  const known = options.knownClusters;
  if (known && !known.names.includes(cluster)) {
    throw new RunCommandError(
      `cluster \`${cluster}\` is not defined in ${known.file} (defined: ${known.names.join(', ') || 'none'}): add it there, or pass --cluster NAME`,
    );
  }
  const driverSlug = parsed.driver.toLowerCase().replace(/[^a-z0-9_.]/g, '_');
  const experimentId = `topology-opt-${driverSlug}-${cluster}-${date}`;
  if (!PATTERNS.experimentId.test(experimentId) || experimentId.length > 80) {
    throw new RunCommandError(
      `experiment id \`${experimentId}\` is not valid (topology-opt-<driver>-<cluster>-<YYYYMMDD>, at most 80 characters)`,
    );
  }
  if (parsed.sbatch.nodes !== undefined && parsed.sbatch.nodes !== 1) {
    throw new RunCommandError(
      `--nodes=${parsed.sbatch.nodes}: topology experiments run on one node (AlpaSim's submit.sh uses --nodes=1)`,
    );
  }
  return { cluster, experimentId };
}

/**
 * Checks the overrides against AlpaSim's config: a warning is kept with a note, an error refuses the command.
 * deploy names the site's cluster and topology the preset (both checked apart); driver= and every
 * other override against AlpaSim's tree, so an unknown driver gets the note any unknown value gets.
 */
function checkOverrides(parsed: ParsedRunCommand, notes: string[]): void {
  const checked = parsed.overrides
    .filter((o) => !['deploy', 'topology'].includes(o.slice(0, o.indexOf('=')).replace(/^\++/, '')))
    .map((o) => ({
      o,
      problem: /^\+*driver=/.test(o) ? driverProblem(o.slice(o.indexOf('=') + 1)) : overrideProblem(o),
    }));
  for (const { o, problem } of checked)
    if (problem?.severity === 'warning') notes.push(`kept ${o}: ${problem.message}`);
  const problems = checked.filter((x) => x.problem?.severity === 'error');
  if (problems.length) {
    throw new RunCommandError(
      `the command has override${problems.length > 1 ? 's' : ''} AlpaSim's config would refuse (topo passes none of them to sbatch):\n${problems.map((x) => `  ${x.o}: ${x.problem?.message}`).join('\n')}`,
    );
  }
}

/** The experiment's fixed inputs from the command, and its topology overrides as a patch of the preset. */
function fixedInputs(
  parsed: ParsedRunCommand,
  notes: string[],
): { fixed: Experiment['fixed_inputs']; topologyPatch: Record<string, unknown> } {
  const fixed: Experiment['fixed_inputs'] = { deploy: parsed.deploy, driver: parsed.driver };
  const overrides: string[] = [];
  const topologyPatch: Record<string, unknown> = {};
  for (const override of parsed.overrides) {
    const eq = override.indexOf('=');
    const key = override.slice(0, eq).replace(/^\++/, '');
    const value = override.slice(eq + 1);
    if (key === 'deploy' || key === 'topology' || key === 'driver') continue;
    const dropped = DROPPED_OVERRIDES.get(key);
    if (dropped) notes.push(`dropped ${override}: ${dropped}`);
    else if (PATTERNS.topologyKey.test(key))
      setPath(topologyPatch, key.split('.'), parseTopologyValue(key, value));
    else if (!setFixedInput(fixed, key, value, override)) overrides.push(override);
  }
  if (overrides.length) fixed.overrides = overrides;
  const slurm = slurmOf(parsed, notes);
  if (Object.keys(slurm).length) fixed.slurm = slurm;
  const submitEnv = submitEnvOf(parsed.env);
  if (Object.keys(submitEnv).length) fixed.submit_env = submitEnv;
  const droppedEnv = Object.keys(parsed.env).filter((k) => !(k in submitEnv));
  if (droppedEnv.length) {
    notes.push(
      `environment assignments not carried over (topo passes only submit.sh's LOGDIR and DESCRIPTION): ${droppedEnv.join(', ')}`,
    );
  }
  return { fixed, topologyPatch };
}

/** Overrides topo sets itself, with why they are dropped. */
const DROPPED_OVERRIDES: ReadonlyMap<string, string> = new Map([
  [RUN_NAME_OVERRIDE, 'topo names each run after its Slurm job (topo-<experiment>-<candidate>-<hash8>)'],
  [
    LOG_DIR_OVERRIDE,
    'on Slurm submit.sh sets wizard.log_dir from LOGDIR; topo gives each run its own LOGDIR/<job name>',
  ],
]);

/** Sets the fixed input an override names (scenes, rollouts per scene, cameras, control timestep); false for others. */
function setFixedInput(
  fixed: Experiment['fixed_inputs'],
  key: string,
  value: string,
  override: string,
): boolean {
  const int = (what: string) => {
    if (!/^[1-9][0-9_]*$/.test(value))
      throw new RunCommandError(`override ${override}: ${what} must be a positive whole number`);
    return Number(value.replace(/_/g, ''));
  };
  if (key === FIXED_INPUT_KEYS.scenes) fixed.scenes = value;
  else if (key === FIXED_INPUT_KEYS.rolloutsPerScene) fixed.rollouts_per_scene = int('n_rollouts');
  else if (key === FIXED_INPUT_KEYS.cameras) fixed.cameras = value;
  else if (key === FIXED_INPUT_KEYS.controlTimestep || key === 'control_timestep_us')
    fixed.control_timestep_us = int('control_timestep_us');
  else return false;
  return true;
}

/** The sbatch settings topo carries over; the others get a note. */
function slurmOf(
  parsed: ParsedRunCommand,
  notes: string[],
): NonNullable<Experiment['fixed_inputs']['slurm']> {
  const slurm: NonNullable<Experiment['fixed_inputs']['slurm']> = {};
  if (parsed.sbatch.account) slurm.account = parsed.sbatch.account;
  if (parsed.sbatch.partition) slurm.partition = parsed.sbatch.partition;
  if (parsed.sbatch.gpusPerNode) slurm.gpus_per_node = parsed.sbatch.gpusPerNode;
  if (parsed.sbatch.gpus) slurm.gpus = parsed.sbatch.gpus;
  if (parsed.sbatch.time) slurm.time = parsed.sbatch.time;
  if (parsed.sbatch.ignored.length) {
    notes.push(
      `sbatch options not carried over (topo sets job name and output itself): ${parsed.sbatch.ignored.join(' ')}`,
    );
  }
  return slurm;
}

/** YAML text with lists in flow style (`gpus: [0, 1]`), as AlpaSim's topology files write them. */
export function toYaml(value: unknown, header: string): string {
  const doc = new Document(value);
  visit(doc, {
    Seq(_, node) {
      if (isSeq(node)) node.flow = true;
    },
  });
  doc.commentBefore = header;
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}

export interface WrittenExperiment extends BuiltExperiment {
  experimentDir: string;
  experimentFile: string;
  baselineFile: string;
}

/** Writes `<dir>/<experiment_id>/{experiment,baseline}.yaml`; refuses to overwrite unless `force`. */
export function writeExperimentFiles(
  dir: string,
  built: BuiltExperiment,
  options: { force?: boolean } = {},
): WrittenExperiment {
  const experimentDir = join(dir, built.experiment.experiment_id);
  const experimentFile = join(experimentDir, 'experiment.yaml');
  const baselineFile = join(experimentDir, 'baseline.yaml');
  for (const f of [experimentFile, baselineFile]) {
    if (existsSync(f) && !options.force)
      throw new RunCommandError(`${f} already exists: pass --force to overwrite it`);
  }
  mkdirSync(experimentDir, { recursive: true });
  writeFileSync(
    experimentFile,
    toYaml(
      built.experiment,
      ` Experiment ${built.experiment.experiment_id}, created by \`topo init\`.\n What stays fixed across candidates. Schema: topologies/schema/experiment.schema.json`,
    ),
  );
  writeFileSync(
    baselineFile,
    toYaml(
      built.baseline,
      ` Baseline candidate: preset ${built.experiment.base_topology} expanded to full values.\n Copy this file to start a candidate: set name, parent, hypothesis and change topology keys.`,
    ),
  );
  return { ...built, experimentDir, experimentFile, baselineFile };
}

export interface PreparedInit extends BuiltExperiment {
  /** The base preset and where it was found (the repository's own may override the shipped one). */
  preset: FoundPreset;
}

/**
 * Parse the command and find its preset by the one preset rule (src/topology/presets.ts: the
 * override, `<dir>/presets` of the repository, the presets shipped with alpasim-topo), then build
 * the experiment; nothing is written.
 */
export function prepareExperiment(
  command: string,
  dir: string,
  options: InitOptions & { presets?: Omit<PresetOptions, 'topologiesDir'> } = {},
): PreparedInit {
  const parsed = parseRunCommand(command);
  if (parsed.topology === CLI_DRIVEN_PRESET) {
    throw new RunCommandError(
      `topology=${CLI_DRIVEN_PRESET} is AlpaSim's CLI-driven preset for daemon mode: its GPU assignments and concurrency come from the launch script's overrides, not from a topology file, so there is no topology for topo to tune. Start the experiment from a file preset: ${PRESETS.join(', ')}`,
    );
  }
  const presetOptions = { ...options.presets, topologiesDir: basename(dir) };
  const found = readPresetFromCheckout(parsed.topology, dirname(dir), presetOptions);
  if (!found) {
    const own = existsSync(join(dir, 'presets'))
      ? readdirSync(join(dir, 'presets'))
          .filter((f) => f.endsWith('.yaml'))
          .map((f) => f.slice(0, -'.yaml'.length))
      : [];
    throw new RunCommandError(
      `topology=${parsed.topology}: ${presetNotFound(parsed.topology, presetOptions, own)}`,
    );
  }
  const preset = checkPreset(found.text, found.path);
  if (!preset.value)
    throw new RunCommandError(`preset ${found.path} is invalid: ${preset.issues[0]?.message}`);
  const built = buildExperiment(parsed, preset.value, command, options);
  if (found.origin !== 'shipped')
    built.notes.push(`base preset ${parsed.topology}: ${describePreset(found)}`);
  return { ...built, preset: found };
}

/** Prepare and write experiment.yaml and baseline.yaml (refusing to overwrite unless `force`). */
export function initExperiment(
  command: string,
  dir: string,
  options: InitOptions & { force?: boolean; presets?: Omit<PresetOptions, 'topologiesDir'> } = {},
): WrittenExperiment {
  return writeExperimentFiles(dir, prepareExperiment(command, dir, options), options);
}
