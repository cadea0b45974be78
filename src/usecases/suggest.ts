// `topo suggest`: reads the experiment (experiment.yaml, clusters.yaml, the base preset, the
// record and the candidate files), asks the pure suggester for the next candidates, checks each
// with the validator (using the fitted memory model), writes them as candidate files and, on
// request, opens one pull request per proposal. All I/O is injected.
import { posix } from 'node:path';
import { Document, isSeq, parse, stringify, visit } from 'yaml';
import type { Octokit } from '../github/client.js';
import { githubFileSource } from '../github/contents.js';
import { topologyChange } from '../record/change.js';
import { figureOf } from '../record/figure.js';
import { recordPaths } from '../record/model.js';
import { parseRecord } from '../record/validate.js';
import { triedFromRecord } from '../suggest/record.js';
import { predictionSentence, suggest } from '../suggest/suggest.js';
import type { Proposal, SuggestInput, SuggestResult } from '../suggest/types.js';
import { expandPreset, topologyDiff, topologyHash } from '../topology/expand.js';
import { checkCandidate, checkClusters, checkExperiment, checkPreset } from '../topology/files.js';
import { type PresetOptions, presetNotFound, readPreset } from '../topology/presets.js';
import { experimentSettings } from '../topology/settings.js';
import type { Candidate } from '../types/generated/candidate.js';
import type { Cluster, MemoryModel } from '../types/generated/clusters.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { Topology } from '../types/generated/topology.js';
import { type FileSource, validateFiles } from './validate.js';

export class SuggestError extends Error {}

export interface SuggestOptions {
  experimentId: string;
  /** The working tree (or a commit): topologies/, experiments/. */
  files: FileSource;
  /** Default topologies/clusters.yaml. */
  clustersFile?: string;
  count?: number;
  /**
   * A person asked for `count` (`topo suggest --count`): the moves the model calls dominated fill
   * the round up to it (src/suggest/suggest.ts SuggestOptions.fillCount).
   */
  fillCount?: boolean;
  /** Write proposals even when the suggester advises to stop. */
  force?: boolean;
  /** Candidates that exist elsewhere (open pull requests): tried, never proposed again. */
  elsewhere?: ReadonlyMap<string, Candidate>;
  /** Where base presets are found besides the repository (src/topology/presets.ts). */
  presets?: Omit<PresetOptions, 'topologiesDir'>;
}

export interface WrittenProposal extends Proposal {
  path: string;
  text: string;
}

export interface SuggestOutcome {
  result: SuggestResult;
  /** Proposals that passed validation, with their candidate file. */
  proposals: WrittenProposal[];
  experiment: Experiment;
  experimentDir: string;
  /** Why a proposal was dropped by the validator. */
  invalid: { name: string; errors: string[] }[];
}

const EXPERIMENT_ID = /^[a-z0-9][a-z0-9_.-]{0,79}$/;

async function mustRead(files: FileSource, path: string, what: string): Promise<string> {
  const text = await files.read(path);
  if (text === undefined) throw new SuggestError(`${path} not found: ${what}`);
  return text;
}

/** The candidate's block: only the keys that differ from the base preset (what the file holds). */
export function blockAgainstBase(base: Topology, expanded: Topology): Topology {
  const block: Record<string, unknown> = {};
  for (const change of topologyDiff(base, expanded)) {
    if (change.to === undefined) continue;
    const path = change.key.split('.');
    let node = block;
    for (const key of path.slice(0, -1)) {
      node[key] ??= {};
      node = node[key] as Record<string, unknown>;
    }
    node[path[path.length - 1] as string] = change.to;
  }
  return block as Topology;
}

