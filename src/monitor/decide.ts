// Stage `decide`: what each candidate is and what the pass will do about it, with no effect yet.
// Per experiment: the reference and the leading candidate; per candidate its view (the state
// machine, the Decision against the reference, the pruner's and futility's not-better: ./judge.ts)
// and its stop intent; what its Request's lifecycle asks (supersede, lost, a leftover cancel); and
// the queue (who is submitted when slots free, first come, first served). Pure: `decideOn` returns
// DecideResult, and state.ts storeDecided puts it in decide's sections.
import { shouldStopOnDecision } from '../analysis/decision.js';
import type { CandidateView } from '../report/pr-comment.js';
import { isLive } from '../slurm/types.js';
import { experimentSettings } from '../topology/settings.js';
import type { Experiment } from '../types/generated/experiment.js';
import { planQueue } from '../usecases/queue.js';
import { judgeCandidates, referenceJobLine, viewOf } from './judge.js';
import type { MonitorCandidate } from './ports.js';
import { planReferenceJob, roundCandidates } from './reference-job.js';
import {
  type CandidateDecided,
  type CandidatePass,
  type DecideResult,
  type ExperimentPass,
  eachExperiment,
  type LifecycleIntent,
  type PassState,
  planOf,
  type Reference,
  type ReferenceJobPlan,
  storeDecided,
} from './state.js';

export async function decide(state: PassState): Promise<void> {
  await eachExperiment(state, 'decide', (e) => storeDecided(e, decideOn(e)));
}

/** Decides one experiment and stores the result (a state built in memory, in tests). */
export function decideExperiment(e: ExperimentPass): void {
  storeDecided(e, decideOn(e));
}

/** Decides one experiment from what read and observe left: its result, nothing written. */
export function decideOn(e: ExperimentPass): DecideResult {
  const { reference, leader, judgements } = judgeCandidates(e);
  const judged = new Map<CandidatePass, CandidateDecided>();
  for (const p of e.candidates) {
    const j = judgements.get(p);
    const view = j ? viewOf(e, p, j, reference) : null;
    const live = !!p.job && isLive(p.job.status);
    // a round's reference job is stopped by its own plan (withReferenceJob), or when it failed
    const stop =
      !view || !live || e.unavailable
        ? null
        : p.c.role === 'reference'
          ? failedStop(view)
          : stopReason(e.exp.experiment, view);
    // slurmdbd down: a job the controller forgot is unknown this pass, never written `lost`
    const lifecycle = lifecycleIntent(p, e.accountingUnreachable ?? null);
    judged.set(p, { view, stop, ...(lifecycle ? { lifecycle } : {}) });
  }
  const referenceJob = planReferenceJob(e, { reference, decided: (p) => judged.get(p) });
  const decided = withReferenceJob(e, reference, referenceJob, judged);
  const queue = queueOf(e);
  const plan = planOf(e.candidates, (p) => decided.get(p), queue, referenceJob.request);
  return { reference, leader, candidates: decided, referenceJob, queue, plan };
}

/**
 * Each candidate's `decided` with the round's reference job (./reference-job.ts): its stops (no open
 * decision needs it, a duplicate, a best that changed), never while metrics are unavailable; and the
 * line every candidate's view shows of it.
 */
function withReferenceJob(
  e: ExperimentPass,
  reference: Reference | null,
  plan: ReferenceJobPlan,
  judged: ReadonlyMap<CandidatePass, CandidateDecided>,
): Map<CandidatePass, CandidateDecided> {
  const decided = new Map(judged);
  if (!e.unavailable)
    for (const { p, reason } of plan.stops) {
      const d = decided.get(p);
      if (d) decided.set(p, { ...d, stop: reason });
    }
  for (const p of roundCandidates(e, { reference, decided: (x) => decided.get(x) })) {
    const d = decided.get(p);
    if (d?.view)
      decided.set(p, { ...d, view: { ...d.view, referenceJob: referenceJobLine(e, plan, reference) } });
  }
  return decided;
}

