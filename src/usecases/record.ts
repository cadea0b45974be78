// On pull_request closed: turn the pull request into the candidate's outcome, cancel any job still
// live for it, and commit experiments/<id>.json + .md to the default branch by compare-and-swap.
// Everything is re-read from GitHub (and Prometheus/Slurm when given), so a re-run is harmless.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import type { Octokit } from '../github/client.js';
import { type CasCommitResult, commitWithCompareAndSwap, readFiles } from '../github/commits.js';
import { upsertStickyComment } from '../github/sticky-comment.js';
import { type RunJob, runJob } from '../judge/job.js';
import { defaultStepSeconds, judgeRead, readRuns } from '../judge/read.js';
import { jobForRun } from '../lifecycle/jobs.js';
import { isReferenceRequest, latestRequests, type Outcome, type RunRequest } from '../lifecycle/model.js';
import { apply, type OutcomeKind, type RecordOutcome } from '../record/apply.js';
import { topologyChange } from '../record/change.js';
import { initialRecordFiles, recordFiles } from '../record/files.js';
import { learningsFromBody } from '../record/learnings.js';
import { createRecord, type ExperimentRecord, type RecordRun, recordPaths } from '../record/model.js';
import { checkObservation, parseRecord } from '../record/validate.js';
import { parseObservationBlock } from '../report/observation-block.js';
import type { SlurmClient, SlurmJob } from '../slurm/types.js';
import type { PrometheusClient } from '../telemetry/prometheus.js';
import { runSelector } from '../telemetry/queries.js';
import { expandCandidate, expandPreset, hash8 } from '../topology/expand.js';
import { checkCandidate, checkExperiment, checkPreset } from '../topology/files.js';
import { readPreset } from '../topology/presets.js';
import type { Candidate } from '../types/generated/candidate.js';
import type { Cluster } from '../types/generated/clusters.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { CandidateObservation } from '../types/generated/metrics.js';
import type { SkillReflection } from '../types/generated/record.js';
import type { Topology } from '../types/generated/topology.js';
import { type Closed, ClosingOutageError, endRequestsWithPull } from './close.js';
import { readMonitorComment } from './monitor-comment.js';
import { candidateFilesOf } from './prepare.js';
import { type RecordedReference, recordReferenceRuns } from './record-reference.js';

/** The fields of a pull request (webhook payload or REST) this use case reads. */
export interface ClosedPullRequest {
  number: number;
  merged: boolean | null;
  body: string | null;
  html_url: string;
  closed_at: string | null;
  merge_commit_sha: string | null;
  user: { login: string } | null;
  state: string;
  head: { sha: string; repo: { full_name: string } | null };
  base: { repo: { full_name: string } };
}

export interface RecordDeps {
  octokit: Octokit;
  owner: string;
  repo: string;
  defaultBranch: string;
  botLogin: string;
  /** Queries Prometheus again for a candidate whose comment carries no observation (observeAgain). */
  observe?: (
    runName: string,
    experiment: Experiment,
    topology?: Topology,
    /** The run's Slurm job when Slurm still knows it: judged from its start, as of its end when it ended. */
    job?: RunJob,
  ) => Promise<CandidateObservation | undefined>;
  /**
   * The Slurm client of the experiment's cluster, when this runner can reach it: live jobs of the
   * candidate are cancelled and the measured run's job id and run directory are recorded.
   */
  slurmFor?: (experiment: Experiment) => Promise<SlurmClient | undefined>;
  /** The experiment's cluster definition (trusted clusters.yaml), for a record created on first close. */
  clusterOf?: (experiment: Experiment) => Cluster | undefined;
  log?: (line: string) => void;
  /**
   * The pull request's commands recorded at close (`/topo reject`, `/topo learn` from people the router
   * accepts them from): src/commands/recorded.ts `recordedAtClose`.
   */
  closeCommands: (pull: ClosedPullRequest) => Promise<CommentFacts>;
  /** Folder of the topology files (the `topologies-dir` input), default `topologies`. */
  topologiesDir?: string;
  /** Compare-and-swap tuning (tests use small delays). */
  maxAttempts?: number;
  backoffMs?: (attempt: number) => number;
}