/** The candidate file's text: a header with the change, then the schema's fields. */
export function candidateFileText(
  proposal: Proposal,
  base: Topology,
  parentTopology: Topology | undefined,
): string {
  const candidate: Candidate = {
    ...proposal.candidate,
    topology: blockAgainstBase(base, proposal.candidate.topology),
  };
  const changes = Object.entries(topologyChange(parentTopology ?? base, proposal.candidate.topology))
    .map(([k, v]) => `#   ${k}: ${v}`)
    .join('\n');
  const header = `# Proposed by \`topo suggest\` (${proposal.kind}${proposal.service ? `, ${proposal.service}` : ''}).\n# Against ${proposal.candidate.parent ?? 'the base preset'}:\n${changes}\n`;
  // GPU lists in flow style ([0, 1, 2, 3]) as AlpaSim's presets write them.
  const doc = new Document(candidate);
  visit(doc, {
    Seq(_, node) {
      if (isSeq(node)) node.flow = true;
    },
  });
  return `${header}${doc.toString({ lineWidth: 0 })}`;
}

/** An in-memory layer over a FileSource: validation sees the proposals as if written. */
function overlay(files: FileSource, extra: ReadonlyMap<string, string>): FileSource {
  return {
    async read(path) {
      return extra.get(posix.normalize(path)) ?? files.read(path);
    },
    async list(dir) {
      const own = (await files.list(dir)) ?? [];
      const added = [...extra.keys()]
        .filter((p) => posix.dirname(p) === posix.normalize(dir))
        .map((p) => posix.basename(p));
      const all = [...new Set([...own, ...added])].sort();
      return all.length ? all : undefined;
    },
  };
}

export async function runSuggest(options: SuggestOptions): Promise<SuggestOutcome> {
  const setup = await readSetup(options);
  const { experiment, experimentDir, base } = setup;
  const recordFile = recordPaths(options.experimentId).json;
  const recordText = await options.files.read(recordFile);
  const record = recordText === undefined ? undefined : parseRecord(recordText, recordFile);
  const candidateFiles = await readCandidateFiles(options.files, experimentDir, options.elsewhere);
  const input = suggestInput(options, setup, record, candidateFiles);

  // A proposal the validator refuses is excluded and the suggester asked again, a bounded number of times.
  const exclude = new Set<string>();
  const invalid: SuggestOutcome['invalid'] = [];
  for (let attempt = 0; attempt < 8; attempt++) {
    const result = suggest(input, { hash: topologyHash, exclude, fillCount: !!options.fillCount });
    if (result.stop.stop && !options.force)
      return { result, proposals: [], experiment, experimentDir, invalid };
    const byName = new Map(input.tried.map((t) => [t.name, t]));
    const written: WrittenProposal[] = result.proposals.map((p) => {
      const path = `${experimentDir}/${p.candidate.name}.yaml`;
      return { ...p, path, text: candidateFileText(p, base, byName.get(p.candidate.parent ?? '')?.topology) };
    });
    const failed = await refusedProposals(options, setup, result, written);
    if (failed.length === 0) return { result, proposals: written, experiment, experimentDir, invalid };
    for (const { proposal, problems } of failed) {
      exclude.add(proposal.hash);
      invalid.push({ name: proposal.candidate.name, errors: problems });
    }
  }
  const result = suggest(input, { hash: topologyHash, exclude });
  return { result: { ...result, proposals: [] }, proposals: [], experiment, experimentDir, invalid };
}

/** What the suggester reads besides the record: the experiment, its cluster and its expanded base. */
interface SuggestSetup {
  experiment: Experiment;
  experimentDir: string;
  clustersFile: string;
  cluster: Cluster;
  base: Topology;
}

async function readSetup(options: SuggestOptions): Promise<SuggestSetup> {
  const { files, experimentId } = options;
  if (!EXPERIMENT_ID.test(experimentId)) {
    throw new SuggestError(
      `experiment "${experimentId}" is not a valid experiment id (lowercase letters, digits, . _ -)`,
    );
  }
  const experimentDir = `topologies/${experimentId}`;
  const experimentFile = `${experimentDir}/experiment.yaml`;
  const experimentChecked = checkExperiment(
    await mustRead(files, experimentFile, `no experiment ${experimentId} (create it with \`topo init\`)`),
    experimentFile,
  );
  const experiment = experimentChecked.value;
  if (!experiment) {
    const first = experimentChecked.issues[0];
    throw new SuggestError(
      `${experimentFile}:${first?.line}: ${first?.message} (run \`topo validate ${experimentFile}\`)`,
    );
  }
  const clustersFile = options.clustersFile ?? 'topologies/clusters.yaml';
  const clustersChecked = checkClusters(
    await mustRead(files, clustersFile, 'the cluster definitions'),
    clustersFile,
  );
  const cluster: Cluster | undefined = clustersChecked.value?.clusters[experiment.cluster];
  if (!cluster) {
    throw new SuggestError(
      clustersChecked.value
        ? `cluster \`${experiment.cluster}\` of ${experimentFile} is not defined in ${clustersFile}`
        : `${clustersFile}:${clustersChecked.issues[0]?.line}: ${clustersChecked.issues[0]?.message}`,
    );
  }
  const base = await readBase(files, experiment, experimentFile, options.presets);
  return { experiment, experimentDir, clustersFile, cluster, base };
}

