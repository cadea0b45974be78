// Validate use case: candidate, experiment, clusters and preset files, with all I/O injected.
// The CLI reads everything from disk; the validate action reads candidates and experiment.yaml from
// the pull request head (as data, through the API) and presets and clusters.yaml from the default branch.

import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, posix, relative, resolve, sep } from 'node:path';
import { autopilotIssues } from '../autopilot/policy.js';
import type { ServiceName } from '../catalog/alpasim.js';
import { fittedMemoryModel } from '../suggest/record.js';
import { capacitySummary, gpuMap } from '../topology/capacity.js';
import {
  type Change,
  expandCandidate,
  expandPreset,
  topologyDiff,
  topologyHash,
} from '../topology/expand.js';
import {
  type Checked,
  checkCandidate,
  checkClusters,
  checkExperiment,
  checkPreset,
  clustersRuleIssues,
  experimentRuleIssues,
} from '../topology/files.js';
import { type Issue, sortIssues } from '../topology/issues.js';
import { type GpuMemoryPrediction, predictGpuMemory } from '../topology/memory.js';
import {
  describePreset,
  type FoundPreset,
  type PresetOptions,
  presetNotFound,
  readPreset,
} from '../topology/presets.js';
import { jobName, renderSubmission, type Submission } from '../topology/render.js';
import { candidateRuleIssues, type EarlierCandidate } from '../topology/rules.js';
import type { Candidate } from '../types/generated/candidate.js';
import type { Cluster, ClustersFile } from '../types/generated/clusters.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { Topology } from '../types/generated/topology.js';

/** Read access to a tree of files (the working tree, or a commit through the GitHub API). */
export interface FileSource {
  /** The file's text, or undefined when it does not exist. */
  read(path: string): Promise<string | undefined>;
  /** File names directly inside `dir`, or undefined when the folder does not exist. */
  list(dir: string): Promise<string[] | undefined>;
}

/** A topology file that is a symbolic link, or under one: never read. */
export class UnsafeFileError extends Error {
  override name = 'UnsafeFileError';
}

/**
 * Throws UnsafeFileError when `path` is a symbolic link or (below `root`) lies under one: lstat,
 * so the target is never opened (a link to /etc/passwd is refused, not quoted). A path outside
 * `root` (a CLI argument) is checked itself only.
 */
export function assertNotLinked(root: string, path: string): void {
  const file = resolve(root, path);
  const rel = relative(resolve(root), file);
  const inside = rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
  let at = inside ? resolve(root) : dirname(file);
  for (const part of inside ? rel.split(sep) : [basename(file)]) {
    at = join(at, part);
    let link = false;
    try {
      link = lstatSync(at).isSymbolicLink();
    } catch {
      return; // missing: reported as missing by the reader
    }
    if (link)
      throw new UnsafeFileError(
        `${path} is ${at === file ? 'a symbolic link' : `under a symbolic link (${relative(root, at)})`}: topology files are read only as regular files of the repository, never through a link; replace the link with a copy of the file`,
      );
  }
}

/**
 * The working tree as a FileSource; relative paths are resolved against `root`. Presets are found
 * by src/topology/presets.ts (the override, the repository's own, then the shipped ones), which
 * reads the repository's copy through this source.
 */
