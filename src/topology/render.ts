// Renders a validated candidate into the sbatch argv (an array: it never passes through a shell).
// Every value is checked against a strict pattern before it is placed, even though the schemas have
// already checked it: the argv runs on a self-hosted runner, so the check sits right where it matters.
import { posix } from 'node:path';
import {
  FIXED_INPUT_KEYS,
  REQUIRED_GROUPS,
  RUN_NAME_OVERRIDE,
  SERVICES,
  SUBMIT_DEFAULTS,
} from '../catalog/alpasim.js';
import type { Cluster } from '../types/generated/clusters.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { Topology } from '../types/generated/topology.js';
import { hash8, hydraValue, topologyDiff } from './expand.js';
import { SBATCH_EXPORT_FLAG } from './job-environment.js';
import { overrideProblem } from './overrides.js';
import { CANDIDATE_NAME, RUN_NAME } from './run-name.js';

export interface Submission {
  /** `topo-<experiment_id>-<candidate>-<hash8>`: Slurm job name and `wizard.run_name`. */
  jobName: string;
  /** The sbatch argv, argv[0] = `sbatch`. */
  argv: string[];
  /** The argv shell-quoted, for people to read (never executed). */
  shellLine: string;
  /**
   * Values of submit.sh's variables (./job-environment.ts SUBMIT_SCRIPT_VARIABLES) for this
   * submission, pattern-checked. The transport sets exactly these plus the runner account's plain
   * PATH/HOME/USER/LANG; argv carries SBATCH_EXPORT_FLAG so nothing else reaches the job.
   */
  env?: Partial<Record<'LOGDIR' | 'DESCRIPTION' | 'SUBMITTER' | 'ALPASIM_MAX_REQUEUES', string>>;
}

/** A candidate ready to render: its full topology and the expanded base preset it is diffed against. */
export interface ResolvedCandidate {
  name: string;
  expanded: Topology;
  base: Topology;
}

export class RenderError extends Error {
  override name = 'RenderError';
}

export const PATTERNS = {
  experimentId: /^topology-opt-[a-z0-9_.]+(-[a-z0-9_.]+)*-[a-z0-9_]+-[0-9]{8}$/,
  candidate: CANDIDATE_NAME,
  jobName: RUN_NAME,
  account: /^[A-Za-z0-9_.-]{1,64}$/,
  partition: /^[A-Za-z0-9_.,-]{1,128}$/,
  time: /^([0-9]+-)?[0-9]{1,2}:[0-9]{2}(:[0-9]{2})?$/,
  absolutePath: /^\/[A-Za-z0-9._/-]{0,1000}$/,
  relativePath: /^[A-Za-z0-9._][A-Za-z0-9._/-]{0,1000}$/,
  groupChoice: /^[A-Za-z0-9_.-]{1,64}$/,
  preset: /^[A-Za-z0-9_]{1,64}$/,
  fixedValue: /^[A-Za-z0-9_.-]{1,128}$/,
  override: /^\+{0,2}[A-Za-z_][A-Za-z0-9_.]{0,200}=[A-Za-z0-9_.,:/@+[\]-]{0,500}$/,
  topologyKey: new RegExp(
    `^(defines\\.(nre_cache_size|physics_cache_size)|services\\.(${SERVICES.join('|')})\\.(gpus|replicas_per_container|environments)|runtime\\.nr_workers|runtime\\.endpoints\\.(${SERVICES.join('|')})\\.(n_concurrent_rollouts|skip)|trafficsim\\.server\\.max_workers|eval\\.num_processes)$`,
  ),
  /** One `NAME=value` of services.<svc>.environments (the topology schema's item pattern). */
  environment:
    /^(HOME|TMPDIR|(OMP|MKL|OPENBLAS|NUMEXPR|CUDA|NCCL|PYTORCH|TORCH|XDG|HF|WARP|TOKENIZERS|NVIDIA|CUBLAS|CUDNN)_[A-Z0-9_]{1,64})=[A-Za-z0-9_.,:/@+%-]{0,256}$/,
  /** submit.sh's LOGDIR (relative to the submit directory, or absolute) and DESCRIPTION. */
  logDir: /^(\/|[A-Za-z0-9._])[A-Za-z0-9._/-]{0,500}$/,
  description: /^[A-Za-z0-9 _.,:/@+=()-]{1,200}$/,
} as const;