async function readBase(
  files: FileSource,
  experiment: Experiment,
  experimentFile: string,
  presets: SuggestOptions['presets'],
): Promise<Topology> {
  const found = await readPreset(experiment.base_topology, files, presets);
  if (!found)
    throw new SuggestError(
      `base topology preset of ${experimentFile}: ${presetNotFound(experiment.base_topology, presets)}`,
    );
  const preset = checkPreset(found.text, found.path);
  if (!preset.value) throw new SuggestError(`${found.path}: ${preset.issues[0]?.message}`);
  return expandPreset(preset.value, experiment);
}

/** The experiment's candidate files by name, then those of open pull requests (tried, never proposed again). */
async function readCandidateFiles(
  files: FileSource,
  experimentDir: string,
  elsewhere: SuggestOptions['elsewhere'],
): Promise<Map<string, Candidate>> {
  const candidateFiles = new Map<string, Candidate>();
  for (const name of (await files.list(experimentDir)) ?? []) {
    if (!/\.ya?ml$/.test(name) || name === 'experiment.yaml' || name === 'experiment.yml') continue;
    const path = `${experimentDir}/${name}`;
    const checked = checkCandidate((await files.read(path)) ?? '', path);
    if (checked.value) candidateFiles.set(name.replace(/\.ya?ml$/, ''), checked.value);
  }
  for (const [name, candidate] of elsewhere ?? [])
    if (!candidateFiles.has(name)) candidateFiles.set(name, candidate);
  return candidateFiles;
}

function suggestInput(
  options: SuggestOptions,
  { experiment, cluster, base }: SuggestSetup,
  record: ReturnType<typeof parseRecord> | undefined,
  candidateFiles: ReadonlyMap<string, Candidate>,
): SuggestInput {
  return {
    experimentId: options.experimentId,
    baseTopology: base,
    cluster: {
      gpusPerNode: experiment.fixed_inputs.slurm?.gpus_per_node ?? cluster.gpus_per_node,
      gpuMemoryGiB: cluster.gpu_memory_gib,
      cpusPerNode: cluster.cpus_per_node,
      ...(cluster.memory_model ? { memoryModel: cluster.memory_model } : {}),
    },
    maxParallel: experimentSettings(experiment).maxParallel,
    ...(options.count !== undefined ? { count: options.count } : {}),
    tried: withFigures(triedFromRecord(record, base, candidateFiles), record),
    currentBest: record?.current_best.topology ?? null,
    ...(experiment.min_improvement !== undefined ? { minImprovement: experiment.min_improvement } : {}),
    previousPredictions: (record?.runs ?? []).flatMap((r) =>
      r.prediction ? [{ name: r.name, predictedSeconds: r.prediction.seconds_per_rollout }] : [],
    ),
  };
}

/**
 * Each recorded run at the figure the dashboard and the record show for it (its decision's,
 * src/record/figure.ts), so a proposal names its parent at that figure, not its verdict's own projection.
 */
function withFigures(
  tried: ReturnType<typeof triedFromRecord>,
  record: ReturnType<typeof parseRecord> | undefined,
): ReturnType<typeof triedFromRecord> {
  const runs = record?.runs ?? [];
  return tried.map((t) => {
    const run = runs.find((r) => r.name === t.name);
    const figure = run && run.status !== 'failed' ? figureOf(run)?.value : undefined;
    return figure !== undefined ? { ...t, figure } : t;
  });
}