export function fileSystemSource(root: string): FileSource {
  return {
    async read(path) {
      assertNotLinked(root, path);
      try {
        return readFileSync(resolve(root, path), 'utf8');
      } catch {
        return undefined;
      }
    },
    async list(dir) {
      try {
        return readdirSync(resolve(root, dir), { withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => e.name);
      } catch {
        return undefined;
      }
    },
  };
}

export interface ValidateOptions {
  /** Where candidate files and experiment.yaml are read (the pull request head in the action). */
  files: FileSource;
  /** Trusted configuration: presets and clusters.yaml (the default branch in the action). Default: `files`. */
  config?: FileSource;
  /** clusters.yaml path in `config`. Default: `<topologies dir>/clusters.yaml`, the topologies dir being the experiment folder's parent. */
  clustersFile?: string;
  /**
   * Files that are new in this change (the pull request's changed files). A duplicate is reported on the
   * newer file: files not listed here count as earlier. Without it, earlier = closer to the baseline in
   * the parent chain, then by name.
   */
  newFiles?: readonly string[];
  /** Check candidates against this cluster of the clusters file instead of the experiment's own (`--cluster`). */
  clusterName?: string;
  /** `--allow-unmeasured-memory`: above a GPU's capacity on clusters.yaml's estimate is a warning (rules.ts). */
  allowUnmeasuredMemory?: boolean;
  /** Where base presets are found besides the repository (src/topology/presets.ts); default the shipped ones. */
  presets?: Omit<PresetOptions, 'topologiesDir'>;
}

export type FileKind = 'candidate' | 'experiment' | 'clusters' | 'preset';

export interface CandidateDetails {
  name: string;
  parent: string | null;
  experimentId: string;
  cluster: string;
  baseTopology: string;
  /** Where the base preset was read: the repository's own copy (perhaps overriding the shipped one), or the shipped one. */
  basePreset: Pick<FoundPreset, 'origin' | 'path' | 'overridesShipped'>;
  hash: string;
  jobName: string;
  expanded: Topology;
  /** Expanded base preset. */
  base: Topology;
  capacity: Array<{ service: ServiceName; capacity: number }>;
  inFlight: number;
  binding: ServiceName[];
  gpuMap: Array<{ gpu: number; services: ServiceName[] }>;
  /** Predicted memory per GPU, when the cluster has a memory model. */
  memory?: GpuMemoryPrediction[];
  /** True when that model was fitted from the experiment's measured runs (else clusters.yaml's estimate). */
  memoryModelFitted?: boolean;
  gpuMemoryGiB: number;
  /** Settings that differ from the parent (or from the base preset for a candidate without parent). */
  diff: Change[];
  diffFrom: string;
  /** The schema-valid experiment and cluster the candidate was checked against (what rendering needs). */
  experimentConfig: Experiment;
  clusterConfig: Cluster;
}

export interface FileReport {
  path: string;
  kind: FileKind;
  errors: Issue[];
  warnings: Issue[];
  /** Present for a candidate that passed the schema with a usable experiment. */
  candidate?: CandidateDetails;
}

export interface ValidationReport {
  files: FileReport[];
  errorCount: number;
  warningCount: number;
}

export function fileKind(path: string): FileKind {
  const name = posix.basename(path);
  if (name === 'clusters.yaml' || name === 'clusters.yml') return 'clusters';
  if (name === 'experiment.yaml' || name === 'experiment.yml') return 'experiment';
  if (posix.basename(posix.dirname(path)) === 'presets') return 'preset';
  return 'candidate';
}

export function isYamlFile(name: string): boolean {
  return name.endsWith('.yaml') || name.endsWith('.yml');
}

function stemOf(path: string): string {
  return posix.basename(path).replace(/\.ya?ml$/, '');
}

interface SiblingCandidate {
  file: string;
  stem: string;
  checked: Checked<Candidate>;
  expanded?: Topology;
  hash?: string;
}

interface ExperimentContext {
  dir: string;
  experimentFile: string;
  experiment?: Checked<Experiment>;
  clustersFile: string;
  clusters?: Checked<ClustersFile>;
  cluster?: Cluster;
  clusterName?: string;
  preset?: FoundPreset;
  /** Why the base preset was not found (where it looked, what is there). */
  presetMissing?: string;
  base?: Topology;
  /** True when GPU memory is predicted with a model fitted from the experiment's measured runs. */
  memoryModelFitted?: boolean;
  /** Problems that stop candidate rules (message, rule). */
  blockers: Array<{ rule: string; message: string }>;
  candidates: Map<string, SiblingCandidate>;
  /** Candidates by topology hash, for the duplicate rule. */
  byHash: Map<string, SiblingCandidate[]>;
  depths: Map<string, number>;
}

/** Validates the given files (not folders: the caller expands them). Reports come back in the given order. */
export async function validateFiles(
  paths: readonly string[],
  options: ValidateOptions,
): Promise<ValidationReport> {
  const run = validationRun(options);
  const reports: FileReport[] = [];
  for (const raw of paths) reports.push(await fileReport(raw, run));
  return {
    files: reports,
    errorCount: reports.reduce((n, r) => n + r.errors.length, 0),
    warningCount: reports.reduce((n, r) => n + r.warnings.length, 0),
  };
}

/** One validation's options and caches: each experiment folder and clusters file is read once. */
interface ValidationRun {
  options: ValidateOptions;
  fresh: ReadonlySet<string>;
  context(dir: string): Promise<ExperimentContext>;
}

function validationRun(options: ValidateOptions): ValidationRun {
  const config = options.config ?? options.files;
  const contexts = new Map<string, Promise<ExperimentContext>>();
  const clustersCache = new Map<string, Promise<Checked<ClustersFile> | undefined>>();
  const loadClusters = (file: string) => {
    let p = clustersCache.get(file);
    if (!p) {
      p = config.read(file).then((text) => (text === undefined ? undefined : checkClusters(text, file)));
      clustersCache.set(file, p);
    }
    return p;
  };
  return {
    options,
    fresh: new Set((options.newFiles ?? []).map((p) => posix.normalize(p))),
    context(dir) {
      let p = contexts.get(dir);
      if (!p) {
        p = buildContext(dir, options, config, loadClusters);
        contexts.set(dir, p);
      }
      return p;
    },
  };
}

async function fileReport(raw: string, run: ValidationRun): Promise<FileReport> {
  const path = posix.normalize(raw);
  const kind = fileKind(path);
  let issues: Issue[] = [];
  let candidate: CandidateDetails | undefined;
  try {
    ({ issues, candidate } = await validateOne(path, kind, run));
  } catch (e) {
    if (!(e instanceof UnsafeFileError)) throw e;
    issues = [fileIssue(path, 'unsafe-file', e.message)];
  }
  const sorted = sortIssues(issues.map((i) => ({ ...i, file: raw })));
  return {
    path: raw,
    kind,
    errors: sorted.filter((i) => i.severity === 'error'),
    warnings: sorted.filter((i) => i.severity === 'warning'),
    ...(candidate ? { candidate } : {}),
  };
}

async function validateOne(
  path: string,
  kind: FileKind,
  run: ValidationRun,
): Promise<{ issues: Issue[]; candidate?: CandidateDetails }> {
  if (kind === 'candidate') {
    const ctx = await run.context(posix.dirname(path));
    return validateCandidate(path, ctx, run.options, run.fresh);
  }
  if (kind === 'experiment') return { issues: experimentIssues(await run.context(posix.dirname(path))) };
  const text = await run.options.files.read(path);
  if (text === undefined) return { issues: [missing(path)] };
  if (kind === 'preset') return { issues: checkPreset(text, path).issues };
  const checked = checkClusters(text, path);
  return { issues: checked.value ? clustersRuleIssues(checked.loaded, checked.value) : checked.issues };
}

function missing(path: string): Issue {
  return {
    rule: 'file-missing',
    severity: 'error',
    file: path,
    line: 1,
    column: 1,
    keyPath: '',
    message: 'the file does not exist or cannot be read',
  };
}

function fileIssue(file: string, rule: string, message: string): Issue {
  return { rule, severity: 'error', file, line: 1, column: 1, keyPath: '', message };
}

async function buildContext(
  dir: string,
  options: ValidateOptions,
  config: FileSource,
  loadClusters: (file: string) => Promise<Checked<ClustersFile> | undefined>,
): Promise<ExperimentContext> {
  const topologiesDir = posix.dirname(dir);
  const ctx: ExperimentContext = {
    dir,
    experimentFile: posix.join(dir, 'experiment.yaml'),
    clustersFile: options.clustersFile ?? posix.join(topologiesDir, 'clusters.yaml'),
    blockers: [],
    candidates: new Map(),
    byHash: new Map(),
    depths: new Map(),
  };
  await readExperiment(ctx, options.files);
  await readClusters(ctx, loadClusters);
  const experiment = ctx.experiment?.value;
  if (experiment) {
    await readBase(ctx, experiment, config, { ...options.presets, topologiesDir });
    pickCluster(ctx, experiment, options.clusterName);
  }
  if (experiment && ctx.cluster && ctx.base)
    await fitMemoryModel(ctx, { experiment, cluster: ctx.cluster, base: ctx.base }, config, topologiesDir);
  await readSiblings(ctx, options.files);
  blockOnOverrideErrors(ctx);
  return ctx;
}

async function readExperiment(ctx: ExperimentContext, files: FileSource): Promise<void> {
  const text = await files.read(ctx.experimentFile);
  if (text === undefined) {
    ctx.blockers.push({
      rule: 'experiment-missing',
      message: `no experiment.yaml in ${ctx.dir}/: a candidate belongs to an experiment folder with an experiment.yaml (create one with \`topo init --command "<run command>"\`)`,
    });
    return;
  }
  ctx.experiment = checkExperiment(text, ctx.experimentFile);
  if (!ctx.experiment.value) {
    ctx.blockers.push({
      rule: 'experiment-invalid',
      message: `${ctx.experimentFile} has ${ctx.experiment.issues.length} error(s) (first: line ${ctx.experiment.issues[0]?.line}: ${ctx.experiment.issues[0]?.message}); fix it first: the candidate is checked against it`,
    });
  }
}

async function readClusters(
  ctx: ExperimentContext,
  loadClusters: (file: string) => Promise<Checked<ClustersFile> | undefined>,
): Promise<void> {
  const { clustersFile } = ctx;
  ctx.clusters = await loadClusters(clustersFile);
  if (!ctx.clusters) {
    ctx.blockers.push({
      rule: 'clusters-missing',
      message: `no clusters file at ${clustersFile}: it defines the cluster's GPUs, CPUs and memory the rules check against (pass --clusters <file> or set TOPO_CLUSTERS_FILE)`,
    });
    return;
  }
  if (ctx.clusters.value && !ctx.clusters.issues.length) {
    // Only errors make the file unusable; a placeholder left by setup is a warning on clusters.yaml itself.
    const ruleErrors = clustersRuleIssues(ctx.clusters.loaded, ctx.clusters.value).filter(
      (i) => i.severity === 'error',
    );
    if (ruleErrors.length) ctx.clusters = { loaded: ctx.clusters.loaded, issues: ruleErrors };
  }
  if (!ctx.clusters.value) {
    ctx.blockers.push({
      rule: 'clusters-invalid',
      message: `${clustersFile} has ${ctx.clusters.issues.length} error(s) (first: line ${ctx.clusters.issues[0]?.line}: ${ctx.clusters.issues[0]?.message}); fix it first`,
    });
  }
}

async function readBase(
  ctx: ExperimentContext,
  experiment: Experiment,
  config: FileSource,
  presetOptions: PresetOptions & { topologiesDir: string },
): Promise<void> {
  ctx.preset = await readPreset(experiment.base_topology, config, presetOptions);
  if (!ctx.preset) {
    const inRepository = ((await config.list(posix.join(presetOptions.topologiesDir, 'presets'))) ?? [])
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => f.slice(0, -'.yaml'.length));
    ctx.presetMissing = presetNotFound(experiment.base_topology, presetOptions, inRepository);
    ctx.blockers.push({
      rule: 'preset-unknown',
      message: `base topology preset of ${ctx.experimentFile}: ${ctx.presetMissing}`,
    });
    return;
  }
  const preset = checkPreset(ctx.preset.text, ctx.preset.path);
  if (preset.value) ctx.base = expandPreset(preset.value, experiment);
  else
    ctx.blockers.push({
      rule: 'preset-invalid',
      message: `preset ${ctx.preset.path} does not match the topology schema: ${preset.issues[0]?.message}`,
    });
}

