// Submitting and cancelling a candidate: orchestration over an injected SlurmClient, no other I/O.
//
// Idempotent by job name. Before sbatch, the experiment's jobs are listed (one command): a job with the
// candidate's name that is pending, running or still known as finished is returned instead.
//
// Exactly one job even when two submits race (two runners, or a connection lost after sbatch): the job
// is submitted with --hold, so it cannot start yet; then the jobs are listed again, and of the live jobs
// with that name the OLDEST (lowest id) is kept. Younger ones are retired (renamed `retired-<name>`, then
// cancelled) before they ever ran; the kept one is released. Every racer applies the same rule to the
// same Slurm state, so they agree without talking to each other, and no lock is needed on the login
// node (a flock there would not hold across several login nodes behind one address, and would need a
// shell on the login side). A runner that dies between submit and release (a Ctrl-C, a lost runner)
// leaves a held job: the next submit finds it by name and releases it (the CLI's next `topo submit`
// finds it among the live runs of the candidate, whatever its label: `standsFor`). An interrupted submit
// (`signal`) cancels the held job it made instead of releasing it, and says so.
import { dirname } from 'node:path';
import { ConnectionLostError } from '../slurm/errors.js';
import { slurmTimeToUnix } from '../slurm/parse.js';
import { isLive, type SlurmClient, type SlurmJob } from '../slurm/types.js';
import { parseRunName } from '../topology/run-name.js';
import {
  byJobId,
  DEFAULT_MAX_PARALLEL,
  isRetiredDuplicate,
  ownJobs,
  planQueue,
  type QueueRequest,
  RETIRED_PREFIX,
  representativeJob,
  retiredName,
} from './queue.js';

export { isRetiredDuplicate, RETIRED_PREFIX, retiredName };

export interface SubmitDeps {
  slurm: SlurmClient;
  log?: (message: string) => void;
  /** Aborted (a Ctrl-C): nothing is submitted, and a job already held by this submit is cancelled. */
  signal?: AbortSignal;
}

/** A submit stopped by its signal: nothing was left held (the message says what was withdrawn). */
export class SubmitInterrupted extends Error {}

/** What the topology renderer produces (src/topology/render.ts `Submission`). */
export interface RenderedSubmission {
  jobName: string;
  argv: string[];
  shellLine: string;
  /** submit.sh's variables (render's Submission.env): set for sbatch only, never the action's env. */
  env?: Readonly<Record<string, string | undefined>>;
}

export interface SubmitRequest {
  experimentId: string;
  /** Cluster name, for the reply. */
  cluster: string;
  submission: RenderedSubmission;
  maxParallel?: number;
  /** Requests of the same experiment that came first (first come, first served), oldest first. */
  ahead?: readonly QueueRequest[];
  /** Every experiment id the caller knows: a job of a longer id is never counted as this one's. */
  knownExperimentIds?: readonly string[];
  /**
   * The job ids the caller's state records as its Requests' runs (the monitor's Run records): a job
   * whose comment names no Request counts (stands, holds a slot) only when it is one of them
   * (src/lifecycle/jobs.ts isOwnedRun). Absent (the CLI, which has no state): such a job counts by name.
   */
  recorded?: ReadonlySet<string>;
  /** Submit again although a finished job with this name is known (e.g. after a node failure). */
  resubmitFinished?: boolean;
  /**
   * A candidate's base name (`topo-<experiment>-<candidate>-<hash8>`): a live run of it under any label
   * stands for this request (the CLI, which tracks runs by name only); a held one is released, and
   * younger held ones (interrupted submits) are retired.
   */
  standsFor?: string;
  dryRun?: boolean;
}

interface ResultBase {
  jobName: string;
  cluster: string;
  /** The exact command, shell-quoted for reading (without the internal --hold). */
  command: string;
}
export type SubmitResult =
  | (ResultBase & { status: 'submitted'; jobId: string })
  | (ResultBase & { status: 'existing'; jobId: string; state: SlurmJob['state'] })
  | (ResultBase & { status: 'queued'; position: number; live: number; maxParallel: number })
  | (ResultBase & { status: 'dry-run'; wouldBe: 'submitted' | 'queued'; position?: number });

export function experimentPrefix(experimentId: string): string {
  return `topo-${experimentId}-`;
}

