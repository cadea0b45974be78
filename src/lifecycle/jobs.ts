// "Which job stands for this run?" — one function for every path. Exact name equality (never a
// prefix): the oldest live job (younger ones are duplicates being retired), else the newest ended.
import { isLive, type JobStatus } from '../slurm/types.js';
import { parseRunName, requestIdOfComment } from '../topology/run-name.js';
import type { RunState } from './model.js';

export interface NamedJob {
  id: string;
  name: string;
  status: JobStatus;
}

/** Numeric job id order (Slurm ids grow with submission); "123_4" array elements after "123". */
export function compareJobIds(a: string, b: string): number {
  const [a1, a2] = a.split('_').map(Number);
  const [b1, b2] = b.split('_').map(Number);
  return (a1 ?? 0) - (b1 ?? 0) || (a2 ?? 0) - (b2 ?? 0);
}

export function jobForRun<J>(jobs: readonly J[], runName: string, view: (job: J) => NamedJob): J | null {
  const mine = jobs.filter((j) => view(j).name === runName);
  const order = (a: J, b: J) => compareJobIds(view(a).id, view(b).id);
  const live = mine.filter((j) => isLive(view(j).status)).sort(order);
  if (live[0]) return live[0];
  return mine.sort(order).at(-1) ?? null;
}

/** A listed job as the ownership rule reads it: the Request its comment names (run-name.ts requestIdOfComment). */
export interface ClaimedJob {
  id: string;
  name: string;
  /** The Request id the job's comment names; null or absent when it names none. */
  requestId?: string | null;
}

/** A Slurm job (its comment) as the ownership rule reads it. */
export function claimed(job: { id: string; name: string; comment: string | null }): ClaimedJob {
  return { id: job.id, name: job.name, requestId: requestIdOfComment(job.comment) };
}

/**
 * Whose run a listed job is by Slurm's own record (invariant 21; a listing holds the login's own
 * jobs only, src/slurm). `marked`: its comment names the Request its name's label names (what
 * submission writes, run-name.ts requestComment). `foreign`: its comment names another Request.
 * `unmarked`: its comment names none: a job made by hand, one submitted before submission wrote the
 * Request's identity, or an ended job from accounting that keeps no comments (no
 * `AccountingStoreFlags=job_comment`).
 */
export function claimOf(job: ClaimedJob, experimentId: string): 'marked' | 'unmarked' | 'foreign' {
  const named = job.requestId ?? null;
  if (named === null) return 'unmarked';
  return named === (parseRunName(job.name, experimentId)?.label ?? null) ? 'marked' : 'foreign';
}

/**
 * Whether a listed job may stand for a run of the experiment: a marked one; an unmarked one only
 * when the bot's state records its job id (`recorded`: the Run records the caller read, so a run
 * submitted before this rule, or an ended one accounting kept no comment of, stays its Request's);
 * never a foreign one. Every job the tool starts is marked (src/usecases/prepare.ts withRunName
 * refuses a run name without a Request label), so an unmarked job of a name without a label is no
 * exception: with the state at hand it stands only by its recorded id. Without it (`recorded`
 * undefined: the CLI's readers, which track runs by name) an unmarked job is taken by its name.
 */
export function isOwnedRun(job: ClaimedJob, experimentId: string, recorded?: ReadonlySet<string>): boolean {
  const claim = claimOf(job, experimentId);
  if (claim !== 'unmarked') return claim === 'marked';
  return recorded === undefined || recorded.has(job.id);
}

/** The job ids a set of Run records (or Outcomes, summaries) name: what isOwnedRun's `recorded` reads. */
export function recordedJobIds(records: Iterable<{ jobId?: string | undefined } | undefined>): Set<string> {
  const ids = new Set<string>();
  for (const r of records) if (r?.jobId) ids.add(r.jobId);
  return ids;
}

/** The job ids a pull request's state records (Runs, Outcomes, summaries of ended Requests). */
export function recordedInState(state: Pick<RunState, 'runs' | 'outcomes' | 'ended'>): Set<string> {
  return recordedJobIds([...Object.values(state.runs), ...Object.values(state.outcomes), ...state.ended]);
}