/**
 * The proposals the validator refuses, seeing the fitted memory model exactly as `topo validate` will
 * once it is in clusters.yaml: any error, and any warning the parent does not already carry (suggest
 * never proposes what `topo validate` would warn about).
 */
async function refusedProposals(
  options: SuggestOptions,
  { experiment, experimentDir, clustersFile }: SuggestSetup,
  result: SuggestResult,
  written: readonly WrittenProposal[],
): Promise<Array<{ proposal: WrittenProposal; problems: string[] }>> {
  const { files } = options;
  const extra = new Map(written.map((w) => [w.path, w.text]));
  const clustersWithModel = withMemoryModel(
    (await files.read(clustersFile)) ?? '',
    experiment.cluster,
    result.memory.source === 'fitted' ? result.memory.model : undefined,
  );
  extra.set(posix.normalize(clustersFile), clustersWithModel);
  const parentFile = `${experimentDir}/${result.parent}.yaml`;
  const withParent = result.parent && (await files.read(parentFile)) !== undefined;
  const report = await validateFiles([...written.map((w) => w.path), ...(withParent ? [parentFile] : [])], {
    files: overlay(files, extra),
    clustersFile,
    newFiles: written.map((w) => w.path),
    ...(options.presets ? { presets: options.presets } : {}),
  });
  const inherited = new Set(
    report.files.filter((f) => f.path === parentFile).flatMap((f) => f.warnings.map((w) => w.rule)),
  );
  return report.files.flatMap((f) => {
    const proposal = f.path === parentFile ? undefined : written.find((w) => w.path === f.path);
    const problems = [...f.errors, ...f.warnings.filter((w) => !inherited.has(w.rule))];
    if (!proposal || problems.length === 0) return [];
    return [{ proposal, problems: problems.map((e) => `${e.severity} ${e.rule}: ${e.message}`) }];
  });
}

/** clusters.yaml text with the cluster's memory_model replaced by the fitted one (comments kept where yaml can). */
export function withMemoryModel(text: string, clusterName: string, model: MemoryModel | undefined): string {
  if (!model) return text;
  const doc = parse(text) as { clusters?: Record<string, Record<string, unknown>> };
  const cluster = doc?.clusters?.[clusterName];
  if (!cluster) return text;
  cluster.memory_model = model;
  return stringify(doc, { lineWidth: 0 });
}

// ------------------------------------------------------------------------------- pull requests

export interface OpenedPull {
  name: string;
  branch: string;
  number: number;
  url: string;
  /** False when the branch and pull request already existed (a re-run). */
  created: boolean;
}

export interface PullTarget {
  owner: string;
  repo: string;
  /** Default: the repository's default branch. */
  base?: string;
}

/** The pull request body: hypothesis, expected effect, the change, predicted memory. */
export function pullBody(p: WrittenProposal, result: SuggestResult): string {
  const memory = p.predictedMemory
    .map((m) => `| ${m.gpu} | ${m.gib.toFixed(1)} | ${Math.round(m.fraction * 100)}% |`)
    .join('\n');
  return [
    `Proposed by \`topo suggest\` from the evidence of **${p.candidate.parent}**.`,
    '',
    `**Hypothesis.** ${p.candidate.hypothesis}`,
    '',
    `**Expected effect.** ${p.candidate.expected_effect}`,
    '',
    ...(p.prediction ? [`**Predicted.** ${predictionSentence(p.prediction)}.`, ''] : []),
    `**Change.** ${p.change}`,
    '',
    `Predicted GPU memory (${result.memory.source} memory model, ${result.memory.notes.join('; ')}):`,
    '',
    '| GPU | GiB | of the GPU |',
    '|---|---|---|',
    memory,
    '',
    'Comment `/topo submit` to run it.',
  ].join('\n');
}

