// One way to find and prepare a pull request's candidate, for the submit action, the monitor and
// the record action: candidate files are `<topologies-dir>/<experiment>/<name>.yaml|.yml` among the
// changed files; the candidate text comes from the pull request's head (as data, through the API);
// experiment.yaml, presets, clusters.yaml and the record come from the DEFAULT BRANCH checkout (a
// pull request editing its experiment.yaml changes nothing that reaches sbatch). A candidate with
// any validation error is never rendered.
import { posix } from 'node:path';
import { RUN_NAME_OVERRIDE } from '../catalog/alpasim.js';
import type { Octokit } from '../github/client.js';
import { changedFiles, githubFileSource } from '../github/contents.js';
import { codeBlock } from '../github/user-text.js';
import { checkClusters, checkExperiment } from '../topology/files.js';
import { formatIssue } from '../topology/issues.js';
import { shellLine } from '../topology/render.js';
import { requestComment, runNameFor } from '../topology/run-name.js';
import type { Cluster } from '../types/generated/clusters.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { RenderedSubmission } from './submit.js';
import { type FileSource, fileKind, fileSystemSource, isYamlFile, renderCandidateFile } from './validate.js';

export interface CandidateSource {
  /** Default-branch checkout (trusted: experiment.yaml, presets, clusters.yaml, records). */
  workspace: string;
  clustersFile: string;
  /** Folder of the topology files (the `topologies-dir` input), default `topologies`. */
  topologiesDir: string;
  /** Presets searched before the repository's and the shipped ones (the `presets-dir` input), absolute. */
  presetsDir?: string;
}

/** The candidate files among a pull request's changed paths (one rule for every action and the CLI). */
export function candidateFilesOf(paths: readonly string[], topologiesDir = 'topologies'): string[] {
  const prefix = `${posix.normalize(topologiesDir).replace(/\/+$/, '')}/`;
  return paths
    .filter((p) => p.startsWith(prefix) && !p.includes('..') && posix.normalize(p) === p)
    .filter((p) => p.slice(prefix.length).split('/').length === 2)
    .filter((p) => isYamlFile(p) && fileKind(p) === 'candidate' && !p.includes('/presets/'))
    .sort();
}

/** Candidates from the head; everything else (experiment.yaml included) from the default branch. */
export function headCandidatesOverDefaultBranch(head: FileSource, defaultBranch: FileSource): FileSource {
  return {
    read: (path) => (fileKind(path) === 'candidate' ? head.read(path) : defaultBranch.read(path)),
    list: (dir) => head.list(dir),
  };
}

export interface PreparedCandidate {
  path: string;
  experimentId: string;
  candidate: string;
  clusterName: string;
  cluster: Cluster;
  experiment: Experiment;
  /** hash8 of the expanded topology. */
  topologyHash: string;
  /** Rendered with the candidate's base job name (no run label yet). */
  submission: RenderedSubmission;
}

export type Prepared =
  | { ok: true; candidate: PreparedCandidate }
  /** `errors`: one `file:line:column: …` line per validation error (empty when not a validation refusal). */
  | { ok: false; message: string; errors: string[] };

/** Validates and renders `path` at `ref` against the default branch. */
export async function prepareCandidateAt(
  octokit: Octokit,
  repo: { owner: string; repo: string },
  ref: string,
  path: string,
  source: CandidateSource,
  newFiles: readonly string[] = [path],
): Promise<Prepared> {
  const defaultBranch = fileSystemSource(source.workspace);
  const outcome = await renderCandidateFile(path, {
    files: headCandidatesOverDefaultBranch(githubFileSource(octokit, { ...repo, ref }), defaultBranch),
    config: defaultBranch,
    clustersFile: source.clustersFile,
    newFiles,
    presets: source.presetsDir ? { overrideDir: source.presetsDir } : {},
  });
  return preparedOf(
    path,
    outcome,
    `\`${path}\` does not pass validation against the default branch's experiment and rules, so it was not submitted:`,
  );
}

/** A rendered candidate file as a Prepared one, or its validation errors after `refusal`. */
function preparedOf(
  path: string,
  outcome: Awaited<ReturnType<typeof renderCandidateFile>>,
  refusal: string,
): Prepared {
  const d = outcome.report.candidate;
  if (!outcome.submission || !d) {
    const errors = outcome.report.errors.slice(0, 10).map((i) => formatIssue(i));
    if (errors.length === 0) errors.push(`${path}: not a candidate file (${outcome.report.kind})`);
    return { ok: false, errors, message: [refusal, '', codeBlock(errors.join('\n'))].join('\n') };
  }
  return {
    ok: true,
    candidate: {
      path,
      experimentId: d.experimentId,
      candidate: d.name,
      clusterName: d.cluster,
      cluster: d.clusterConfig,
      experiment: d.experimentConfig,
      topologyHash: d.jobName.slice(-8),
      submission: outcome.submission,
    },
  };
}

/**
 * The round's reference job (src/lifecycle/reference.ts): the best's file read from the DEFAULT
 * BRANCH (never a pull request's copy of it), validated and rendered like a candidate, and refused
 * unless it still expands to the topology its Request was pinned to (`topologyHash`).
 */