function pickCluster(ctx: ExperimentContext, experiment: Experiment, override: string | undefined): void {
  const clusters = ctx.clusters?.value;
  if (!clusters) return;
  const wanted = override ?? experiment.cluster;
  ctx.clusterName = wanted;
  ctx.cluster = clusters.clusters[wanted];
  if (ctx.cluster) return;
  const where = override ? 'the --cluster option' : 'experiment.yaml';
  ctx.blockers.push({
    rule: 'cluster-unknown',
    message: `cluster \`${wanted}\`${override ? ' (--cluster)' : ' of experiment.yaml'} is not defined in ${ctx.clustersFile} (known: ${Object.keys(clusters.clusters).join(', ')}): fix ${where} or the clusters file`,
  });
}

/**
 * Once the experiment's record holds measured runs, GPU memory is predicted with the model fitted
 * from them (the same one `topo suggest` uses) instead of clusters.yaml's estimate.
 */
async function fitMemoryModel(
  ctx: ExperimentContext,
  { experiment, cluster, base }: { experiment: Experiment; cluster: Cluster; base: Topology },
  config: FileSource,
  topologiesDir: string,
): Promise<void> {
  const recordFile = posix.join(
    posix.dirname(topologiesDir),
    'experiments',
    `${experiment.experiment_id}.json`,
  );
  const recordText = await config.read(recordFile);
  if (recordText === undefined) return;
  try {
    const fitted = fittedMemoryModel(JSON.parse(recordText), base, cluster.memory_model);
    if (fitted.source === 'fitted') {
      ctx.cluster = { ...cluster, memory_model: fitted.model };
      ctx.memoryModelFitted = true;
    }
  } catch {
    // An unreadable record is reported by the record action; validation keeps clusters.yaml's model.
  }
}

