// The run lifecycle: Request -> Run -> Outcome (docs/security.md, docs/github.md).
// Pure. A Request is written only by the bot after the permission check and validation against the
// default branch; a Run is what Slurm did for it (found by its exact run name); an Outcome consumes
// the Request: nothing runs for it again, whatever Slurm remembers or forgets. The state is bounded:
// the Requests that may still act (open, or the latest of their candidate) are kept whole, the
// others that ended are kept as a short summary of the newest ENDED_KEEP (src/lifecycle/bounds.ts).
import { isLive, type JobStatus } from '../slurm/types.js';

/** "Run candidate C of experiment E at head H (topology hash T)", asked by L at time t. */
export interface RunRequest {
  /** The run label: unique per submission (src/topology/run-name.ts). */
  id: string;
  experiment: string;
  candidate: string;
  /** The candidate file, repository-relative. */
  path: string;
  pr: number;
  headSha: string;
  /** hash8 of the expanded topology. */
  topologyHash: string;
  /** Slurm job name and wizard.run_name of this submission. */
  runName: string;
  login: string;
  /** ISO 8601 (UTC). */
  requestedAt: string;
  /**
   * `reference`: the round's reference job, a run of the experiment's current best (the default
   * branch's, from the record) that the bot asks for beside the candidates of this pull request's
   * round; `path` is then the best's file on the default branch. Absent: a candidate of the pull request.
   */
  role?: 'reference';
}

/** A Request for the round's reference job (not a candidate of its pull request). */
export const isReferenceRequest = (r: Pick<RunRequest, 'role'>): boolean => r.role === 'reference';

/** The Slurm side of a Request once submitted (the product remembers it; Slurm may forget). */
export interface RunRecord {
  jobId: string;
  submittedAt: string;
}

export const OUTCOME_KINDS = [
  'decided',
  'finished',
  'failed',
  'stopped',
  'cancelled',
  'superseded',
  'lost',
  /** Queued, then at its turn no longer valid against the default branch: never submitted. */
  'refused',
  /** Its pull request was closed (merged or not): its job cancelled; reopening needs a new Request. */
  'closed',
] as const;
export type OutcomeKind = (typeof OUTCOME_KINDS)[number];

export interface Outcome {
  kind: OutcomeKind;
  at: string;
  jobId?: string;
  /** Why, in plain sentences (shown escaped). */
  evidence: string[];
}

/**
 * A Request that ended and is no longer the latest of its candidate, as the state keeps it: enough
 * to name its run (and cancel its job, should Slurm still run it) and to say how it ended.
 */
export interface EndedRequest {
  id: string;
  experiment: string;
  candidate: string;
  runName: string;
  kind: OutcomeKind;
  /** When it ended (its Outcome's time). */
  at: string;
  jobId?: string;
}

/** Everything the bot keeps about one pull request's runs (bounded: src/lifecycle/bounds.ts). */
export interface RunState {
  version: 2;
  /** Open Requests, and the latest Request of each candidate whatever its Outcome: kept whole. */
  requests: RunRequest[];
  runs: Record<string, RunRecord>;
  outcomes: Record<string, Outcome>;
  /** The other Requests that ended, oldest first: the newest ENDED_KEEP of them. */
  ended: EndedRequest[];
  /** How many ended Requests left `ended` (older than the newest ENDED_KEEP), by Outcome kind. */
  forgotten: Partial<Record<OutcomeKind, number>>;
}

export function emptyRunState(): RunState {
  return { version: 2, requests: [], runs: {}, outcomes: {}, ended: [], forgotten: {} };
}

/** A write that names a Request the state does not hold (never written, or long forgotten). */
export class UnknownRequestError extends Error {
  override name = 'UnknownRequestError';
}

/** What a job looks like to the lifecycle (any source: SlurmJob, MonitorJob). */
export interface JobFact {
  id: string;
  status: JobStatus;
}

/** What the next pass must do for a Request. */
export type Phase =
  /** Asked for the current head, never submitted: waits for a slot (by request time). */
  | { phase: 'queued' }
  | { phase: 'running'; jobId: string }
  /** The job ended and no Outcome is written yet: judge it as of its end, then write one. */
  | { phase: 'ended'; jobId: string }
  /** The head moved on: cancel the job if live, write `superseded`. */
  | { phase: 'supersede'; jobId: string | null }
  /** Submitted, but Slurm no longer knows the job: write `lost`, never resubmit. */
  | { phase: 'lost'; jobId: string }
  /** Consumed. `cancelLive`: the Outcome says the job should be gone but Slurm still runs it. */
  | { phase: 'done'; outcome: Outcome; cancelLive: string | null };

const ENDS_THE_JOB = new Set<OutcomeKind>(['stopped', 'cancelled', 'superseded', 'closed']);

/** The pure state function every path uses (monitor, submit, record, CLI). */
export function phaseOf(input: {
  request: RunRequest;
  run?: RunRecord;
  outcome?: Outcome;
  /** The job that stands for the request (jobForRun), or null when Slurm lists none. */
  job: JobFact | null;
  /** The pull request's current head. */
  headSha: string;
}): Phase {
  const { request, run, outcome, job, headSha } = input;
  const jobLive = job !== null && isLive(job.status);
  if (outcome)
    return {
      phase: 'done',
      outcome,
      cancelLive: ENDS_THE_JOB.has(outcome.kind) && jobLive ? (job as JobFact).id : null,
    };
  if (request.headSha !== headSha) return { phase: 'supersede', jobId: jobLive ? (job as JobFact).id : null };
  if (job) return jobLive ? { phase: 'running', jobId: job.id } : { phase: 'ended', jobId: job.id };
  if (run) return { phase: 'lost', jobId: run.jobId };
  return { phase: 'queued' };
}

