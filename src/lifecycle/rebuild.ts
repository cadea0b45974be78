// Rebuilding a pull request's run state (pure): from the runs the bot's own structured records name
// (the state block as read, and the submission records of its submission comments) and the job
// Slurm has for each.
// Only what is running stays open: the latest run of a candidate, at the current head's topology,
// whose job is live keeps its Request and Run (the monitor goes on with it). Every other run gets
// an Outcome: a live job of it is cancelled (`superseded`), an ended one says how Slurm ended it, a
// run the records say was submitted but Slurm no longer knows is `lost`, and one that never got a
// job (it waited for a slot) is withdrawn: a rebuild never starts anything, `/topo submit` does.
// Nothing here reads a clock or the network.

import { isLive, type JobStatus } from '../slurm/types.js';
import { parseRunName } from '../topology/run-name.js';
import { compareJobIds } from './jobs.js';
import {
  emptyRunState,
  knowsRequest,
  type Outcome,
  type OutcomeKind,
  type RunRequest,
  type RunState,
  withOutcome,
  withRequest,
  withRun,
} from './model.js';
import type { Submission } from './submissions.js';

/** A run the bot's records name. */
export interface FoundRun {
  experiment: string;
  candidate: string;
  topologyHash: string;
  /** The run label: the Request's id. */
  id: string;
  runName: string;
  /** The records say it was submitted (it had a Slurm job). */
  submitted: boolean;
  /** The job id the records name, when they name one (an unmarked job counts only so: invariant 21). */
  jobId?: string;
  /** Its request time (ISO 8601), when Slurm knows no job. */
  firstSeen: string;
  /** The round's reference job, as its Request said. */
  role?: 'reference';
}

/** The job that stands for a run (src/lifecycle/jobs.ts jobForRun), as the rebuild needs it. */
export interface RebuildJob {
  id: string;
  /** As Slurm printed it, for the evidence. */
  state: string;
  status: JobStatus;
  /** ISO 8601, when Slurm knows it. */
  submittedAt: string | null;
}

export interface RebuildInput {
  pr: number;
  headSha: string;
  /** Who asked for the rebuild (the rebuilt Requests' login). */
  login: string;
  /** ISO 8601: the Outcomes' time, and the request time of runs Slurm gives none for. */
  now: string;
  runs: readonly FoundRun[];
  jobs: ReadonlyMap<string, RebuildJob>;
  /** The pull request's candidates at its head: `<experiment>/<candidate>` → file and topology hash. */
  head: ReadonlyMap<string, { path: string; topologyHash: string }>;
  topologiesDir: string;
}

export interface RebuildPlan {
  state: RunState;
  /** Live jobs of runs that no longer stand: cancel them (their Outcome says so). */
  cancel: Array<{ experiment: string; jobId: string; runName: string }>;
}

/**
 * The runs the bot's own structured records name, each once, oldest first: the Requests of the state
 * as read (when it could be read; its summaries of ended runs too) and the submission records of the
 * pull request's submission comments (src/lifecycle/submissions.ts). Never a run name found in other
 * text: the bot quotes people's comments, and a quoted run name is nobody's Request (invariant 22).
 */
export function runsOfRecords(state: RunState | null, submissions: readonly Submission[]): FoundRun[] {
  const found = new Map<string, FoundRun>();
  const add = (run: FoundRun) => {
    const seen = found.get(run.runName);
    const jobId = seen?.jobId ?? run.jobId;
    const merged = seen ? { ...seen, submitted: seen.submitted || run.submitted } : run;
    found.set(run.runName, jobId ? { ...merged, jobId } : merged);
  };
  const fromRequest = (r: RunRequest, jobId: string | undefined, submitted = !!jobId): FoundRun => ({
    experiment: r.experiment,
    candidate: r.candidate,
    topologyHash: r.topologyHash,
    id: r.id,
    runName: r.runName,
    submitted,
    ...(jobId ? { jobId } : {}),
    firstSeen: r.requestedAt,
    ...(r.role ? { role: r.role } : {}),
  });
  for (const r of state?.requests ?? []) add(fromRequest(r, state?.runs[r.id]?.jobId));
  for (const e of state?.ended ?? []) {
    const parsed = parseRunName(e.runName, e.experiment);
    if (parsed?.label !== e.id) continue;
    const { experiment, candidate, id, runName } = e;
    add({
      experiment,
      candidate,
      id,
      runName,
      topologyHash: parsed.hash,
      submitted: !!e.jobId,
      ...(e.jobId ? { jobId: e.jobId } : {}),
      firstSeen: e.at,
    });
  }
  for (const s of submissions) add(fromRequest(s.request, s.jobId));
  return [...found.values()].sort((a, b) => Date.parse(a.firstSeen) - Date.parse(b.firstSeen));
}