/** Every candidate of the experiment: parents and earlier duplicates are looked up among them. */
async function readSiblings(ctx: ExperimentContext, files: FileSource): Promise<void> {
  for (const name of ((await files.list(ctx.dir)) ?? []).sort()) {
    const file = posix.join(ctx.dir, name);
    if (!isYamlFile(name) || fileKind(file) !== 'candidate') continue;
    const text = await files.read(file);
    if (text === undefined) continue;
    const sibling = siblingOf(file, text, ctx.base);
    ctx.candidates.set(sibling.stem, sibling);
    if (sibling.hash) ctx.byHash.set(sibling.hash, [...(ctx.byHash.get(sibling.hash) ?? []), sibling]);
  }
}

/** A candidate file checked and, against a usable base, expanded and hashed. */
function siblingOf(file: string, text: string, base: Topology | undefined): SiblingCandidate {
  const checked = checkCandidate(text, file);
  const sibling: SiblingCandidate = { file, stem: stemOf(file), checked };
  if (checked.value && base) {
    sibling.expanded = expandCandidate(base, checked.value.topology);
    sibling.hash = topologyHash(sibling.expanded);
  }
  return sibling;
}

/**
 * An override render would refuse (unknown key, hydra.*, reserved, topology) stops every candidate
 * here, at validation, rather than at render.
 */