/** The latest Request of each candidate of the state (older ones are superseded by it). */
export function latestRequests(state: RunState): RunRequest[] {
  const byCandidate = new Map<string, RunRequest>();
  for (const r of [...state.requests].sort(byRequestTime))
    byCandidate.set(`${r.experiment}/${r.candidate}`, r);
  return [...byCandidate.values()].sort(byRequestTime);
}

/** Requests an earlier Request of the same candidate left open (no Outcome): to supersede. */
export function olderOpenRequests(state: RunState): RunRequest[] {
  const latest = new Set(latestRequests(state).map((r) => r.id));
  return state.requests.filter((r) => !latest.has(r.id) && !state.outcomes[r.id]);
}

/** Strict first come, first served: request time, then pull request, then label. */
export function byRequestTime(
  a: Pick<RunRequest, 'requestedAt' | 'pr' | 'id'>,
  b: Pick<RunRequest, 'requestedAt' | 'pr' | 'id'>,
): number {
  return (
    Date.parse(a.requestedAt) - Date.parse(b.requestedAt) ||
    a.pr - b.pr ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/** Whether the state holds `id`: whole, or in the summary of ended Requests. */
export function knowsRequest(state: RunState, id: string): 'whole' | 'ended' | null {
  if (state.requests.some((r) => r.id === id)) return 'whole';
  return state.ended.some((e) => e.id === id) ? 'ended' : null;
}

/** Pure updates (a new state; the input is not changed). A Request already known stays as it is. */
export function withRequest(state: RunState, request: RunRequest): RunState {
  if (knowsRequest(state, request.id)) return state;
  return { ...state, requests: [...state.requests, request] };
}

/**
 * The Run of a known Request (the first stands). A Run of a Request that already ended and was
 * summarised keeps its job id in the summary: the job runs without a Request and is to be cancelled.
 */
export function withRun(state: RunState, requestId: string, run: RunRecord): RunState {
  const known = knowsRequest(state, requestId);
  if (known === null)
    throw new UnknownRequestError(
      `a Run (job ${run.jobId}) for request ${requestId}, which the state does not hold`,
    );
  if (known === 'ended')
    return {
      ...state,
      ended: state.ended.map((e) => (e.id === requestId && !e.jobId ? { ...e, jobId: run.jobId } : e)),
    };
  if (state.runs[requestId]) return state;
  return { ...state, runs: { ...state.runs, [requestId]: run } };
}

/** Evidence kept in the state (each sentence's JSON at most `bytes`): the full text goes to the comments and the check run. */
export const EVIDENCE_KEPT = { sentences: 2, bytes: 240 } as const;

const jsonBytes = (text: string) => Buffer.byteLength(JSON.stringify(text), 'utf8');

function boundedEvidence(evidence: readonly string[]): string[] {
  return evidence.slice(0, EVIDENCE_KEPT.sentences).map((sentence) => {
    // a sentence is one line; control characters would cost six bytes each in JSON
    let line = sentence.replace(/\s+/g, ' ');
    if (jsonBytes(line) <= EVIDENCE_KEPT.bytes) return line;
    while (line.length > 0 && jsonBytes(`${line}…`) > EVIDENCE_KEPT.bytes) line = line.slice(0, -8);
    return `${line}…`;
  });
}

/**
 * The first Outcome of a Request stands (it is consumed once). An Outcome for a Request the state
 * does not hold is refused (UnknownRequestError): it would make the state unreadable.
 */
export function withOutcome(state: RunState, requestId: string, outcome: Outcome): RunState {
  const known = knowsRequest(state, requestId);
  if (known === null)
    throw new UnknownRequestError(
      `an Outcome (${outcome.kind}) for request ${requestId}, which the state does not hold`,
    );
  if (known === 'ended' || state.outcomes[requestId]) return state;
  const kept: Outcome = { ...outcome, evidence: boundedEvidence(outcome.evidence) };
  return { ...state, outcomes: { ...state.outcomes, [requestId]: kept } };
}

/**
 * Requests without an Outcome that no longer stand: made for another head than `headSha` (a push
 * supersedes), or followed by a later Request of the same candidate.
 */
export function staleRequests(state: RunState, headSha: string): RunRequest[] {
  const older = new Set(olderOpenRequests(state).map((r) => r.id));
  return state.requests.filter((r) => !state.outcomes[r.id] && (r.headSha !== headSha || older.has(r.id)));
}

/**
 * The Requests of the pull request that still stand, one per candidate at most (a pull request may
 * carry several candidates): the latest of each, for the current head, without an Outcome; oldest first.
 */
export function standingRequests(state: RunState, headSha: string): RunRequest[] {
  return latestRequests(state).filter((r) => r.headSha === headSha && !state.outcomes[r.id]);
}

/** Requests without an Outcome, whatever their head (what /topo cancel|stop act on), oldest first. */
export function openRequests(state: RunState): RunRequest[] {
  return [...state.requests].sort(byRequestTime).filter((r) => !state.outcomes[r.id]);
}
