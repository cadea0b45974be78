// Loading one file of each kind: YAML with positions, then its schema. The value is only returned
// when both passed, so later stages never see data the schema has not accepted.
import {
  CLI_DRIVEN_PRESET,
  FIXED_INPUT_KEYS,
  PRESETS,
  REQUIRED_GROUPS,
  RUN_NAME_OVERRIDE,
} from '../catalog/alpasim.js';
import type { Candidate } from '../types/generated/candidate.js';
import type { ClustersFile } from '../types/generated/clusters.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { Topology } from '../types/generated/topology.js';
import { formatKeyPath, type Issue, type PathSegment } from './issues.js';
import { driverProblem, overrideProblem } from './overrides.js';
import { placeholderIssues } from './placeholders.js';
import { PATTERNS } from './render.js';
import { type SchemaName, schemaIssues } from './schemas.js';
import { type LoadedYaml, loadYaml } from './yaml.js';

export interface Checked<T> {
  loaded: LoadedYaml;
  /** Present only when the file parsed and matched its schema. */
  value?: T;
  issues: Issue[];
}

export function checkFile<T>(text: string, file: string, schema: SchemaName): Checked<T> {
  const loaded = loadYaml(text, file);
  if (loaded.issues.length) return { loaded, issues: loaded.issues };
  const issues = schemaIssues(loaded, schema);
  return issues.length ? { loaded, issues } : { loaded, value: loaded.value as T, issues: [] };
}

export const checkCandidate = (text: string, file: string) => checkFile<Candidate>(text, file, 'candidate');
export const checkExperiment = (text: string, file: string) =>
  checkFile<Experiment>(text, file, 'experiment');
export const checkClusters = (text: string, file: string) => checkFile<ClustersFile>(text, file, 'clusters');
export const checkPreset = (text: string, file: string) => checkFile<Topology>(text, file, 'topology');

export function issueAt(
  loaded: LoadedYaml,
  rule: string,
  path: PathSegment[],
  message: string,
  key = false,
  severity: Issue['severity'] = 'error',
): Issue {
  return {
    rule,
    severity,
    file: loaded.file,
    ...loaded.locate(path, { key }),
    keyPath: formatKeyPath(path),
    message,
  };
}

/** What experiment.yaml's cross-file rules read besides the file. */
interface ExperimentContext {
  clusters?: ClustersFile;
  clustersFile: string;
  /** Why the base preset was not found (src/topology/presets.ts presetNotFound); undefined when it was. */
  presetMissing: string | undefined;
  dirName?: string;
}

type ExperimentRule = (loaded: LoadedYaml, experiment: Experiment, context: ExperimentContext) => Issue[];

/** Cross-file rules for experiment.yaml: its cluster and preset exist, its overrides do not collide. */
export function experimentRuleIssues(
  loaded: LoadedYaml,
  experiment: Experiment,
  context: ExperimentContext,
): Issue[] {
  return EXPERIMENT_RULES.flatMap((rule) => rule(loaded, experiment, context));
}

const folderRule: ExperimentRule = (loaded, experiment, context) =>
  context.dirName !== undefined && context.dirName !== experiment.experiment_id
    ? [
        issueAt(
          loaded,
          'experiment-folder',
          ['experiment_id'],
          `experiment_id \`${experiment.experiment_id}\` differs from its folder \`${context.dirName}\`; people find an experiment by its folder and the record by its id: rename one so they agree`,
          false,
          'warning',
        ),
      ]
    : [];

const clusterRule: ExperimentRule = (loaded, experiment, context) => {
  if (!context.clusters || context.clusters.clusters[experiment.cluster]) return [];
  const known = Object.keys(context.clusters.clusters);
  return [
    issueAt(
      loaded,
      'cluster-unknown',
      ['cluster'],
      `cluster \`${experiment.cluster}\` is not defined in ${context.clustersFile}: use one of ${known.join(', ')}`,
    ),
  ];
};

const gpuCountRule: ExperimentRule = (loaded, experiment, context) => {
  const cluster = context.clusters?.clusters[experiment.cluster];
  const gpn = experiment.fixed_inputs.slurm?.gpus_per_node;
  if (!cluster || gpn === undefined || gpn <= cluster.gpus_per_node) return [];
  return [
    issueAt(
      loaded,
      'gpu-count',
      ['fixed_inputs', 'slurm', 'gpus_per_node'],
      `gpus_per_node ${gpn} exceeds the ${cluster.gpus_per_node} GPUs a node of cluster \`${experiment.cluster}\` has: Slurm would never start the job; use at most ${cluster.gpus_per_node}`,
    ),
  ];
};