export async function submitCandidate(deps: SubmitDeps, request: SubmitRequest): Promise<SubmitResult> {
  const { jobName, shellLine } = request.submission;
  const maxParallel = request.maxParallel ?? DEFAULT_MAX_PARALLEL;
  const prefix = experimentPrefix(request.experimentId);
  if (!jobName.startsWith(prefix)) throw new Error(`job name ${jobName} does not start with ${prefix}`);
  const base = { jobName, cluster: request.cluster, command: shellLine };

  let jobs = await experimentJobs(deps, request);
  const standing = request.standsFor ? await liveRunStanding(deps, request, jobs) : null;
  if (standing) return { ...base, ...standing };
  const found = representativeJob(jobs, jobName);
  if (found && (isLive(found.status) || !request.resubmitFinished)) {
    const kept = request.dryRun ? found : await settle(deps, jobs, jobName, undefined);
    return { ...base, status: 'existing', jobId: kept.id, state: kept.state };
  }
  if (found) jobs = jobs.filter((j) => j.name !== jobName); // a finished job we are told to run again

  const me: QueueRequest = { jobName };
  const plan = planQueue([...(request.ahead ?? []), me], jobs, maxParallel);
  const waiting = plan.queued.find((q) => q.request === me);
  if (request.dryRun) {
    return waiting
      ? { ...base, status: 'dry-run', wouldBe: 'queued', position: waiting.position }
      : { ...base, status: 'dry-run', wouldBe: 'submitted' };
  }
  if (waiting) return { ...base, status: 'queued', position: waiting.position, live: plan.live, maxParallel };
  interrupted(deps, 'before sbatch: nothing was submitted');
  return submitHeld(deps, request, base, maxParallel);
}

function interrupted(deps: SubmitDeps, what: string): void {
  if (deps.signal?.aborted) throw new SubmitInterrupted(`interrupted ${what}`);
}

/**
 * The oldest live run of `request.standsFor` (any label), released if held; younger held runs of it
 * (submits interrupted between sbatch and release) are retired. Null when none is live.
 */
async function liveRunStanding(
  deps: SubmitDeps,
  request: SubmitRequest,
  jobs: readonly SlurmJob[],
): Promise<{ status: 'existing'; jobId: string; state: SlurmJob['state']; jobName: string } | null> {
  const base = request.standsFor as string;
  const live = jobs
    .filter((j) => isRunOfName(j.name, base, request.experimentId) && isLive(j.status))
    .sort(byJobId);
  const kept = live[0];
  if (!kept) return null;
  if (!request.dryRun) {
    for (const j of live.slice(1)) if (j.status === 'held') await retire(deps, j, j.name);
    await settle(deps, jobs, kept.name, kept);
  }
  return { status: 'existing', jobId: kept.id, state: kept.state, jobName: kept.name };
}

/** The experiment's jobs as Slurm lists them (another experiment's of a longer id excluded). */
async function experimentJobs(deps: SubmitDeps, request: SubmitRequest): Promise<SlurmJob[]> {
  const listed = await deps.slurm.jobs(experimentPrefix(request.experimentId));
  return ownJobs(listed, request.experimentId, request.knownExperimentIds, request.recorded);
}

/**
 * sbatch --hold, then the job looked up by name (a lost connection may have submitted it or not),
 * then released: the oldest live job of the name is kept, and the youngest yields when another
 * candidate was submitted at the same moment over max_parallel.
 */
async function submitHeld(
  deps: SubmitDeps,
  request: SubmitRequest,
  base: ResultBase,
  maxParallel: number,
): Promise<SubmitResult> {
  const { slurm } = deps;
  const log = deps.log ?? (() => {});
  const { jobName, argv } = request.submission;
  const output = argv.find((a) => a.startsWith('--output='));
  if (output) await slurm.ensureDir(dirname(output.slice('--output='.length)));
  const held = [argv[0] ?? 'sbatch', '--hold', ...argv.slice(1)];

  for (let attempt = 1; ; attempt++) {
    let submittedId: string | undefined;
    try {
      submittedId = await slurm.submit(held, request.submission.env);
      log(`sbatch accepted ${jobName} as job ${submittedId} (held)`);
    } catch (error) {
      // a Ctrl-C reaches sbatch too: whether Slurm took the job is then unknown, as after a lost connection
      if (!(error instanceof ConnectionLostError) && !deps.signal?.aborted) throw error;
      log(`sbatch of ${jobName} did not answer (${(error as Error).message}): looking it up by name`);
    }
    if (deps.signal?.aborted) return withdrawInterrupted(deps, request, submittedId);
    try {
      const done = await keepOne(deps, request, base, maxParallel, submittedId);
      if (done === 'not-found' && submittedId === undefined && attempt < 3) continue; // sbatch never reached Slurm
      if (done === 'not-found')
        throw new Error(
          `submitted ${jobName}${submittedId ? ` as job ${submittedId}` : ''} but Slurm lists no live job of that name`,
        );
      return done;
    } catch (error) {
      if (submittedId !== undefined) await withdrawHeld(deps, submittedId, error);
      throw error;
    }
  }
}