function blockOnOverrideErrors(ctx: ExperimentContext): void {
  if (!ctx.experiment?.value) return;
  const first = experimentIssues(ctx).find((i) => i.severity === 'error' && i.rule.startsWith('override-'));
  if (!first) return;
  ctx.blockers.push({
    rule: 'experiment-invalid',
    message: `${ctx.experimentFile} line ${first.line}: ${first.message}; fix it first: every candidate runs with the experiment's overrides`,
  });
}

function experimentIssues(ctx: ExperimentContext): Issue[] {
  if (!ctx.experiment)
    return [fileIssue(ctx.experimentFile, 'file-missing', 'the file does not exist or cannot be read')];
  const { loaded, value, issues } = ctx.experiment;
  if (!value) return issues;
  return [
    ...experimentRuleIssues(loaded, value, {
      clusters: ctx.clusters?.value,
      clustersFile: ctx.clustersFile,
      presetMissing: ctx.experiment.value && !ctx.preset ? (ctx.presetMissing ?? 'not found') : undefined,
      dirName: posix.basename(ctx.dir),
    }),
    ...autopilotIssues(loaded, value, { cluster: ctx.clusters?.value?.clusters[value.cluster] }),
  ];
}

/** Depth in the parent chain (baseline 0), cycle-safe. */
function depthOf(ctx: ExperimentContext, stem: string): number {
  const known = ctx.depths.get(stem);
  if (known !== undefined) return known;
  const depth = chainLength(ctx, stem);
  ctx.depths.set(stem, depth);
  return depth;
}

function chainLength(ctx: ExperimentContext, stem: string): number {
  const seen = new Set<string>();
  let depth = 0;
  let current = ctx.candidates.get(stem);
  while (current?.checked.value?.parent && !seen.has(current.stem)) {
    seen.add(current.stem);
    depth++;
    current = ctx.candidates.get(current.checked.value.parent);
  }
  return depth;
}

async function validateCandidate(
  path: string,
  ctx: ExperimentContext,
  options: ValidateOptions,
  fresh: ReadonlySet<string>,
): Promise<{ issues: Issue[]; candidate?: CandidateDetails }> {
  const own = await ownCandidate(path, ctx, options.files);
  if (!own) return { issues: [missing(path)] };
  const issues = [
    ...own.checked.issues,
    ...reservedNameIssues(own.checked),
    ...sharedNameIssues(own.checked, path, fresh),
  ];
  if (ctx.blockers.length) {
    for (const b of ctx.blockers) issues.push(fileIssue(path, b.rule, b.message));
    return { issues };
  }
  const value = own.checked.value;
  const experiment = ctx.experiment?.value;
  const cluster = ctx.cluster;
  if (!value || !experiment || !cluster || !ctx.base || !own.expanded || !own.hash) return { issues };

  const parentName = value.parent ?? undefined;
  const parentSibling = parentName && parentName !== value.name ? ctx.candidates.get(parentName) : undefined;
  const parent = parentSibling?.expanded
    ? { name: parentName as string, expanded: parentSibling.expanded }
    : undefined;
  const checked: CheckedCandidate = {
    value,
    expanded: own.expanded,
    hash: own.hash,
    experiment,
    cluster,
    base: ctx.base,
  };
  issues.push(
    ...candidateRuleIssues({
      loaded: own.checked.loaded,
      candidate: value,
      stem: own.stem,
      expanded: own.expanded,
      base: ctx.base,
      baseName: experiment.base_topology,
      experiment,
      cluster,
      clusterName: ctx.clusterName ?? experiment.cluster,
      parent,
      parentMissing: Boolean(parentName && parentName !== value.name && !parentSibling),
      hash: own.hash,
      earlier: earlierDuplicates(ctx, own, own.hash, fresh),
      memoryModelFitted: ctx.memoryModelFitted === true,
      allowUnmeasuredMemory: options.allowUnmeasuredMemory === true,
    }),
  );
  return { issues, candidate: candidateDetails(ctx, checked, parent) };
}

/** The candidate as read with its siblings, or read again when the path is not the sibling's file. */
async function ownCandidate(
  path: string,
  ctx: ExperimentContext,
  files: FileSource,
): Promise<SiblingCandidate | undefined> {
  const sibling = ctx.candidates.get(stemOf(path));
  if (sibling && sibling.file === path) return sibling;
  const text = await files.read(path);
  return text === undefined ? undefined : siblingOf(path, text, ctx.base);
}

/**
 * Candidates of the same topology that came first: an unchanged file before one new in this change,
 * else the one closer to the baseline in the parent chain, then by name.
 */
