// Semantic rules for one candidate, each with an id, a severity and a message that says what is
// wrong, why (the AlpaSim reason) and what would be right. Pure: all inputs are passed in.
import {
  CAPACITY_IMBALANCE_LIMIT,
  GPU_MEMORY_LIMITS,
  SERVICES,
  type ServiceName,
} from '../catalog/alpasim.js';
import type { Candidate } from '../types/generated/candidate.js';
import type { Cluster } from '../types/generated/clusters.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { Topology } from '../types/generated/topology.js';
import { activeServices, capacity, capacitySummary, isSkipped } from './capacity.js';
import { issueAt } from './files.js';
import type { Issue, PathSegment, Severity } from './issues.js';
import { type GpuMemoryPrediction, predictGpuMemory } from './memory.js';
import type { LoadedYaml } from './yaml.js';

export const RULES = {
  'name-mismatch': 'error',
  'parent-missing': 'error',
  'gpu-index': 'error',
  'skip-changed': 'error',
  'renderer-replicas': 'error',
  'no-active-service': 'error',
  'capacity-imbalance': 'warning',
  'cache-size': 'warning',
  'nr-workers': 'error',
  'gpu-memory': 'error',
  'duplicate-topology': 'error',
} as const satisfies Record<string, Severity>;

export interface EarlierCandidate {
  name: string;
  hash: string;
  file: string;
}

export interface CandidateRuleInput {
  loaded: LoadedYaml;
  candidate: Candidate;
  /** File name without .yaml. */
  stem: string;
  /** The candidate's full topology (base preset merged with its block). */
  expanded: Topology;
  /** The expanded base preset. */
  base: Topology;
  baseName: string;
  experiment: Experiment;
  cluster: Cluster;
  clusterName: string;
  /** The parent's full topology when the candidate names a parent that exists. */
  parent?: { name: string; expanded: Topology };
  /** True when `candidate.parent` is set but no such candidate exists in the experiment. */
  parentMissing: boolean;
  hash: string;
  earlier: readonly EarlierCandidate[];
  /**
   * True when the memory model was fitted from measured runs. Otherwise (clusters.yaml's estimate, numbers
   * AlpaSim does not publish) a prediction over the limit is a warning marked "unmeasured", never an error.
   */
  memoryModelFitted?: boolean;
  /**
   * `--allow-unmeasured-memory` (or the experiment's allow_unmeasured_memory): while the model is an
   * estimate, a prediction above a GPU's capacity is a warning too. A fitted model is never overruled.
   */
  allowUnmeasuredMemory?: boolean;
}

/**
 * How bad a GPU's predicted memory is. Above its capacity the candidate cannot fit: an error, estimate
 * or not (unless the team allows unmeasured predictions while its model is not fitted yet). Above
 * AlpaSim's 90% limit: an error with a fitted model, a warning on clusters.yaml's estimate. Above 80%: a
 * warning.
 */