/**
 * A submit interrupted after sbatch: the held job it made (its own id, or, when sbatch did not answer,
 * the live jobs of its run name, which carries this submit's own label) is cancelled, never released.
 */
async function withdrawInterrupted(
  deps: SubmitDeps,
  request: SubmitRequest,
  submittedId: string | undefined,
): Promise<never> {
  const { jobName } = request.submission;
  const error = new SubmitInterrupted(`interrupted after sbatch of ${jobName}`);
  const ids =
    submittedId !== undefined
      ? [submittedId]
      : (await experimentJobs(deps, request))
          .filter((j) => j.name === jobName && isLive(j.status))
          .map((j) => j.id);
  if (!ids.length) error.message += ': Slurm lists no job of that name (nothing was submitted)';
  for (const id of ids) await withdrawHeld(deps, id, error);
  throw error;
}

/**
 * After sbatch: the oldest live job of the name is kept and released (or the youngest yields over
 * max_parallel); 'not-found' when Slurm lists none.
 */
async function keepOne(
  deps: SubmitDeps,
  request: SubmitRequest,
  base: ResultBase,
  maxParallel: number,
  submittedId: string | undefined,
): Promise<SubmitResult | 'not-found'> {
  const { jobName } = request.submission;
  const after = await experimentJobs(deps, request);
  const mine = after.filter((j) => j.name === jobName && isLive(j.status)).sort(byJobId);
  const keeper = mine[0];
  if (!keeper) return 'not-found';
  const ours = submittedId === undefined || keeper.id === submittedId;
  const live = ours ? liveOverLimit(after, keeper, maxParallel) : null;
  if (live !== null) {
    for (const j of mine) await retire(deps, j, jobName);
    deps.log?.(`${jobName}: ${live} live candidates > max_parallel ${maxParallel}: withdrawn, queued`);
    return { ...base, status: 'queued', position: 1, live: live - 1, maxParallel };
  }
  const kept = await settle(deps, after, jobName, keeper);
  return ours
    ? { ...base, status: 'submitted', jobId: kept.id }
    : { ...base, status: 'existing', jobId: kept.id, state: kept.state };
}

/**
 * A step after sbatch failed: the held job this submit made is cancelled (it never ran; a release
 * could start a duplicate nobody checked), never left held. The error's message says which happened.
 */
async function withdrawHeld(deps: SubmitDeps, jobId: string, error: unknown): Promise<void> {
  let outcome: string;
  try {
    await deps.slurm.cancel(jobId);
    outcome = `the held job ${jobId} this submit made was cancelled (it never ran)${error instanceof SubmitInterrupted ? '' : '; submit again'}`;
  } catch (cancelError) {
    outcome = `cancelling the held job ${jobId} this submit made failed too (${(cancelError as Error).message}): it is left held; cancel it with \`scancel ${jobId}\``;
  }
  deps.log?.(outcome);
  if (error instanceof Error) error.message = `${error.message}; ${outcome}`;
}

/**
 * The number of live candidates when the still-held keeper is the youngest of more than
 * max_parallel (another candidate was submitted at the same moment: the youngest yields), else null.
 */
function liveOverLimit(after: readonly SlurmJob[], keeper: SlurmJob, maxParallel: number): number | null {
  const liveByName = new Map<string, SlurmJob>();
  for (const j of after.filter((x) => isLive(x.status) && !isRetiredDuplicate(x.name)).sort(byJobId))
    if (!liveByName.has(j.name)) liveByName.set(j.name, j);
  const youngest = [...liveByName.values()].sort(byJobId).at(-1);
  const yields = liveByName.size > maxParallel && youngest?.id === keeper.id && keeper.status === 'held';
  return yields ? liveByName.size : null;
}

/** Keeps the oldest live job of the name, retires younger duplicates, releases the keeper if held. */
async function settle(
  deps: SubmitDeps,
  jobs: readonly SlurmJob[],
  jobName: string,
  keeper: SlurmJob | undefined,
): Promise<SlurmJob> {
  const live = jobs.filter((j) => j.name === jobName && isLive(j.status)).sort(byJobId);
  const kept = keeper ?? live[0] ?? representativeJob(jobs, jobName);
  if (!kept) throw new Error(`no job named ${jobName}`);
  for (const j of live) if (j.id !== kept.id) await retire(deps, j, jobName);
  if (kept.status === 'held') {
    await deps.slurm.release(kept.id);
    deps.log?.(`released job ${kept.id} (${jobName})`);
  }
  return kept;
}