function earlierDuplicates(
  ctx: ExperimentContext,
  own: SiblingCandidate,
  hash: string,
  fresh: ReadonlySet<string>,
): EarlierCandidate[] {
  const ownNew = fresh.has(own.file);
  const ownDepth = depthOf(ctx, own.stem);
  const earlier: EarlierCandidate[] = [];
  for (const other of ctx.byHash.get(hash) ?? []) {
    if (other.stem === own.stem) continue;
    const otherNew = fresh.has(other.file);
    const otherDepth = depthOf(ctx, other.stem);
    const isEarlier =
      otherNew !== ownNew
        ? !otherNew
        : otherDepth < ownDepth || (otherDepth === ownDepth && other.stem < own.stem);
    if (isEarlier) earlier.push({ name: other.checked.value?.name ?? other.stem, hash, file: other.file });
  }
  return earlier;
}

interface CheckedCandidate {
  value: Candidate;
  expanded: Topology;
  hash: string;
  experiment: Experiment;
  cluster: Cluster;
  base: Topology;
}

/** What the summary, the submit action and `--json` show of a candidate that passed the schema. */
function candidateDetails(
  ctx: ExperimentContext,
  { value, expanded, hash, experiment, cluster, base }: CheckedCandidate,
  parent: { name: string; expanded: Topology } | undefined,
): CandidateDetails {
  const summary = capacitySummary(expanded);
  return {
    name: value.name,
    parent: value.parent ?? null,
    experimentId: experiment.experiment_id,
    cluster: ctx.clusterName ?? experiment.cluster,
    baseTopology: experiment.base_topology,
    basePreset: {
      origin: ctx.preset?.origin ?? 'shipped',
      path: ctx.preset?.path ?? '',
      overridesShipped: ctx.preset?.overridesShipped ?? false,
    },
    hash,
    jobName: safeJobName(experiment.experiment_id, value.name, expanded),
    expanded,
    base,
    capacity: Object.entries(summary.byService).map(([service, capacity]) => ({
      service: service as ServiceName,
      capacity: capacity as number,
    })),
    inFlight: summary.inFlight,
    binding: summary.binding,
    gpuMap: [...gpuMap(expanded).entries()].map(([gpu, services]) => ({ gpu, services })),
    ...(cluster.memory_model
      ? {
          memory: predictGpuMemory(expanded, cluster.memory_model, cluster.gpu_memory_gib),
          memoryModelFitted: ctx.memoryModelFitted === true,
        }
      : {}),
    gpuMemoryGiB: cluster.gpu_memory_gib,
    diff: topologyDiff(parent?.expanded ?? base, expanded),
    diffFrom: parent ? parent.name : `preset ${experiment.base_topology}`,
    experimentConfig: experiment,
    clusterConfig: cluster,
  };
}

/**
 * A candidate name with `-<8 digits>-` inside or `-<8 digits>` at its end is reserved: in a run name
 * (`topo-<experiment>-<candidate>-…`) it could read as the rest of a longer experiment id
 * (`…-<word>-<YYYYMMDD>`), whose slots and cancels would then count this candidate's jobs.
 */
const RESERVED_CANDIDATE_NAME = /-[0-9]{8}(-|$)/;

function reservedNameIssues(checked: ReturnType<typeof checkCandidate>): Issue[] {
  const name = checked.value?.name;
  if (!name || !RESERVED_CANDIDATE_NAME.test(name)) return [];
  const fixed = name.replace(/-([0-9]{8})(?=-|$)/g, '-d$1');
  return [
    {
      rule: 'reserved-name',
      severity: 'error',
      file: checked.loaded.file,
      ...checked.loaded.locate(['name']),
      keyPath: 'name',
      message: `name \`${name}\` contains \`-<8 digits>\` followed by \`-\` or the end, which is reserved: in the run name \`topo-<experiment>-${name}-…\` it could read as part of a longer experiment id (\`…-<word>-<YYYYMMDD>\`), whose slots and cancels would count this candidate's jobs; use a name without a dash before 8 digits, e.g. \`${fixed}\` (rename the file to match)`,
    },
  ];
}

/**
 * Candidate names are unique across a pull request's experiments: its comments (`submit-<name>`,
 * `monitor-<name>`) and `/topo submit|cancel|stop <name>` name a candidate by its name alone, so two
 * experiments' candidates of one name would share them (and cross into the record).
 */
function sharedNameIssues(
  checked: ReturnType<typeof checkCandidate>,
  path: string,
  fresh: ReadonlySet<string>,
): Issue[] {
  const stem = stemOf(path);
  const topologies = posix.dirname(posix.dirname(path));
  const others = [...fresh].filter(
    (p) =>
      p !== path &&
      isYamlFile(p) &&
      fileKind(p) === 'candidate' &&
      stemOf(p) === stem &&
      posix.dirname(p) !== posix.dirname(path) &&
      posix.dirname(posix.dirname(p)) === topologies,
  );
  if (!others.length) return [];
  return [
    {
      rule: 'shared-name',
      severity: 'error',
      file: path,
      ...(checked.value ? checked.loaded.locate(['name']) : { line: 1, column: 1 }),
      keyPath: 'name',
      message: `candidate \`${stem}\` is also a candidate of another experiment in this pull request (${others.map((o) => `\`${o}\``).join(', ')}); a pull request's comments and its \`/topo submit|cancel|stop <candidate>\` commands name a candidate by its name alone, so names must be unique across the pull request's experiments: rename one (file and \`name:\`), or move it to a pull request of its own`,
    },
  ];
}