function gpuMemoryFinding(
  row: GpuMemoryPrediction,
  parts: string,
  input: Pick<CandidateRuleInput, 'memoryModelFitted' | 'allowUnmeasuredMemory' | 'experiment'>,
): [string, 'error' | 'warning'] {
  const measured = input.memoryModelFitted === true;
  const allowed =
    !measured && (input.allowUnmeasuredMemory === true || input.experiment.allow_unmeasured_memory === true);
  const over = row.fraction > GPU_MEMORY_LIMITS.capacity;
  const limit = over
    ? GPU_MEMORY_LIMITS.capacity
    : row.level === 'error'
      ? GPU_MEMORY_LIMITS.error
      : GPU_MEMORY_LIMITS.warning;
  const why = over
    ? 'More than the GPU holds: the candidate cannot start'
    : row.level === 'error'
      ? 'Above 90% AlpaSim runs out of GPU memory (the usual crash)'
      : 'Above 80% leaves little headroom for peaks';
  const estimate = measured
    ? ''
    : over
      ? allowed
        ? ". The prediction uses clusters.yaml's estimated GiB per replica and per cached scene, not measured runs, and allow_unmeasured_memory (--allow-unmeasured-memory) accepts it: a warning until the experiment's record fits the model"
        : ". The prediction uses clusters.yaml's estimated GiB per replica and per cached scene, not measured runs: if your estimate is too high, correct memory_model in clusters.yaml, or set allow_unmeasured_memory: true in experiment.yaml (--allow-unmeasured-memory on the command line) until the record fits the model"
      : ". The prediction uses clusters.yaml's estimated GiB per replica and per cached scene, not measured runs: a warning until the experiment's record fits the model";
  const severity = over
    ? allowed
      ? 'warning'
      : 'error'
    : row.level === 'error' && measured
      ? 'error'
      : 'warning';
  return [
    `${measured ? '' : 'unmeasured: '}GPU ${row.gpu} is predicted to use ${row.totalGiB.toFixed(1)} of ${row.capacityGiB} GiB (${Math.round(row.fraction * 100)}%, above ${Math.round(limit * 100)}%): ${parts}${row.overheadGiB ? `, overhead ${row.overheadGiB} GiB` : ''}. ${why}: move instances to a GPU with headroom, lower replicas or cache sizes${estimate}`,
    severity,
  ];
}

/** One candidate under check: its input, where its findings go, and where a key comes from. */
interface CandidateCheck {
  input: CandidateRuleInput;
  add(
    rule: keyof typeof RULES,
    path: PathSegment[],
    message: string,
    severity?: Severity,
    key?: boolean,
  ): void;
  /** True when the candidate's file sets the topology key itself. */
  inFile(path: PathSegment[]): boolean;
  /** Where an inherited value comes from, for a message ('' when the file sets it). */
  source(path: PathSegment[]): string;
}

/** The candidate rules, in the order their findings are listed. */
const CANDIDATE_RULES: readonly ((c: CandidateCheck) => void)[] = [
  nameRule,
  parentRule,
  gpuIndexRule,
  skipRule,
  rendererReplicasRule,
  capacityRule,
  cacheSizeRule,
  nrWorkersRule,
  gpuMemoryRule,
  duplicateRule,
];

export function candidateRuleIssues(input: CandidateRuleInput): Issue[] {
  const { loaded } = input;
  const issues: Issue[] = [];
  const inFile = (path: PathSegment[]) => loaded.has(['topology', ...path]);
  const check: CandidateCheck = {
    input,
    add: (rule, path, message, severity = RULES[rule], key = false) =>
      issues.push(issueAt(loaded, rule, path, message, key, severity)),
    inFile,
    source: (path) =>
      inFile(path)
        ? ''
        : ` (inherited from preset \`${input.baseName}\`${input.parent ? ` or parent \`${input.parent.name}\`` : ''})`,
  };
  for (const rule of CANDIDATE_RULES) rule(check);
  return issues;
}

/** A path inside the candidate's topology block. */
const T = (...path: PathSegment[]): PathSegment[] => ['topology', ...path];

function nameRule({ input, add }: CandidateCheck): void {
  if (input.candidate.name === input.stem) return;
  add(
    'name-mismatch',
    ['name'],
    `name \`${input.candidate.name}\` differs from the file name \`${input.stem}.yaml\`; the name goes into the Slurm job name and the record, so they must agree: rename the file or set name: ${input.stem}`,
  );
}

function parentRule({ input, add }: CandidateCheck): void {
  const { candidate, experiment } = input;
  if (candidate.parent && candidate.parent === candidate.name) {
    add(
      'parent-missing',
      ['parent'],
      `parent \`${candidate.parent}\` is the candidate itself: name the candidate this one changes`,
    );
  } else if (input.parentMissing) {
    add(
      'parent-missing',
      ['parent'],
      `parent \`${candidate.parent}\` is not a candidate of experiment ${experiment.experiment_id} (no ${candidate.parent}.yaml beside this file): name an existing candidate, e.g. baseline`,
    );
  }
}