const ENDED_AS: Partial<Record<JobStatus, OutcomeKind>> = { completed: 'finished', cancelled: 'cancelled' };

/** Per candidate, the run that may stand: the oldest with a live job (younger ones are duplicates). */
function liveOf(runs: readonly FoundRun[], jobs: ReadonlyMap<string, RebuildJob>): FoundRun | undefined {
  const live = runs.filter((r) => isLive(jobs.get(r.runName)?.status ?? 'completed'));
  const byJob = (a: FoundRun, b: FoundRun) =>
    compareJobIds(jobs.get(a.runName)?.id ?? '0', jobs.get(b.runName)?.id ?? '0');
  return [...live].sort(byJob)[0];
}

/** The Outcome of a run that no longer stands, from what Slurm says of its job. */
function endedOutcome(run: FoundRun, job: RebuildJob | undefined, why: string, now: string): Outcome {
  const evidence = [`rebuilt: ${why}`];
  if (!job) {
    if (run.submitted)
      return {
        kind: 'lost',
        at: now,
        evidence: [...evidence, 'Slurm no longer knows its job: it is not submitted again'],
      };
    return {
      kind: 'superseded',
      at: now,
      evidence: [...evidence, 'it never got a Slurm job: withdrawn (comment /topo submit to queue it again)'],
    };
  }
  if (isLive(job.status))
    return {
      kind: 'superseded',
      at: now,
      jobId: job.id,
      evidence: [...evidence, `its live Slurm job ${job.id} is cancelled`],
    };
  return {
    kind: ENDED_AS[job.status] ?? 'failed',
    at: now,
    jobId: job.id,
    evidence: [...evidence, `Slurm job ${job.id} ended ${job.state}`],
  };
}

export function planRebuild(input: RebuildInput): RebuildPlan {
  let state = emptyRunState();
  const cancel: RebuildPlan['cancel'] = [];
  const byCandidate = new Map<string, FoundRun[]>();
  for (const r of input.runs) {
    const key = `${r.experiment}/${r.candidate}`;
    byCandidate.set(key, [...(byCandidate.get(key) ?? []), r]);
  }
  for (const [key, runs] of byCandidate) {
    const head = input.head.get(key);
    const standing = liveOf(runs, input.jobs);
    for (const run of runs) {
      const job = input.jobs.get(run.runName);
      const request: RunRequest = {
        id: run.id,
        experiment: run.experiment,
        candidate: run.candidate,
        path: head?.path ?? `${input.topologiesDir}/${run.experiment}/${run.candidate}.yaml`,
        pr: input.pr,
        headSha: input.headSha,
        topologyHash: run.topologyHash,
        runName: run.runName,
        login: input.login,
        requestedAt: job?.submittedAt ?? run.firstSeen,
        ...(run.role ? { role: run.role } : {}),
      };
      state = withRequest(state, request);
      if (job) state = withRun(state, run.id, { jobId: job.id, submittedAt: job.submittedAt ?? input.now });
      if (run === standing && head?.topologyHash === run.topologyHash) continue;
      const why =
        run === standing
          ? `the candidate at the head ${input.headSha.slice(0, 7)} is another topology`
          : job && isLive(job.status)
            ? 'an older run of the candidate also has a live job'
            : 'its outcome was lost with the state';
      const outcome = endedOutcome(run, job, why, input.now);
      state = withOutcome(state, run.id, outcome);
      if (job && isLive(job.status))
        cancel.push({ experiment: run.experiment, jobId: job.id, runName: run.runName });
    }
  }
  return { state, cancel };
}

/**
 * The rebuilt Requests the readable state does not know, added to it with their Runs and Outcomes
 * (what it knows stands: its open Requests are the monitor's to judge). Returns the state and the
 * ids added.
 */
export function underCurrent(current: RunState, rebuilt: RunState): { state: RunState; added: Set<string> } {
  let out = current;
  const added = new Set<string>();
  for (const r of rebuilt.requests) {
    if (knowsRequest(current, r.id)) continue;
    added.add(r.id);
    out = withRequest(out, r);
    const run = rebuilt.runs[r.id];
    if (run) out = withRun(out, r.id, run);
    const outcome = rebuilt.outcomes[r.id];
    if (outcome) out = withOutcome(out, r.id, outcome);
  }
  return { state: out, added };
}
