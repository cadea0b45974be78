// A Request ends with its pull request (docs/security.md): when the pull request closes, merged or
// not, every job of its runs still queued or running in Slurm is cancelled (exact run names only,
// never a sibling's or another experiment's) and every open Request gets the Outcome `closed`, so
// nothing of it runs again: reopening the pull request needs a new `/topo submit`.
import type { Octokit } from '../github/client.js';
import { STATE_LABELS, setStateLabel } from '../github/labels.js';
import { readRunState, updateRunState } from '../github/run-state.js';
import { jobForRun, recordedInState } from '../lifecycle/jobs.js';
import { knowsRequest, type Outcome, openRequests, type RunState, withOutcome } from '../lifecycle/model.js';
import { isLive, type SlurmClient, type SlurmJob } from '../slurm/types.js';
import type { Experiment } from '../types/generated/experiment.js';
import { ownJobs } from './queue.js';

export interface ClosingDeps {
  octokit: Octokit;
  owner: string;
  repo: string;
  botLogin: string;
  /** The experiment of a topologies folder as the default branch defines it (undefined: gone from it). */
  experimentOf: (folder: string) => Promise<Experiment | undefined>;
  /** The Slurm client of the experiment's cluster, when this runner can reach it. */
  slurmFor?: (experiment: Experiment) => Promise<SlurmClient | undefined>;
  log?: (line: string) => void;
}

export interface ClosingPull {
  number: number;
  merged: boolean | null;
  closed_at: string | null;
}

export interface Closed {
  /** The state after the close (the Requests' `closed` Outcomes written). */
  state: RunState;
  /** Requests this close ended, and the job it cancelled for each (if it had a live one). */
  ended: Map<string, { cancelled: string | null }>;
  /** Every job cancelled, of any of the pull request's runs. */
  cancelledJobs: string[];
  /** Each experiment's jobs as listed before the cancels (the record finds its measured job there). */
  jobs: Map<string, SlurmJob[]>;
}

/** Slurm could not be listed: nothing is written; the record action says so and is run again. */
export class ClosingOutageError extends Error {
  override name = 'ClosingOutageError';
}

/**
 * Every run name the state knows, by experiment (whole Requests and the summary of ended ones),
 * with the experiment's folder (from a Request's path; the id when only summaries name it).
 */
function runNamesByExperiment(state: RunState): Map<string, { folder: string; names: Set<string> }> {
  const out = new Map<string, { folder: string; names: Set<string> }>();
  for (const r of [...state.requests, ...state.ended]) {
    const entry = out.get(r.experiment) ?? { folder: r.experiment, names: new Set<string>() };
    if ('path' in r) entry.folder = r.path.split('/').at(-2) ?? entry.folder;
    entry.names.add(r.runName);
    out.set(r.experiment, entry);
  }
  return out;
}

/** Cancels the live jobs of `names` among the experiment's jobs; returns the jobs as listed and those cancelled. */
async function cancelRuns(
  slurm: SlurmClient,
  experimentId: string,
  names: ReadonlySet<string>,
  recorded: ReadonlySet<string>,
): Promise<{ jobs: SlurmJob[]; cancelled: SlurmJob[] }> {
  let jobs: SlurmJob[];
  try {
    // only jobs that name their Request, or that the state's Run records name (invariant 21)
    jobs = ownJobs(await slurm.jobs(`topo-${experimentId}-`), experimentId, [], recorded);
  } catch (error) {
    throw new ClosingOutageError(
      `Slurm unreachable while ending the pull request's runs: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const cancelled = jobs.filter((j) => names.has(j.name) && isLive(j.status));
  for (const j of cancelled) await slurm.cancel(j.id);
  return { jobs, cancelled };
}

/** The `closed` Outcome of one Request: what became of its job, and what reopening needs. */
function closedOutcome(pull: ClosingPull, at: string, cancelled: string | null, ran: boolean): Outcome {
  const how = pull.merged ? 'merged' : 'closed without merge';
  const job = cancelled
    ? `its Slurm job ${cancelled} was cancelled`
    : ran
      ? 'its job had already ended'
      : 'it never ran';
  return {
    kind: 'closed',
    at,
    ...(cancelled ? { jobId: cancelled } : {}),
    evidence: [
      `the pull request was ${how} at ${at}: ${job}`,
      'reopening the pull request needs a new /topo submit',
    ],
  };
}

/**
 * Nothing of a closed pull request is queued or running: those labels go (a verdict's stays, it
 * is still true of the runs that ended).
 */
async function clearLiveLabel(deps: ClosingDeps, pr: number): Promise<void> {
  const target = { owner: deps.owner, repo: deps.repo, issue_number: pr };
  const labels = await deps.octokit.paginate(deps.octokit.rest.issues.listLabelsOnIssue, {
    ...target,
    per_page: 100,
  });
  const live = [STATE_LABELS.queued.name, STATE_LABELS.running.name] as string[];
  if (labels.some((l) => live.includes(l.name)))
    await setStateLabel(
      deps.octokit,
      target,
      null,
      labels.map((l) => l.name),
    );
}

/**
 * Ends the pull request's runs: cancels their live jobs (experiment by experiment), then writes
 * `closed` for each open Request (compare-and-swap). Re-running it is harmless.
 */
export async function endRequestsWithPull(deps: ClosingDeps, pull: ClosingPull): Promise<Closed> {
  const target = { owner: deps.owner, repo: deps.repo, issue_number: pull.number, botLogin: deps.botLogin };
  const state = await readRunState(deps.octokit, target);
  const jobs = new Map<string, SlurmJob[]>();
  const cancelledJobs: string[] = [];
  const liveOf = new Map<string, string>();
  for (const [experimentId, { folder, names }] of runNamesByExperiment(state)) {
    const experiment = await deps.experimentOf(folder);
    const slurm = experiment && deps.slurmFor ? await deps.slurmFor(experiment) : undefined;
    if (!slurm) {
      deps.log?.(`${experimentId}: no Slurm access from this runner: its jobs are not cancelled here`);
      continue;
    }
    try {
      const listed = await cancelRuns(slurm, experimentId, names, recordedInState(state));
      jobs.set(experimentId, listed.jobs);
      for (const j of listed.cancelled) {
        cancelledJobs.push(j.id);
        liveOf.set(j.name, j.id);
      }
    } finally {
      await slurm.close();
    }
  }
  if (cancelledJobs.length) deps.log?.(`cancelled live job(s) ${cancelledJobs.join(', ')}`);
  const at = pull.closed_at ?? new Date().toISOString();
  const ended = new Map<string, { cancelled: string | null }>();
  const outcomes = new Map<string, Outcome>();
  for (const r of openRequests(state)) {
    const cancelled = liveOf.get(r.runName) ?? null;
    const listed = jobs.get(r.experiment);
    const ran = !!state.runs[r.id] || (!!listed && jobForRun(listed, r.runName, (j) => j) !== null);
    ended.set(r.id, { cancelled });
    outcomes.set(r.id, closedOutcome(pull, at, cancelled, ran));
  }
  if (outcomes.size === 0) return { state, ended, cancelledJobs, jobs };
  const written = await updateRunState(deps.octokit, target, (s) => {
    let next = s;
    for (const [id, o] of outcomes) if (knowsRequest(next, id)) next = withOutcome(next, id, o);
    return next;
  });
  await clearLiveLabel(deps, pull.number);
  return { state: written, ended, cancelledJobs, jobs };
}