export interface RecordedCandidate {
  experimentId: string;
  candidate: string;
  kind: OutcomeKind;
  runName: string | null;
  cancelledJobs: string[];
  telemetryGaps: string[];
  commit: CasCommitResult;
}

export interface RecordResult {
  recorded: RecordedCandidate[];
  /** Candidate files the record was not changed for (never ran here, or an entry of another pull request). */
  notRecorded: NotRecorded[];
  /** The Requests this close ended (Outcome `closed`) and every job it cancelled. */
  closed: { requests: string[]; cancelledJobs: string[] };
  /** Why nothing was recorded (no candidate file in the pull request). */
  skipped?: string;
  /** The reference jobs its rounds ran, recorded with their GPU-minutes (src/usecases/record-reference.ts). */
  references?: RecordedReference[];
}

/**
 * `<topologies-dir>/<folder>/<candidate>.yaml|.yml` (not experiment.yaml, presets or schemas): the
 * one rule of src/usecases/prepare.ts candidateFilesOf.
 */
export function candidateFile(
  path: string,
  topologiesDir = 'topologies',
): { folder: string; candidate: string } | undefined {
  if (candidateFilesOf([path], topologiesDir).length !== 1) return undefined;
  const [folder, file] = path.split('/').slice(-2) as [string, string];
  const m = /^([a-z0-9][a-z0-9-]{0,39})\.ya?ml$/.exec(file);
  if (!m || folder === 'presets' || folder === 'schema') return undefined;
  return { folder, candidate: m[1] as string };
}

/** What the commands recorded at close say (src/commands/recorded.ts reads them from the comments). */
export interface CommentFacts {
  rejectReason: string | null;
  learnings: SkillReflection[];
}

async function readText(
  deps: Pick<RecordDeps, 'octokit' | 'owner' | 'repo'>,
  path: string,
  ref: string,
): Promise<string | null> {
  return (
    (await readFiles(deps.octokit, { owner: deps.owner, repo: deps.repo }, [path], ref)).get(path) ?? null
  );
}

function issuesText(issues: { line?: number; keyPath?: string; message: string }[]): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.line ? `line ${i.line}: ` : ''}${i.keyPath ? `${i.keyPath}: ` : ''}${i.message}`)
    .join('; ');
}

export async function loadExperiment(
  deps: Pick<RecordDeps, 'octokit' | 'owner' | 'repo' | 'defaultBranch' | 'topologiesDir'>,
  folder: string,
  ref: string,
): Promise<Experiment> {
  // The default branch's experiment is the trusted one; a pull request that creates the experiment
  // (not merged yet) is the only case read from its head.
  const path = `${deps.topologiesDir ?? 'topologies'}/${folder}/experiment.yaml`;
  const text = (await readText(deps, path, deps.defaultBranch)) ?? (await readText(deps, path, ref));
  if (text === null)
    throw new Error(`${path} does not exist on the pull request nor on ${deps.defaultBranch}`);
  const checked = checkExperiment(text, path);
  if (!checked.value) throw new Error(`${path} is not a valid experiment: ${issuesText(checked.issues)}`);
  return checked.value;
}

async function loadBase(
  deps: RecordDeps,
  experiment: Experiment,
  ref: string,
): Promise<Topology | undefined> {
  // The one preset rule (src/topology/presets.ts): the repository's own copy, else the shipped one.
  const found = await readPreset(
    experiment.base_topology,
    {
      read: async (path) =>
        (await readText(deps, path, deps.defaultBranch)) ?? (await readText(deps, path, ref)) ?? undefined,
    },
    { topologiesDir: deps.topologiesDir ?? 'topologies' },
  );
  const checked = found ? checkPreset(found.text, found.path) : undefined;
  return checked?.value ? expandPreset(checked.value, experiment) : undefined;
}

async function loadCandidate(
  deps: RecordDeps,
  path: string,
  ref: string,
): Promise<{ candidate?: Candidate; problem?: string }> {
  const text = await readText(deps, path, ref);
  if (text === null) return { problem: `${path} is missing at ${ref}` };
  const checked = checkCandidate(text, path);
  return checked.value
    ? { candidate: checked.value }
    : { problem: `${path} is not valid: ${issuesText(checked.issues)}` };
}

/** The monitor's observation of `candidate` from the candidate's own sticky comment, schema-checked. */
async function readObservation(
  deps: RecordDeps,
  pull: ClosedPullRequest,
  candidate: string,
): Promise<{ observation?: CandidateObservation; gap?: string }> {
  const body = await readMonitorComment(
    deps.octokit,
    { owner: deps.owner, repo: deps.repo, issue_number: pull.number, botLogin: deps.botLogin },
    candidate,
  );
  if (body === undefined) return { gap: `no monitor comment for ${candidate} on the pull request` };
  const block = parseObservationBlock(body);
  if (!block) return { gap: 'the monitor comment carries no readable observation block' };
  const checked = checkObservation(block);
  if (!checked.observation)
    return {
      gap: `the monitor comment's observation block does not match metrics.schema.json: ${checked.problems.join('; ')}`,
    };
  return { observation: checked.observation };
}