function check(value: unknown, pattern: RegExp, what: string): string {
  const text = typeof value === 'number' && Number.isInteger(value) ? String(value) : value;
  if (typeof text !== 'string' || !pattern.test(text)) {
    throw new RenderError(
      `refusing to render: ${what} ${JSON.stringify(value)} does not match ${pattern.source}`,
    );
  }
  return text;
}

function checkCount(value: unknown, what: string, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new RenderError(
      `refusing to render: ${what} ${JSON.stringify(value)} is not a whole number in 1-${max}`,
    );
  }
  return value;
}

/** `topo-<experiment_id>-<candidate>-<hash8>`. */
export function jobName(experimentId: string, candidate: string, expanded: Topology): string {
  check(experimentId, PATTERNS.experimentId, 'experiment_id');
  check(candidate, PATTERNS.candidate, 'candidate name');
  return check(`topo-${experimentId}-${candidate}-${hash8(expanded)}`, PATTERNS.jobName, 'job name');
}

/** A topology value as Hydra text, accepting only what a topology key can hold. */
function topologyValue(key: string, value: unknown): string {
  if (key.endsWith('.environments')) {
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || !PATTERNS.environment.test(v)))
      throw new RenderError(
        `refusing to render: ${key} ${JSON.stringify(value)} is not a list of NAME=value entries topo passes`,
      );
    // Quoted for Hydra: the entries hold `=` and `:`.
    return `[${value.map((v) => `'${v}'`).join(',')}]`;
  }
  const ok =
    value === null ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isInteger(value) && value >= 0) ||
    (Array.isArray(value) &&
      value.length > 0 &&
      value.every((v) => typeof v === 'number' && Number.isInteger(v) && v >= 0));
  if (!ok)
    throw new RenderError(
      `refusing to render: topology value of ${key} ${JSON.stringify(value)} is not a count, a boolean, null or a list of GPU indices`,
    );
  return hydraValue(value);
}

/** The Hydra overrides for the fixed inputs, in a stable order (deploy, topology and driver come first). */
export function fixedOverrides(experiment: Experiment): string[] {
  const fi = experiment.fixed_inputs;
  const out: string[] = [];
  if (fi.scenes !== undefined)
    out.push(`${FIXED_INPUT_KEYS.scenes}=${check(fi.scenes, PATTERNS.fixedValue, 'scenes')}`);
  if (fi.rollouts_per_scene !== undefined)
    out.push(
      `${FIXED_INPUT_KEYS.rolloutsPerScene}=${checkCount(fi.rollouts_per_scene, 'rollouts_per_scene', 1_000_000)}`,
    );
  if (fi.cameras !== undefined)
    out.push(`+${FIXED_INPUT_KEYS.cameras}=${check(fi.cameras, PATTERNS.fixedValue, 'cameras')}`);
  if (fi.control_timestep_us !== undefined)
    out.push(
      `${FIXED_INPUT_KEYS.controlTimestep}=${checkCount(fi.control_timestep_us, 'control_timestep_us', 100_000_000)}`,
    );
  const reserved = new Set<string>([
    ...REQUIRED_GROUPS,
    RUN_NAME_OVERRIDE,
    ...Object.values(FIXED_INPUT_KEYS),
  ]);
  for (const override of fi.overrides ?? []) {
    const problem = overrideProblem(override);
    if (problem?.severity === 'error')
      throw new RenderError(
        `refusing to render: fixed override ${JSON.stringify(override)}: ${problem.message}`,
      );
    const key = override.slice(0, override.indexOf('=')).replace(/^\++/, '');
    if (reserved.has(key))
      throw new RenderError(
        `refusing to render: fixed override ${JSON.stringify(override)} sets ${key}, which the experiment's own fields set`,
      );
    if (PATTERNS.topologyKey.test(key))
      throw new RenderError(
        `refusing to render: fixed override ${JSON.stringify(override)} sets topology key ${key}; topology keys belong in candidates`,
      );
    out.push(override);
  }
  return out;
}

/** One `key=value` per topology setting that differs from the expanded base preset. */
export function topologyOverrides(candidate: ResolvedCandidate): string[] {
  return topologyDiff(candidate.base, candidate.expanded).map((change) => {
    const key = check(change.key, PATTERNS.topologyKey, 'topology key');
    if (change.to === undefined)
      throw new RenderError(`refusing to render: ${key} is set by the preset but absent from the candidate`);
    const text = `${key}=${topologyValue(key, change.to)}`;
    return key.endsWith('.environments') ? text : check(text, PATTERNS.override, 'topology override');
  });
}