function safeJobName(experimentId: string, name: string, expanded: Topology): string {
  try {
    return jobName(experimentId, name, expanded);
  } catch {
    return '';
  }
}

/** The `--json` shape: `{"files":[{"path","errors":[{rule,severity,line,column,key_path,message}],"warnings":[…]}]}`. */
/** What `topo validate --json` prints per candidate: the numbers the validate summary shows. */
export interface JsonCandidateSummary {
  job_name: string;
  /** Where the base preset was read (the repository's own copy may override the shipped one). */
  base_preset: { name: string; origin: 'override' | 'repository' | 'shipped'; overrides_shipped: boolean };
  capacity: Partial<Record<ServiceName, number>>;
  in_flight: number;
  binding: ServiceName[];
  /** Predicted GiB per GPU (absent without a memory model); `measured` false while the model is an estimate. */
  gpu_memory?: Array<{
    gpu: number;
    predicted_gib: number;
    capacity_gib: number;
    fraction: number;
    level: string;
  }>;
  gpu_memory_measured?: boolean;
}

export function toJsonReport(report: ValidationReport): {
  files: Array<{
    path: string;
    errors: JsonIssue[];
    warnings: JsonIssue[];
    candidate?: JsonCandidateSummary;
  }>;
} {
  const strip = (i: Issue): JsonIssue => ({
    rule: i.rule,
    severity: i.severity,
    line: i.line,
    column: i.column,
    key_path: i.keyPath,
    message: i.message,
  });
  const round = (x: number) => Math.round(x * 100) / 100;
  const candidate = (c: CandidateDetails): JsonCandidateSummary => ({
    job_name: c.jobName,
    base_preset: {
      name: c.baseTopology,
      origin: c.basePreset.origin,
      overrides_shipped: c.basePreset.overridesShipped,
    },
    capacity: Object.fromEntries(c.capacity.map((r) => [r.service, r.capacity])),
    in_flight: c.inFlight,
    binding: c.binding,
    ...(c.memory
      ? {
          gpu_memory: c.memory.map((m) => ({
            gpu: m.gpu,
            predicted_gib: round(m.totalGiB),
            capacity_gib: m.capacityGiB,
            fraction: round(m.fraction),
            level: m.level,
          })),
          gpu_memory_measured: c.memoryModelFitted === true,
        }
      : {}),
  });
  return {
    files: report.files.map((f) => ({
      path: f.path,
      errors: f.errors.map(strip),
      warnings: f.warnings.map(strip),
      ...(f.candidate ? { candidate: candidate(f.candidate) } : {}),
    })),
  };
}

/** One finding as `topo validate --json` prints it (snake_case, like every --json output). */
export interface JsonIssue {
  rule: string;
  severity: Issue['severity'];
  line: number;
  column: number;
  key_path: string;
  message: string;
}

export interface RenderOutcome {
  report: FileReport;
  /** Present only when the candidate has no errors. */
  submission?: Submission;
}

/** Validates one candidate and renders its sbatch argv; a candidate with any error is never rendered. */
export async function renderCandidateFile(path: string, options: ValidateOptions): Promise<RenderOutcome> {
  const { files } = await validateFiles([path], options);
  const report = files[0] as FileReport;
  if (report.kind !== 'candidate' || report.errors.length || !report.candidate) return { report };
  const c = report.candidate;
  const submission = renderSubmission(
    c.experimentConfig,
    { name: c.name, expanded: c.expanded, base: c.base },
    c.clusterConfig,
  );
  return { report, submission };
}

// ---------------------------------------------------------------------------------------------
// The pull-request flavour, driven by actions/validate: pick the changed topology files, validate
// them, report annotations at file:line and a job summary, fail only on errors.

export interface ValidateReporter {
  /** One annotation at file:line:column (error or warning). */
  annotate(issue: Issue): void;
  /** The job summary (Markdown). */
  summary(markdown: string): Promise<void>;
  info(message: string): void;
}

export interface PullRequestValidation {
  /** Paths the pull request adds or modifies (repository-relative). */
  changedPaths: readonly string[];
  /** Folder of the topology files; default `topologies`. */
  topologiesDir?: string;
}

/** Changed files this validation cares about: YAML under the topologies folder, except the schemas. */
export function topologyFilesOf(changedPaths: readonly string[], topologiesDir = 'topologies'): string[] {
  const prefix = `${posix.normalize(topologiesDir).replace(/\/+$/, '')}/`;
  return changedPaths
    .map((p) => posix.normalize(p))
    .filter((p) => p.startsWith(prefix) && isYamlFile(p))
    .filter((p) => {
      const parts = p.slice(prefix.length).split('/');
      return parts.length === 1 ? fileKind(p) === 'clusters' : parts.length === 2;
    })
    .sort();
}