/** What the Request's phase asks besides judging (src/lifecycle/model.ts Phase). */
function lifecycleIntent(
  { phase }: CandidatePass,
  accountingUnreachable: string | null,
): LifecycleIntent | undefined {
  if (phase?.phase === 'supersede') return { kind: 'supersede', jobId: phase.jobId };
  if (phase?.phase === 'lost')
    return accountingUnreachable ? undefined : { kind: 'lost', jobId: phase.jobId };
  if (phase?.phase === 'done' && phase.cancelLive) return { kind: 'cancel', jobId: phase.cancelLive };
  return undefined;
}

/**
 * The queue: requested candidates without a job, strictly by request time (then the older pull
 * request), and the slots free now: the submit path's one queue rule (src/usecases/queue.ts
 * planQueue: max_parallel less the experiment's live run names).
 */
function queueOf(e: ExperimentPass): ExperimentPass['queue'] {
  // the reference job first: it is started with its candidates, not after them
  const waiting = e.candidates
    .filter((p) => p.inPass && p.c.requested && !p.job)
    .sort(
      (a, b) => Number(b.c.role === 'reference') - Number(a.c.role === 'reference') || byRequest(a.c, b.c),
    )
    .map((p) => ({ jobName: p.c.runName, p }));
  const jobs = e.jobs.map((j) => ({ id: j.jobId, name: j.name, status: j.status }));
  const plan = planQueue(waiting, jobs, experimentSettings(e.exp.experiment).maxParallel);
  const order = [...plan.submitNow, ...plan.queued.map((q) => q.request)].map((r) => r.p);
  return { order, free: Math.max(0, plan.slots - plan.live) };
}

/** First come, first served by request time; unknown sorts last. */
function byRequest(a: MonitorCandidate, b: MonitorCandidate): number {
  const at = (c: MonitorCandidate) => c.requestedAt ?? Number.POSITIVE_INFINITY;
  return at(a) - at(b) || a.pr - b.pr;
}

/** The prefix of a stop on the candidate's decision (its GPU-minutes saved are written then). */
export const DECISION_STOP = 'decided';

/** The prefix of a stop of a live run the judge calls failed (no telemetry past its deadline). */
export const FAILED_STOP = 'failed';

/**
 * A live run the judge calls failed is stopped whatever the settings say: it holds its GPUs for
 * nothing (a job that sent no metrics past its deadline: src/judge/observe.ts). Its record says
 * failed, with the failure's kind and message.
 */
export function failedStop(view: Pick<CandidateView, 'state' | 'observation'>): string | null {
  if (view.state !== 'failed') return null;
  const f = view.observation.failure;
  return `${FAILED_STOP}: ${f ? `${f.kind}: ${f.message}` : 'the run failed'}`;
}

/**
 * THE stop decision of a running candidate (the one place): why to stop it now, or null.
 * A run the judge calls failed: always (failedStop). stop_when_decided (default true): once its decision says it cannot win or is settled
 * (src/analysis/decision.ts shouldStopOnDecision); a reference never stops on a decision.
 * stop_when_stable: only the reference, once stable. A candidate is never stopped as stable: a
 * stable verdict is not a decision, and a candidate stopped before its decision leaves every
 * surface without one. Never asked while metrics are unavailable.
 */
export function stopReason(
  experiment: Experiment,
  view: Pick<CandidateView, 'state' | 'observation'>,
): string | null {
  const failed = failedStop(view);
  if (failed) return failed;
  const d = view.observation.decision;
  if (d && !['failed', 'finished', 'stopped'].includes(view.state)) {
    const s = shouldStopOnDecision([d], { stopWhenDecided: experimentSettings(experiment).stopWhenDecided });
    if (s.stop) return `${DECISION_STOP}: ${s.reason} (stop_when_decided)`;
  }
  if (view.state === 'stable' && experiment.stop_when_stable && d?.state === 'reference')
    return 'stable (stop_when_stable)';
  return null;
}