export async function prepareReferenceAt(
  source: CandidateSource,
  path: string,
  topologyHash: string,
): Promise<Prepared> {
  const defaultBranch = fileSystemSource(source.workspace);
  const outcome = await renderCandidateFile(path, {
    files: defaultBranch,
    config: defaultBranch,
    clustersFile: source.clustersFile,
    newFiles: [],
    presets: source.presetsDir ? { overrideDir: source.presetsDir } : {},
  });
  const refusal = `the reference \`${path}\` does not pass validation on the default branch:`;
  const prepared = preparedOf(path, outcome, refusal);
  if (!prepared.ok || prepared.candidate.topologyHash === topologyHash) return prepared;
  const error = `${path}: its topology on the default branch (${prepared.candidate.topologyHash}) is not the one the reference was asked for (${topologyHash})`;
  return {
    ok: false,
    errors: [error],
    message: `the reference \`${path}\` changed on the default branch since it was asked for`,
  };
}

/** The candidate files a pull request adds or changes (each its own Request), and all its changed paths. */
export async function pullRequestCandidates(
  octokit: Octokit,
  pull: { owner: string; repo: string; number: number },
  source: Pick<CandidateSource, 'topologiesDir'>,
): Promise<{ files: string[]; changed: string[] }> {
  const changed = (
    await changedFiles(octokit, { owner: pull.owner, repo: pull.repo, pull_number: pull.number })
  ).map((f) => f.path);
  return { files: candidateFilesOf(changed, source.topologiesDir), changed };
}

/** A candidate file's name: the candidate (validation holds `name` to the file name). */
export function candidateNameOf(path: string): string {
  return posix.basename(path).replace(/\.ya?ml$/, '');
}

/**
 * The submission under the run name of one Request (job name, output file and wizard.run_name),
 * with the Request's identity written into the job (`--comment=topo:<request id>`, its run label):
 * Slurm's own record then says whose run the job is (src/lifecycle/jobs.ts claimOf). Every job the
 * tool starts goes through here (the monitor, /topo submit, topo submit, topo watch, topo demo), so
 * a run name without a label is refused: no job is started that names no Request.
 */
export function withRunName(submission: RenderedSubmission, runName: string): RenderedSubmission {
  const base = submission.jobName;
  const named = [`--job-name=${base}`, `${RUN_NAME_OVERRIDE}=${base}`];
  if (!runName.startsWith(`${base}-`))
    throw new Error(
      `run name ${runName} is not ${base}-<request id>: every job the tool starts names its Request (a label of 8 hex digits, written as --comment=topo:<id>)`,
    );
  const comment = requestComment(runName.slice(base.length + 1));
  const script = submission.argv.findIndex((a, i) => i > 0 && !a.startsWith('-'));
  const argv = submission.argv.flatMap((a, i) => {
    if (a.startsWith('--comment=') && (script < 0 || i < script)) return []; // one identity: the Request's
    if (a === named[0]) return [`--job-name=${runName}`, `--comment=${comment}`];
    if (a === named[1]) return `${RUN_NAME_OVERRIDE}=${runName}`;
    if (a.startsWith('--output=')) return a.split(`/${base}_`).join(`/${runName}_`);
    return a;
  });
  if (!named.every((n) => submission.argv.includes(n)))
    throw new Error(
      `the rendered submission of ${base} does not carry its name in --job-name and ${RUN_NAME_OVERRIDE}`,
    );
  const env = submission.env
    ? Object.fromEntries(Object.entries(submission.env).map(([k, v]) => [k, v?.split(base).join(runName)]))
    : undefined;
  return { ...submission, jobName: runName, argv, shellLine: shellLine(argv), ...(env ? { env } : {}) };
}

/** Convenience for callers that have a Request's label. */
export function submissionForRequest(submission: RenderedSubmission, label: string): RenderedSubmission {
  return withRunName(submission, runNameFor(submission.jobName, label));
}

export type ExperimentOnDefaultBranch =
  | { ok: true; experiment: Experiment; clusterName: string; cluster: Cluster }
  | { ok: false; message: string };

/** The experiment and its cluster as the default branch defines them; a reason when it cannot. */
export async function experimentOnDefaultBranch(
  source: CandidateSource,
  experimentId: string,
): Promise<ExperimentOnDefaultBranch> {
  const fs = fileSystemSource(source.workspace);
  const file = posix.join(source.topologiesDir, experimentId, 'experiment.yaml');
  const text = await fs.read(file);
  if (text === undefined) return { ok: false, message: `\`${file}\` is not on the default branch` };
  const experiment = checkExperiment(text, file).value;
  if (!experiment) return { ok: false, message: `\`${file}\` on the default branch does not validate` };
  const clustersText = await fs.read(source.clustersFile);
  const clusters =
    clustersText === undefined ? undefined : checkClusters(clustersText, source.clustersFile).value;
  const cluster = clusters?.clusters[experiment.cluster];
  if (!cluster)
    return {
      ok: false,
      message: `cluster \`${experiment.cluster}\` is not defined in \`${source.clustersFile}\` on the default branch`,
    };
  return { ok: true, experiment, clusterName: experiment.cluster, cluster };
}