/** Candidate files of the experiment in open pull requests (read as data through the API). */
export async function candidatesInOpenPulls(
  octokit: Octokit,
  target: PullTarget,
  experimentId: string,
): Promise<Map<string, Candidate>> {
  const repo = { owner: target.owner, repo: target.repo };
  const dir = `topologies/${experimentId}/`;
  const out = new Map<string, Candidate>();
  const pulls = await octokit.paginate(octokit.rest.pulls.list, { ...repo, state: 'open', per_page: 100 });
  for (const pull of pulls) {
    const files = await octokit.paginate(octokit.rest.pulls.listFiles, {
      ...repo,
      pull_number: pull.number,
      per_page: 100,
    });
    for (const file of files) {
      if (file.status === 'removed' || !file.filename.startsWith(dir) || !/\.ya?ml$/.test(file.filename))
        continue;
      if (/\/experiment\.ya?ml$/.test(file.filename)) continue;
      const source = githubFileSource(octokit, { ...repo, ref: pull.head.sha });
      const checked = checkCandidate((await source.read(file.filename)) ?? '', file.filename);
      if (checked.value) out.set(checked.value.name, checked.value);
    }
  }
  return out;
}

/** One branch, one commit (the candidate file) and one pull request per proposal; idempotent by branch name. */
export async function openPullRequests(
  octokit: Octokit,
  target: PullTarget,
  outcome: Pick<SuggestOutcome, 'proposals' | 'result' | 'experiment'>,
): Promise<OpenedPull[]> {
  const repo = { owner: target.owner, repo: target.repo };
  const baseBranch = target.base ?? (await octokit.rest.repos.get(repo)).data.default_branch;
  const baseSha = (await octokit.rest.git.getRef({ ...repo, ref: `heads/${baseBranch}` })).data.object.sha;
  const baseTree = (await octokit.rest.git.getCommit({ ...repo, commit_sha: baseSha })).data.tree.sha;
  const opened: OpenedPull[] = [];
  for (const p of outcome.proposals) {
    const branch = `topo/${outcome.experiment.experiment_id}/${p.candidate.name}`;
    const existing = await octokit.rest.pulls.list({
      ...repo,
      state: 'open',
      head: `${target.owner}:${branch}`,
    });
    const found = existing.data[0];
    if (found) {
      opened.push({
        name: p.candidate.name,
        branch,
        number: found.number,
        url: found.html_url,
        created: false,
      });
      continue;
    }
    await pushProposal(octokit, repo, { branch, baseSha, baseTree }, p);
    const pull = await octokit.rest.pulls.create({
      ...repo,
      title: `${outcome.experiment.experiment_id}: ${p.candidate.name} (${p.kind}${p.service ? ` ${p.service}` : ''})`,
      head: branch,
      base: baseBranch,
      body: pullBody(p, outcome.result),
    });
    opened.push({
      name: p.candidate.name,
      branch,
      number: pull.data.number,
      url: pull.data.html_url,
      created: true,
    });
  }
  return opened;
}

/** The proposal's candidate file as one commit on the base, at the branch (made, or moved there). */
async function pushProposal(
  octokit: Octokit,
  repo: { owner: string; repo: string },
  at: { branch: string; baseSha: string; baseTree: string },
  p: WrittenProposal,
): Promise<void> {
  const blob = await octokit.rest.git.createBlob({ ...repo, content: p.text, encoding: 'utf-8' });
  const tree = await octokit.rest.git.createTree({
    ...repo,
    base_tree: at.baseTree,
    tree: [{ path: p.path, mode: '100644', type: 'blob', sha: blob.data.sha }],
  });
  const commit = await octokit.rest.git.createCommit({
    ...repo,
    message: `${p.candidate.name}: ${p.change}`.slice(0, 200),
    tree: tree.data.sha,
    parents: [at.baseSha],
  });
  try {
    await octokit.rest.git.createRef({ ...repo, ref: `refs/heads/${at.branch}`, sha: commit.data.sha });
  } catch (error) {
    // The branch survives from an earlier run whose pull request was closed: point it at the new commit.
    if ((error as { status?: number }).status !== 422) throw error;
    await octokit.rest.git.updateRef({
      ...repo,
      ref: `heads/${at.branch}`,
      sha: commit.data.sha,
      force: true,
    });
  }
}