function gpuIndexRule({ input, add, inFile, source }: CandidateCheck): void {
  const { expanded, experiment, cluster } = input;
  const gpusPerNode = Math.min(
    experiment.fixed_inputs.slurm?.gpus_per_node ?? cluster.gpus_per_node,
    cluster.gpus_per_node,
  );
  for (const svc of SERVICES) {
    const gpus = expanded.services?.[svc]?.gpus;
    if (!Array.isArray(gpus)) continue;
    gpus.forEach((gpu, i) => {
      if (gpu < gpusPerNode) return;
      add(
        'gpu-index',
        inFile(['services', svc, 'gpus']) ? T('services', svc, 'gpus', i) : T('services', svc, 'gpus'),
        `GPU index ${gpu} of \`${svc}\` does not exist: the job gets ${gpusPerNode} GPUs per node on cluster \`${input.clusterName}\`, numbered 0-${gpusPerNode - 1}${source(['services', svc, 'gpus'])}; use an index below ${gpusPerNode}`,
      );
    });
  }
}

function skipRule({ input, add, inFile }: CandidateCheck): void {
  const reference = input.parent?.expanded ?? input.base;
  const referenceName = input.parent
    ? `parent \`${input.parent.name}\``
    : `the experiment's base (\`${input.baseName}\` with its fixed inputs)`;
  for (const svc of SERVICES) {
    const mine = isSkipped(input.expanded, svc);
    const theirs = isSkipped(reference, svc);
    if (mine === theirs) continue;
    add(
      'skip-changed',
      inFile(['runtime', 'endpoints', svc, 'skip'])
        ? T('runtime', 'endpoints', svc, 'skip')
        : T('runtime', 'endpoints', svc),
      `\`runtime.endpoints.${svc}.skip\` is ${mine} but ${theirs} in ${referenceName}; skip decides which services run, which changes what is simulated, so a candidate must never change it: set skip: ${theirs} or remove the key`,
    );
  }
}

function rendererReplicasRule({ input, add, source }: CandidateCheck): void {
  const { expanded } = input;
  const rendererReplicas = expanded.services?.renderer?.replicas_per_container ?? 1;
  if (rendererReplicas <= 1 || isSkipped(expanded, 'renderer')) return;
  const gpus = expanded.services?.renderer?.gpus;
  const n = Array.isArray(gpus) ? gpus.length : 1;
  const repeated = Array.isArray(gpus) ? gpus.flatMap((g) => Array(rendererReplicas).fill(g)) : [];
  add(
    'renderer-replicas',
    T('services', 'renderer', 'replicas_per_container'),
    `the renderer has replicas_per_container ${rendererReplicas}${source(['services', 'renderer', 'replicas_per_container'])}, but the NRE renderer does not support more than one replica per container: set it to 1 and repeat GPU entries instead${repeated.length ? ` (gpus: [${repeated.join(', ')}] gives the same ${n * rendererReplicas} instances)` : ''}`,
  );
}

function capacityRule({ input, add }: CandidateCheck): void {
  const summary = capacitySummary(input.expanded);
  const active = activeServices(input.expanded);
  if (active.length === 0) {
    add(
      'no-active-service',
      T(),
      'no service is active (all absent or skipped): the run would simulate nothing; keep the services of the base preset',
    );
  } else if (summary.imbalance > CAPACITY_IMBALANCE_LIMIT) {
    const max = Math.max(...Object.values(summary.byService));
    const biggest = active.filter((s) => summary.byService[s] === max);
    const table = active.map((s) => `${s} ${summary.byService[s]}`).join(', ');
    const svc = biggest[0] as ServiceName;
    add(
      'capacity-imbalance',
      T('runtime', 'endpoints', svc, 'n_concurrent_rollouts'),
      `service capacities are unbalanced (${table}): the largest (${biggest.join(', ')} ${max}) exceeds the smallest (${summary.binding.join(', ')} ${summary.inFlight}) by ${Math.round((summary.imbalance - 1) * 100)}% (limit ${Math.round((CAPACITY_IMBALANCE_LIMIT - 1) * 100)}%); only ${summary.inFlight} rollouts can be in flight, so the excess is wasted GPU memory: bring capacities (containers × replicas_per_container × n_concurrent_rollouts) within 25% of each other`,
    );
  }
}