async function retire(deps: SubmitDeps, job: SlurmJob, jobName: string): Promise<void> {
  try {
    await deps.slurm.rename(job.id, retiredName(jobName));
  } catch (error) {
    deps.log?.(`could not rename duplicate job ${job.id}: ${(error as Error).message}`);
  }
  await deps.slurm.cancel(job.id);
  deps.log?.(`retired duplicate job ${job.id} of ${jobName}`);
}

/**
 * How long a job may stay held before a pass releases it: a submit releases its own within seconds, so
 * an older hold was left by one that never finished (a killed runner or terminal). Younger holds are
 * left to their submit, whose duplicate and max_parallel rules need them still held.
 */
export const ABANDONED_HOLD_SECONDS = 120;

/**
 * Releases the experiment's jobs held (JobHeldUser) for longer than ABANDONED_HOLD_SECONDS by Slurm's
 * submit time (lifecycle invariant 20: no job the tool made is left held); the monitor's pass and
 * `topo watch` call it on the listing they read. Returns the listing with those jobs released.
 */
export async function releaseAbandonedHolds(
  deps: SubmitDeps,
  experimentId: string,
  jobs: readonly SlurmJob[],
  nowTs: number,
): Promise<SlurmJob[]> {
  const own = new Set(ownJobs(jobs, experimentId, [], new Set()).map((j) => j.id)); // only jobs that name their Request
  const out: SlurmJob[] = [];
  for (const job of jobs) {
    const submitted = slurmTimeToUnix(job.submitTime);
    const abandoned =
      own.has(job.id) &&
      job.status === 'held' &&
      submitted !== null &&
      nowTs - submitted > ABANDONED_HOLD_SECONDS;
    if (!abandoned) {
      out.push(job);
      continue;
    }
    await deps.slurm.release(job.id);
    deps.log?.(`released job ${job.id} (${job.name}): held since its submit did not finish`);
    out.push({ ...job, reason: null });
  }
  return out;
}

export interface CancelRequest {
  experimentId: string;
  /** The exact run name: only jobs of exactly this name are cancelled. */
  jobName: string;
  /**
   * The job ids the caller's state records: a job whose comment names no Request is cancelled only
   * when it is one of them (src/lifecycle/jobs.ts isOwnedRun). Absent (the CLI): by its name.
   */
  recorded?: ReadonlySet<string>;
}
export interface CancelResult {
  jobName: string;
  /** Job ids cancelled now (empty when none was live). */
  cancelled: string[];
  /** The job that stands for the name afterwards, if Slurm knows one. */
  job: SlurmJob | null;
}

/**
 * Whether a job is a run of `jobName`: the exact run name; or, given a candidate's base name
 * (`topo-<experiment>-<candidate>-<hash8>`, as the CLI renders it), that name plus a run label.
 * Never a prefix match: `more` does not match `more-workers`.
 */
export function isRunOfName(name: string, jobName: string, experimentId: string): boolean {
  if (name === jobName) return true;
  const wanted = parseRunName(jobName, experimentId);
  const found = parseRunName(name, experimentId);
  return (
    wanted !== null &&
    found !== null &&
    wanted.label === null &&
    found.candidate === wanted.candidate &&
    found.hash === wanted.hash
  );
}

/** Cancels every live job of exactly this run (scancel); a finished or unknown one is left as is. */
export async function cancelCandidate(deps: SubmitDeps, request: CancelRequest): Promise<CancelResult> {
  const listed = await deps.slurm.jobs(experimentPrefix(request.experimentId));
  const jobs = ownJobs(listed, request.experimentId, [], request.recorded);
  const mine = jobs.filter((j) => isRunOfName(j.name, request.jobName, request.experimentId));
  const live = mine.filter((j) => isLive(j.status));
  for (const j of live) await deps.slurm.cancel(j.id);
  const newest = mine.sort(byJobId).at(-1);
  return {
    jobName: request.jobName,
    cancelled: live.map((j) => j.id),
    job: newest ? representativeJob(mine, newest.name) : null,
  };
}

/**
 * Cancels the live jobs of exactly these runs of one experiment (one listing): the runs a pull
 * request's own records name. Never a prefix, never a candidate's other runs.
 */
export async function cancelRuns(
  deps: SubmitDeps,
  request: { experimentId: string; runNames: ReadonlySet<string>; recorded?: ReadonlySet<string> },
): Promise<{ name: string; id: string }[]> {
  const listed = await deps.slurm.jobs(experimentPrefix(request.experimentId));
  const jobs = ownJobs(listed, request.experimentId, [], request.recorded);
  const found = jobs.filter((j) => isLive(j.status) && request.runNames.has(j.name));
  for (const j of found) await deps.slurm.cancel(j.id);
  return found.map((j) => ({ name: j.name, id: j.id }));
}