/** Prometheus or Slurm could not be reached: nothing is recorded; the record is written on a re-run. */
export class RecordOutageError extends Error {
  override name = 'RecordOutageError';
}

/** A run that failed is recorded failed, merged or not: merging does not make a failed run a result. */
export function outcomeKind(
  merged: boolean,
  observation: CandidateObservation | undefined,
  lifecycle: Outcome | undefined,
): OutcomeKind {
  if (observation?.failure || observation?.verdict.state === 'unhealthy' || lifecycle?.kind === 'failed')
    return 'failed';
  if (merged) return 'accepted';
  return 'rejected';
}

/** A candidate file of the pull request: `<topologies-dir>/<folder>/<candidate>.yaml`. */
interface CandidateFile {
  file: string;
  folder: string;
  candidate: string;
}

/** What the record needs of a candidate's topology: the expanded topology, its hash, the change from its parent. */
interface Described {
  candidate?: Candidate;
  topology?: Topology;
  hash: string | null;
  change?: Record<string, string>;
  gaps: string[];
}

async function describeCandidate(
  deps: RecordDeps,
  c: CandidateFile,
  experiment: Experiment,
  ref: string,
): Promise<Described> {
  const gaps: string[] = [];
  const { candidate, problem } = await loadCandidate(deps, c.file, ref);
  if (problem) gaps.push(`candidate file unreadable: ${problem}`);
  // Full topologies: the base preset merged with the candidate's block (and with its parent's, for the change).
  const base = await loadBase(deps, experiment, ref);
  if (!base) gaps.push(`base preset topologies/presets/${experiment.base_topology}.yaml not found`);
  if (!candidate || !base) return { candidate, hash: null, gaps };
  const topology = expandCandidate(base, candidate.topology);
  let parentExpanded: Topology = base;
  if (candidate.parent) {
    const parentFile = `${deps.topologiesDir ?? 'topologies'}/${c.folder}/${candidate.parent}.yaml`;
    const parent =
      (await loadCandidate(deps, parentFile, deps.defaultBranch)).candidate ??
      (await loadCandidate(deps, parentFile, ref)).candidate;
    if (parent) parentExpanded = expandCandidate(base, parent.topology);
    else
      gaps.push(`parent ${candidate.parent} not found (${parentFile}); change shown against the base preset`);
  }
  return {
    candidate,
    topology,
    hash: hash8(topology),
    change: topologyChange(parentExpanded, topology),
    gaps,
  };
}

/**
 * The observation of the Request's run: the monitor's block when it is of that very run (the run
 * name names the experiment, the candidate and the submission), else a fresh Prometheus query
 * (as of the job's end when it ended), else a recorded gap.
 */