/**
 * Validates the topology files a pull request changes. Candidate and experiment files come from
 * `options.files` (the head commit, read as data); presets and clusters.yaml from `options.config`
 * (the default branch). Returns the report; the caller fails the job when `errorCount > 0`.
 */
export async function validatePullRequest(
  input: PullRequestValidation,
  options: ValidateOptions,
  reporter: ValidateReporter,
): Promise<ValidationReport> {
  const paths = topologyFilesOf(input.changedPaths, input.topologiesDir);
  if (paths.length === 0) {
    reporter.info('no topology files changed in this pull request: nothing to validate');
    await reporter.summary('## Topology validation\n\nNo topology files changed in this pull request.\n');
    return { files: [], errorCount: 0, warningCount: 0 };
  }
  reporter.info(`validating ${paths.length} file(s): ${paths.join(', ')}`);
  const report = await validateFiles(paths, { ...options, newFiles: paths });
  for (const file of report.files)
    for (const issue of [...file.errors, ...file.warnings]) reporter.annotate(issue);
  await reporter.summary(validationSummary(report));
  return report;
}

const fmt = (v: unknown) => (v === undefined ? '—' : `\`${JSON.stringify(v)}\``);

/** The job summary: the findings, then one section per candidate with its tables. */
export function validationSummary(report: ValidationReport): string {
  const lines: string[] = ['## Topology validation', ''];
  const verdict = report.errorCount
    ? `❌ ${report.errorCount} error(s), ${report.warningCount} warning(s) in ${report.files.length} file(s)`
    : `✅ ${report.files.length} file(s) valid${report.warningCount ? `, ${report.warningCount} warning(s)` : ''}`;
  lines.push(verdict, '');
  for (const file of report.files) {
    const c = file.candidate;
    const state = file.errors.length ? '❌' : file.warnings.length ? '⚠️' : '✅';
    lines.push(`### ${state} \`${file.path}\`${c ? ` — candidate \`${c.name}\`` : ` (${file.kind})`}`, '');
    for (const i of [...file.errors, ...file.warnings]) {
      lines.push(
        `- **${i.severity}** \`${i.rule}\` at line ${i.line}${i.keyPath ? ` (\`${i.keyPath}\`)` : ''}: ${i.message}`,
      );
    }
    if (file.errors.length || file.warnings.length) lines.push('');
    if (!c) continue;
    const origin =
      c.basePreset.origin === 'shipped'
        ? ''
        : ` (${describePreset({ ...c.basePreset, name: c.baseTopology, text: '' })})`;
    lines.push(
      `Job name: \`${c.jobName}\` · parent: ${c.parent ? `\`${c.parent}\`` : '—'} · base preset: \`${c.baseTopology}\`${origin} · cluster: \`${c.cluster}\``,
      '',
    );
    lines.push(
      `**Capacity** (containers × replicas × concurrent rollouts) — in flight: **${c.inFlight}** (bound by ${c.binding.join(', ')})`,
      '',
    );
    lines.push('| service | capacity |', '|---|---:|');
    for (const row of c.capacity) lines.push(`| ${row.service} | ${row.capacity} |`);
    lines.push('');
    const memory = new Map((c.memory ?? []).map((m) => [m.gpu, m]));
    lines.push(
      `**GPU map and predicted memory** (${c.gpuMemoryGiB} GiB per GPU${c.memory ? (c.memoryModelFitted ? '; model fitted from measured runs' : "; unmeasured: clusters.yaml's estimate") : '; no memory model for this cluster'})`,
      '',
    );
    lines.push('| GPU | services | predicted GiB | share |', '|---:|---|---:|---:|');
    for (const { gpu, services } of c.gpuMap) {
      const m = memory.get(gpu);
      const share = m
        ? `${Math.round(m.fraction * 100)}%${m.level === 'error' ? ' ❌' : m.level === 'warning' ? ' ⚠️' : ''}`
        : '—';
      lines.push(`| ${gpu} | ${services.join(', ')} | ${m ? m.totalGiB.toFixed(1) : '—'} | ${share} |`);
    }
    lines.push('');
    lines.push(`**Changes from ${c.diffFrom}**`, '');
    if (c.diff.length === 0) lines.push('None: same topology.', '');
    else {
      lines.push('| key | before | after |', '|---|---|---|');
      for (const d of c.diff) lines.push(`| \`${d.key}\` | ${fmt(d.from)} | ${fmt(d.to)} |`);
      lines.push('');
    }
  }
  return `${lines.join('\n')}\n`;
}