function resolvePath(checkout: string, path: string, what: string): string {
  if (path.startsWith('/')) return check(posix.normalize(path), PATTERNS.absolutePath, what);
  check(path, PATTERNS.relativePath, what);
  return check(posix.normalize(posix.join(checkout, path)), PATTERNS.absolutePath, what);
}

export function renderSubmission(
  experiment: Experiment,
  candidate: ResolvedCandidate,
  cluster: Cluster,
): Submission {
  const name = jobName(experiment.experiment_id, candidate.name, candidate.expanded);
  const fi = experiment.fixed_inputs;
  const checkout = check(cluster.alpasim_checkout, PATTERNS.absolutePath, 'alpasim_checkout');
  const script = resolvePath(checkout, cluster.submit_script, 'submit_script');
  // submit.sh copies `<its folder>/runs/slurm_output/<job id>.log` into the run's txt-logs/: the output goes
  // there (the default run_dir), named by job id only, as its own #SBATCH --output does.
  const runDir = resolvePath(
    checkout,
    cluster.run_dir ?? posix.join(posix.dirname(script), 'runs'),
    'run_dir',
  );
  const account = fi.slurm?.account ?? cluster.slurm.account;
  const partition = fi.slurm?.partition ?? cluster.slurm.partition;
  const gpus = checkCount(fi.slurm?.gpus_per_node ?? cluster.gpus_per_node, 'gpus_per_node', 64);
  const time = check(fi.slurm?.time ?? cluster.slurm.time ?? SUBMIT_DEFAULTS.time, PATTERNS.time, 'time');
  const exclusive = cluster.slurm.exclusive ?? SUBMIT_DEFAULTS.exclusive;

  const argv = ['sbatch', '--parsable', SBATCH_EXPORT_FLAG, `--job-name=${name}`];
  if (account !== undefined) argv.push(`--account=${check(account, PATTERNS.account, 'Slurm account')}`);
  if (partition !== undefined)
    argv.push(`--partition=${check(partition, PATTERNS.partition, 'Slurm partition')}`);
  argv.push(`--nodes=${SUBMIT_DEFAULTS.nodes}`);
  // The command's own GPU request: --gpus=N when it used that form, else --gpus-per-node.
  if (fi.slurm?.gpus !== undefined) argv.push(`--gpus=${checkCount(fi.slurm.gpus, 'gpus', 64)}`);
  else argv.push(`--gpus-per-node=${gpus}`);
  if (exclusive) argv.push('--exclusive');
  argv.push(`--time=${time}`, `--output=${runDir}/slurm_output/%j.log`);
  argv.push(
    script,
    `deploy=${check(fi.deploy, PATTERNS.groupChoice, 'deploy')}`,
    `topology=${check(experiment.base_topology, PATTERNS.preset, 'base_topology')}`,
    `driver=${check(fi.driver, PATTERNS.groupChoice, 'driver')}`,
    ...fixedOverrides(experiment),
    ...topologyOverrides(candidate),
    `${RUN_NAME_OVERRIDE}=${name}`,
  );
  return { jobName: name, argv, shellLine: shellLine(argv), env: submitEnv(experiment, name) };
}

/** submit.sh's variables for this run: LOGDIR (one folder per run beneath the command's) and DESCRIPTION. */
export function submitEnv(experiment: Experiment, name: string): NonNullable<Submission['env']> {
  const given = experiment.fixed_inputs.submit_env ?? {};
  const env: NonNullable<Submission['env']> = {};
  if (given.LOGDIR !== undefined) {
    const dir = check(given.LOGDIR, PATTERNS.logDir, 'LOGDIR');
    if (dir.split('/').includes('..'))
      throw new RenderError(`refusing to render: LOGDIR ${JSON.stringify(dir)} climbs with ..`);
    env.LOGDIR = check(posix.join(dir, name), PATTERNS.logDir, 'LOGDIR');
  }
  if (given.DESCRIPTION !== undefined)
    env.DESCRIPTION = check(given.DESCRIPTION, PATTERNS.description, 'DESCRIPTION');
  return env;
}

/** POSIX shell quoting, for display only. */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

export function shellLine(argv: readonly string[]): string {
  return argv.map(shellQuote).join(' ');
}