function cacheSizeRule({ input, add, inFile, source }: CandidateCheck): void {
  const { expanded } = input;
  const active = activeServices(expanded);
  for (const [svc, key] of [
    ['renderer', 'nre_cache_size'],
    ['physics', 'physics_cache_size'],
  ] as const) {
    if (!active.includes(svc)) continue;
    const cache = expanded.defines?.[key];
    const concurrency = expanded.runtime?.endpoints?.[svc]?.n_concurrent_rollouts ?? 1;
    if (cache === undefined || cache >= concurrency + 1) continue;
    add(
      'cache-size',
      inFile(['defines', key]) ? T('defines', key) : T('runtime', 'endpoints', svc, 'n_concurrent_rollouts'),
      `defines.${key} is ${cache}${source(['defines', key])} but ${svc} serves ${concurrency} rollouts at once per instance: with fewer cached scenes than concurrent rollouts + 1, scenes are evicted and reloaded (about 10 s per miss); set ${key} to at least ${concurrency + 1}`,
    );
  }
}

function nrWorkersRule({ input, add, source }: CandidateCheck): void {
  const { cluster } = input;
  const workers = input.expanded.runtime?.nr_workers;
  if (workers === undefined || workers <= cluster.cpus_per_node) return;
  add(
    'nr-workers',
    T('runtime', 'nr_workers'),
    `runtime.nr_workers is ${workers}${source(['runtime', 'nr_workers'])} but a node of cluster \`${input.clusterName}\` has ${cluster.cpus_per_node} CPUs: each runtime worker is a CPU-bound process; use 1-${cluster.cpus_per_node}`,
  );
}

function gpuMemoryRule({ input, add, inFile }: CandidateCheck): void {
  const { expanded, cluster } = input;
  if (!cluster.memory_model) return;
  for (const row of predictGpuMemory(expanded, cluster.memory_model, cluster.gpu_memory_gib)) {
    if (row.level === 'ok') continue;
    const parts = row.services
      .map(
        (m) =>
          `${m.service} ${m.instances}× = ${(m.replicaGiB + m.cacheGiB).toFixed(1)} GiB${m.cachedScenes ? ` (incl. ${m.cachedScenes} cached scenes)` : ''}`,
      )
      .join(', ');
    const svcOnGpu =
      row.services.map((m) => m.service).find((s) => inFile(['services', s, 'gpus'])) ??
      row.services[0]?.service;
    const gpus = svcOnGpu ? expanded.services?.[svcOnGpu]?.gpus : undefined;
    const idx = Array.isArray(gpus) ? gpus.indexOf(row.gpu) : -1;
    const at =
      svcOnGpu && inFile(['services', svcOnGpu, 'gpus']) && idx >= 0
        ? T('services', svcOnGpu, 'gpus', idx)
        : T('services');
    add('gpu-memory', at, ...gpuMemoryFinding(row, parts, input));
  }
}

function duplicateRule({ input, add }: CandidateCheck): void {
  const duplicate = input.earlier.find((e) => e.hash === input.hash);
  if (!duplicate) return;
  add(
    'duplicate-topology',
    ['topology'],
    `this topology is identical to candidate \`${duplicate.name}\` (${duplicate.file}, hash ${input.hash.slice(0, 8)}) once expanded: running it again measures nothing new; change at least one topology key or drop this candidate`,
    'error',
    true,
  );
}

/** Capacity per active service, for reports. */
export function capacityTable(topology: Topology): Array<{ service: ServiceName; capacity: number }> {
  return activeServices(topology).map((service) => ({ service, capacity: capacity(topology, service) }));
}