async function observationOf(
  deps: RecordDeps,
  pull: ClosedPullRequest,
  experiment: Experiment,
  request: RunRequest,
  described: Described,
  job: SlurmJob | undefined,
  gaps: string[],
): Promise<CandidateObservation | undefined> {
  const read = await readObservation(deps, pull, request.candidate);
  let { observation, gap } = read;
  if (observation && observation.run_name !== request.runName) {
    gap = `the monitor comment shows run ${observation.run_name}, not this candidate's run ${request.runName}`;
    observation = undefined;
  }
  if (observation) return observation;
  if (deps.observe) {
    try {
      observation = await deps.observe(request.runName, experiment, described.topology, job && runJob(job));
    } catch (error) {
      throw new RecordOutageError(
        `Prometheus unreachable while recording (${gap}): ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  if (!observation)
    gaps.push(
      `metrics unavailable: ${gap ?? 'no observation'}${deps.observe ? '' : ' (Prometheus was not queried)'}`,
    );
  return observation;
}

/** What the close did to the Request, for the record (a run cut short, or one that never ran). */
function closingNote(closed: Closed, request: RunRequest): { gap?: string; reason?: string } {
  const ended = closed.ended.get(request.id);
  if (!ended) return {};
  if (ended.cancelled)
    return {
      gap: `run cut short: Slurm job ${ended.cancelled} was still running when the pull request closed; it was cancelled`,
    };
  const outcome = closed.state.outcomes[request.id];
  if (outcome?.evidence[0]?.endsWith('it never ran'))
    return {
      gap: 'the pull request closed before the run started: it never ran',
      reason: 'closed before its run started: it never ran',
    };
  return {};
}

/**
 * An entry the record holds from ANOTHER pull request (or recorded by hand): never rewritten. An
 * entry `topo init` left pending (no pull request) is filled in.
 */
export function recordedElsewhere(record: ExperimentRecord, name: string, pr: number): RecordRun | undefined {
  const run = record.runs.find((r) => r.name === name);
  if (!run || run.pull_request?.number === pr) return undefined;
  if (run.status === 'pending' && !run.pull_request) return undefined;
  return run;
}

const fromPull = (run: RecordRun) => (run.pull_request ? `#${run.pull_request.number}` : 'an earlier record');

/** A candidate of a closed pull request that ran for a Request: what recording it reads. */
interface RanCandidate {
  pull: ClosedPullRequest;
  c: CandidateFile;
  experiment: Experiment;
  request: RunRequest;
  closed: Closed;
  facts: CommentFacts;
}

async function recordCandidate(
  deps: RecordDeps,
  ran: RanCandidate,
): Promise<RecordedCandidate | NotRecorded> {
  const { pull, c, experiment, request, closed } = ran;
  const log = deps.log ?? (() => {});
  const id = experiment.experiment_id;
  const name = c.candidate;
  const paths = recordPaths(id);
  const outcome = await closedOutcome(deps, ran);
  const { kind } = outcome;
  let elsewhere: RecordRun | undefined;
  const commit = await commitWithCompareAndSwap(deps.octokit, {
    owner: deps.owner,
    repo: deps.repo,
    branch: deps.defaultBranch,
    paths: [paths.json, paths.markdown, paths.chart],
    message: `record: ${name} ${kind} in ${id} (#${pull.number})`,
    maxAttempts: deps.maxAttempts,
    backoffMs: deps.backoffMs,
    update: (current, attempt) => {
      const text = current.get(paths.json);
      // A corrupt record throws here (naming the file) and nothing is written.
      const record =
        text == null ? createRecord(experiment, deps.clusterOf?.(experiment)) : parseRecord(text, paths.json);
      elsewhere = recordedElsewhere(record, name, pull.number);
      if (elsewhere) return null;
      if (attempt > 1) log(`attempt ${attempt}: re-applied ${name} on the new head`);
      return recordFiles(apply(record, outcome));
    },
  });
  if (elsewhere)
    return {
      experimentId: id,
      candidate: name,
      file: c.file,
      refused: Boolean(pull.merged),
      why: `\`${name}\` is already in the record from ${fromPull(elsewhere)} (${elsewhere.status}); an entry is never rewritten by another pull request, so this pull request's run \`${request.runName}\` is not recorded. A changed topology needs a name of its own: a new file, with \`parent: ${name}\`.`,
    };
  log(
    commit.committed
      ? `recorded ${name} as ${kind} in ${paths.json} (commit ${commit.sha.slice(0, 7)}, attempt ${commit.attempts})`
      : `${paths.json} already records ${name} as ${kind}: nothing to commit`,
  );
  const cancelled = closed.ended.get(request.id)?.cancelled;
  return {
    experimentId: id,
    candidate: name,
    kind,
    runName: outcome.run_name ?? request.runName,
    cancelledJobs: cancelled ? [cancelled] : [],
    telemetryGaps: outcome.telemetry_gaps ?? [],
    commit,
  };
}

/** The record's entry for a candidate of a closed pull request: its run, observation, reason and gaps. */
async function closedOutcome(deps: RecordDeps, ran: RanCandidate): Promise<RecordOutcome> {
  const { pull, c, experiment, request, closed, facts } = ran;
  const described = await describeCandidate(deps, c, experiment, pull.head.sha);
  const gaps = [...described.gaps];
  const lifecycle = closed.state.outcomes[request.id];
  const job =
    jobForRun(closed.jobs.get(experiment.experiment_id) ?? [], request.runName, (j) => j) ?? undefined;
  const observation = await observationOf(deps, pull, experiment, request, described, job, gaps);
  const note = closingNote(closed, request);
  if (note.gap) gaps.push(note.gap);
  const kind = outcomeKind(Boolean(pull.merged), observation, lifecycle);
  const candidate = described.candidate;
  const reason = kind === 'accepted' ? undefined : facts.rejectReason || note.reason;
  return {
    candidate: c.candidate,
    kind,
    at: pull.closed_at,
    parent: candidate ? (candidate.parent ?? null) : undefined,
    run_name: observation?.run_name ?? request.runName,
    job_id: job?.id ?? undefined,
    run_dir: job?.stdoutPath ? posix.dirname(posix.dirname(job.stdoutPath)) : undefined,
    topology: {
      base: `topology=${experiment.base_topology}`,
      hash: described.hash,
      block: candidate?.topology ?? null,
      file: c.file,
    },
    change: described.change,
    hypothesis: candidate?.hypothesis,
    expected_effect: candidate?.expected_effect,
    prediction: candidate?.prediction,
    observation: observation ?? null,
    reason,
    learnings: [...learningsFromBody(pull.body, pull.user?.login ?? null), ...facts.learnings],
    telemetry_gaps: gaps,
    pull_request: {
      number: pull.number,
      url: pull.html_url,
      merge_commit_sha: pull.merged ? pull.merge_commit_sha : null,
    },
  };
}

/**
 * A candidate file the pull request changed without running it here (no Request): never recorded.
 * A merge that changes the file of a candidate the record holds as accepted is refused, saying why.
 */
async function withoutRun(
  deps: RecordDeps,
  pull: ClosedPullRequest,
  c: CandidateFile,
  experiment: Experiment,
): Promise<NotRecorded> {
  const base = { experimentId: experiment.experiment_id, candidate: c.candidate, file: c.file };
  const never = `\`${c.candidate}\` never ran in this pull request (no \`/topo submit\`): the record is not changed for it`;
  if (!pull.merged) return { ...base, refused: false, why: never };
  const paths = recordPaths(experiment.experiment_id);
  const text = await readText(deps, paths.json, deps.defaultBranch);
  const entry =
    text === null ? undefined : parseRecord(text, paths.json).runs.find((r) => r.name === c.candidate);
  if (entry?.status !== 'accepted') return { ...base, refused: false, why: never };
  const measured = entry.topology?.hash ? ` (topology \`${entry.topology.hash}\`)` : '';
  const described = await describeCandidate(deps, c, experiment, pull.merge_commit_sha ?? pull.head.sha);
  const same = described.hash !== null && described.hash === entry.topology?.hash;
  return {
    ...base,
    refused: true,
    why: [
      `this merge changed \`${c.file}\`, the file of \`${c.candidate}\`, accepted in ${fromPull(entry)}, without a run in this pull request.`,
      `The record keeps \`${c.candidate}\` as ${fromPull(entry)} measured it${measured}; ${same ? 'the topology the file describes is unchanged (only its other fields changed)' : `the default branch's file now describes ${described.hash ? `topology \`${described.hash}\`, which` : 'a topology that'} was never measured`}.`,
      'To measure a change, put it under a new name (a new file with `parent: ' +
        c.candidate +
        '`) and `/topo submit` it; else revert the change.',
    ].join(' '),
  };
}

/** Candidate files of the record that were not recorded, and why; `refused`: a merge the record refuses. */
export interface NotRecorded {
  experimentId: string;
  candidate: string;
  file: string;
  why: string;
  refused: boolean;
}

/** Tells the pull request what the record refused or left out of a run it made (a sticky comment). */
async function explainNotRecorded(
  deps: RecordDeps,
  pull: ClosedPullRequest,
  items: NotRecorded[],
): Promise<void> {
  if (!items.length) return;
  await upsertStickyComment(deps.octokit, {
    owner: deps.owner,
    repo: deps.repo,
    issue_number: pull.number,
    botLogin: deps.botLogin,
    purpose: 'record',
    body: [
      `### The experiment record was not changed for ${items.length === 1 ? 'this candidate' : 'these candidates'}`,
      '',
      ...items.map((i) => `- \`${i.file}\`: ${i.why}`),
    ].join('\n'),
  });
}

/** The candidate files the pull request adds or changes (not the ones it removes). */
async function changedCandidates(deps: RecordDeps, pull: ClosedPullRequest): Promise<CandidateFile[]> {
  const files = await deps.octokit.paginate(deps.octokit.rest.pulls.listFiles, {
    owner: deps.owner,
    repo: deps.repo,
    pull_number: pull.number,
    per_page: 100,
  });
  return files
    .filter((f) => f.status !== 'removed')
    .map((f) => ({ file: f.filename, ...candidateFile(f.filename, deps.topologiesDir) }))
    .filter((c): c is CandidateFile => Boolean(c.folder));
}

/** The pull request's reference jobs, each recorded with the GPU-minutes it held (./record-reference.ts). */
function recordReferences(deps: RecordDeps, pull: ClosedPullRequest, closed: Closed) {
  return recordReferenceRuns(deps, {
    pull,
    closed,
    experimentOf: (id) => loadExperiment(deps, id, pull.head.sha).catch(() => undefined),
    observationOf: async (candidate) => (await readObservation(deps, pull, candidate)).observation,
    timeScaleOf: (x) => deps.clusterOf?.(x)?.time_scale ?? 1,
  });
}

export async function recordClosedPullRequest(
  deps: RecordDeps,
  pull: ClosedPullRequest,
): Promise<RecordResult> {
  const ref = pull.head.sha;
  // The pull request's Requests end with it, whatever it changes (their jobs first).
  const closed = await endRequestsWithPull(
    {
      ...deps,
      experimentOf: (folder) => loadExperiment(deps, folder, ref).catch(() => undefined),
    },
    pull,
  ).catch((error: Error) => {
    if (error instanceof ClosingOutageError) throw new RecordOutageError(error.message);
    throw error;
  });
  const closedSummary = { requests: [...closed.ended.keys()], cancelledJobs: closed.cancelledJobs };
  const candidates = await changedCandidates(deps, pull);
  if (candidates.length === 0)
    return {
      recorded: [],
      notRecorded: [],
      closed: closedSummary,
      skipped: 'the pull request changes no candidate file',
    };
  const facts = await deps.closeCommands(pull);
  const recorded: RecordedCandidate[] = [];
  const notRecorded: NotRecorded[] = [];
  for (const c of candidates) {
    const experiment = await loadExperiment(deps, c.folder, ref);
    // keys name the experiment and the candidate: the Request of this candidate of this experiment
    const mine = closed.state.requests.filter(
      (r) =>
        r.experiment === experiment.experiment_id && r.candidate === c.candidate && !isReferenceRequest(r),
    );
    const request = latestRequests({ ...closed.state, requests: mine }).at(-1);
    const result = request
      ? await recordCandidate(deps, { pull, c, experiment, request, closed, facts })
      : await withoutRun(deps, pull, c, experiment);
    if ('commit' in result) recorded.push(result);
    else notRecorded.push(result);
  }
  const references = await recordReferences(deps, pull, closed);
  // Only what a person must act on is commented: a refusal, or a run of this pull request left out.
  await explainNotRecorded(
    deps,
    pull,
    notRecorded.filter((n) => n.refused || closed.state.requests.some((r) => r.candidate === n.candidate)),
  );
  return { recorded, notRecorded, closed: closedSummary, references };
}

export interface ObserveAgainOptions {
  /** 1 for real AlpaSim; the twin's compression factor otherwise. */
  timeScale?: number;
  /** How far back to look for the run's series, run-minutes of wall time (without a job start). */
  lookbackMinutes?: number;
  /** The clock (unix seconds); the judge caps it at the job's end when the job ended. */
  nowTs?: number;
  /** The run's job (src/judge/job.ts), when Slurm still knows it. */
  job?: RunJob;
  topology?: Topology;
}

/**
 * Queries Prometheus again for one run (when the monitor's comment carries no observation) and
 * judges it with the judge the monitor uses, through its one read (src/judge/read.ts): the same
 * query catalog, its job's start and end, the experiment's settings, wall time and rollouts.
 * Undefined when Prometheus has no series of the run; an outage throws.
 */
export async function observeAgain(
  prometheus: PrometheusClient,
  runName: string,
  experiment: Experiment,
  options: ObserveAgainOptions = {},
): Promise<CandidateObservation | undefined> {
  runSelector(runName); // a topo run name, checked before anything is read
  const scale = options.timeScale ?? 1;
  const job = options.job;
  const end = Math.floor(
    Math.min(options.nowTs ?? Date.now() / 1000, job?.endTs ?? Number.POSITIVE_INFINITY),
  );
  const lookback = Math.round((options.lookbackMinutes ?? 6 * 60) / scale);
  const read = await readRuns(
    { prometheus },
    {
      id: null,
      experiment,
      timeScale: scale,
      // the CLI's default step: one run-minute at most (5 s read a twin run at 5 run-minutes a sample)
      stepSeconds: defaultStepSeconds(scale),
      // without a job: judged by its samples (as of its last one once they stopped)
      runs: [
        {
          runName,
          candidate: { candidate: runName, pr: 0, requested: true },
          ...(job ? { job } : {}),
          topology: options.topology,
        },
      ],
      ...(job?.startTs ? {} : { lookbackMinutes: lookback }),
    },
    end,
  );
  if (read.telemetry?.errors.length)
    throw new Error(
      `Prometheus: ${read.telemetry.errors.map((e) => `${e.quantity}: ${e.message}`).join('; ')}`,
    );
  const j = judgeRead(read).judgements[0];
  return j?.observed.analysis?.startTs == null ? undefined : j.observation;
}

/**
 * `topo init`: writes experiments/<id>.json and .md under the repository root for a new experiment.
 * An existing record is kept unless `overwrite` (`topo init --force`, which first refuses a record
 * that holds runs); returns the paths written.
 */
export function writeInitialRecord(
  repoRoot: string,
  experiment: Experiment,
  cluster?: Cluster,
  options: { overwrite?: boolean } = {},
): string[] {
  const written: string[] = [];
  for (const [path, text] of Object.entries(initialRecordFiles(experiment, cluster))) {
    const file = join(repoRoot, path);
    if (existsSync(file) && !options.overwrite) continue;
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    written.push(file);
  }
  return written;
}