const presetRule: ExperimentRule = (loaded, experiment, context) =>
  context.presetMissing === undefined
    ? []
    : [
        issueAt(
          loaded,
          'preset-unknown',
          ['base_topology'],
          experiment.base_topology === CLI_DRIVEN_PRESET
            ? `base topology \`${CLI_DRIVEN_PRESET}\` is AlpaSim's CLI-driven daemon preset: its GPUs and concurrency come from the launch script's overrides, so there is no topology file to tune; use a file preset (${PRESETS.join(', ')})`
            : `base topology preset (AlpaSim's topology=<name>): ${context.presetMissing}; use one of them, e.g. 8gpu_64rollouts`,
        ),
      ];

/** The driver is a config group like any other: a value outside AlpaSim's catalogue gets its note. */
const driverRule: ExperimentRule = (loaded, experiment) => {
  const driver = driverProblem(experiment.fixed_inputs.driver);
  return driver
    ? [issueAt(loaded, driver.rule, ['fixed_inputs', 'driver'], driver.message, false, driver.severity)]
    : [];
};

/** Each fixed override: not a key topo or a fixed input sets, not a topology key, and one AlpaSim knows. */
const overridesRule: ExperimentRule = (loaded, experiment) => {
  const reserved = new Set<string>([
    ...REQUIRED_GROUPS,
    RUN_NAME_OVERRIDE,
    ...Object.values(FIXED_INPUT_KEYS),
  ]);
  return (experiment.fixed_inputs.overrides ?? []).flatMap((override, i): Issue[] => {
    const key = override.slice(0, override.indexOf('=')).replace(/^\++/, '');
    const path = ['fixed_inputs', 'overrides', i];
    if (reserved.has(key))
      return [
        issueAt(
          loaded,
          'override-reserved',
          path,
          `override \`${override}\` sets ${key}, which ${key === RUN_NAME_OVERRIDE ? 'topo sets to the job name so that job, run and metrics share one name' : 'has its own field in fixed_inputs (or is the base_topology)'}: remove it from overrides${key === RUN_NAME_OVERRIDE ? '' : ' and use the field'}`,
        ),
      ];
    if (PATTERNS.topologyKey.test(key))
      return [
        issueAt(
          loaded,
          'override-topology',
          path,
          `override \`${override}\` sets topology key ${key}; fixed overrides must not touch the topology, which candidates change: move it into baseline.yaml's topology block`,
        ),
      ];
    // Exactly what render refuses: unknown keys (with "did you mean"), hydra.*, _target_ and friends.
    const problem = overrideProblem(override);
    return problem ? [issueAt(loaded, problem.rule, path, problem.message, false, problem.severity)] : [];
  });
};

/** experiment.yaml's cross-file rules, in the order their findings are listed. */
const EXPERIMENT_RULES: readonly ExperimentRule[] = [
  folderRule,
  clusterRule,
  gpuCountRule,
  presetRule,
  driverRule,
  overridesRule,
];

/**
 * clusters.yaml: an ssh cluster needs host, user and its known host key (the connection is pinned);
 * a value `topo setup` left to replace (TODO, example.org, PLACEHOLDER) is a warning.
 */
export function clustersRuleIssues(loaded: LoadedYaml, file: ClustersFile): Issue[] {
  const issues: Issue[] = [...placeholderIssues(loaded, ['clusters'])];
  for (const [name, cluster] of Object.entries(file.clusters)) {
    if (cluster.transport !== 'ssh') continue;
    for (const key of ['host', 'user', 'known_host_key'] as const) {
      if (cluster[key] !== undefined) continue;
      issues.push(
        issueAt(
          loaded,
          'ssh-settings',
          ['clusters', name, 'transport'],
          `cluster \`${name}\` uses transport ssh but has no \`${key}\`; ${key === 'known_host_key' ? 'the host key is pinned so a changed or spoofed host is refused' : 'ssh needs it to connect'}: add ${key}`,
        ),
      );
    }
  }
  return issues;
}
