// Stage `act`: the pass's effects on Slurm and on the Requests, as `decide` planned them. What a
// Request's lifecycle asks (a push supersedes: cancel and record; a forgotten job is recorded lost;
// a job its Outcome ended is cancelled), then the queue (submitted while slots are free; a Request
// that no longer passes is refused by the ports and leaves the pass), then the stops on a decision
// or a stable verdict (with the GPU-minutes they save). Only a standing Request starts a job, and
// only the experiment's own jobs are cancelled (the ports list and cancel by exact run name).
import { withGpuMinutes } from '../analysis/decision.js';
import { REFERENCE_STOP } from '../judge/reference.js';
import type { Outcome } from '../lifecycle/model.js';
import type { CandidateView } from '../report/pr-comment.js';
import { SUBMITTED } from '../slurm/types.js';
import { DECISION_STOP } from './decide.js';
import { candidateGpu, judgeCandidate } from './judge.js';
import type { MonitorJob, MonitorPorts } from './ports.js';
import {
  type ActPlan,
  type ActResult,
  actPlan,
  type CandidateActed,
  type CandidatePass,
  type ExperimentPass,
  eachExperiment,
  type LifecycleIntent,
  type PassState,
  storeActed,
} from './state.js';

export async function act(state: PassState, ports: MonitorPorts): Promise<void> {
  await eachExperiment(state, 'act', async (e) => storeActed(state, e, await actOn(ports, e)));
}

/** What act builds for one experiment while it carries decide's plan out (its result, as it grows). */
interface Acting {
  candidates: Map<CandidatePass, CandidateActed>;
  jobs: Map<CandidatePass, MonitorJob>;
  views: Map<CandidatePass, CandidateView | null>;
  added: CandidatePass[];
  left: Map<number, string[]>;
}

/** Act on one experiment: the lifecycle's effects, the reference Request, the queue, the stops; its result. */
export async function actOn(ports: MonitorPorts, e: ExperimentPass): Promise<ActResult> {
  const x: Acting = { candidates: new Map(), jobs: new Map(), views: new Map(), added: [], left: new Map() };
  const plan = actPlan(e);
  for (const p of e.candidates) await applyLifecycle(ports, e, p, plan.lifecycle.get(p), x);
  const reference = await requestReference(ports, e, plan.request);
  if (reference) x.added.push(reference);
  const order = reference ? [reference, ...plan.queue.order] : plan.queue.order;
  await serveQueue(ports, e, { order, free: plan.queue.free }, x);
  for (const p of e.candidates) await stop(ports, e, p, plan.stops.get(p), x);
  return x;
}

const isoNow = (ports: MonitorPorts) => new Date(ports.now() * 1000).toISOString();

/** Adds to what act did to `p`. */
function did(x: Acting, p: CandidatePass, what: CandidateActed): void {
  x.candidates.set(p, { ...x.candidates.get(p), ...what });
}

/** A superseded or lost Request gets its Outcome and leaves the pass; a leftover live job is cancelled. */
async function applyLifecycle(
  ports: MonitorPorts,
  e: ExperimentPass,
  p: CandidatePass,
  intent: LifecycleIntent | undefined,
  x: Acting,
) {
  const request = p.c.request;
  if (!intent || !request) return;
  if (intent.jobId && intent.kind !== 'lost') await ports.slurm.cancel(intent.jobId, e.id);
  if (intent.kind === 'cancel') return;
  const outcome: Outcome =
    intent.kind === 'supersede'
      ? superseded(request.headSha, p.c.currentHeadSha ?? p.c.headSha, intent.jobId, isoNow(ports))
      : {
          kind: 'lost',
          at: isoNow(ports),
          jobId: intent.jobId,
          evidence: [
            `Slurm no longer knows job ${intent.jobId} (history window or lost controller state); it is not submitted again: comment /topo submit to run it again`,
          ],
        };
  await ports.lifecycle?.recordOutcome(p.c.pr, request.id, outcome);
  leave(x, p); // its pull request's label is recomputed from the candidates that stay
}

function superseded(from: string, to: string, jobId: string | null, at: string): Outcome {
  return {
    kind: 'superseded',
    at,
    ...(jobId ? { jobId } : {}),
    evidence: [
      `the pull request moved from ${from.slice(0, 7)} to ${to.slice(0, 7)}: the new head waits for a new /topo submit`,
      ...(jobId ? [`cancelled Slurm job ${jobId}`] : []),
    ],
  };
}

function leave(x: Acting, p: CandidatePass): void {
  did(x, p, { left: true });
  x.left.set(p.c.pr, p.c.labels);
}

/**
 * Submits queued candidates while slots are free, in the queue's order; each submission is
 * remembered as the Request's Run and its candidate judged again as submitted.
 */
async function serveQueue(
  ports: MonitorPorts,
  e: ExperimentPass,
  queue: ActPlan['queue'],
  x: Acting,
): Promise<void> {
  let free = queue.free;
  for (const p of queue.order) {
    if (free <= 0) break;
    const r = await ports.submit(e.exp, p.c);
    if (r && 'refused' in r) leave(x, p);
    if (!r || 'refused' in r) continue;
    free--;
    const job: MonitorJob = { jobId: r.jobId, name: p.c.runName, ...SUBMITTED, submitTs: null };
    x.jobs.set(p, job);
    did(x, p, { submitted: r.jobId });
    if (p.decided) x.views.set(p, submittedView(e, p, job));
    if (p.c.request)
      await ports.lifecycle?.recordRun(p.c.pr, p.c.request.id, {
        jobId: r.jobId,
        submittedAt: isoNow(ports),
      });
  }
}

/** The candidate judged again with the job act submitted; the reference line decide gave it is kept. */
function submittedView(e: ExperimentPass, p: CandidatePass, job: MonitorJob): CandidateView | null {
  const reference = p.decided?.view?.referenceJob;
  const view = judgeCandidate(e, { ...p, job });
  return view && reference ? { ...view, referenceJob: reference } : view;
}

/**
 * The round's reference Request, when decide found none standing and the candidates need one: made
 * by the bot in the pull request decide chose (ports.lifecycle.requestReference), then put first in
 * the queue, so it takes the next free slot before any candidate waiting there.
 */
async function requestReference(
  ports: MonitorPorts,
  e: ExperimentPass,
  want: ActPlan['request'],
): Promise<CandidatePass | null> {
  const make = ports.lifecycle?.requestReference;
  if (!want || !make) return null;
  const request = await make(e.exp, want.pr, want.headSha);
  if (!request) return null;
  const p: CandidatePass = {
    c: {
      candidate: request.candidate,
      runName: request.runName,
      pr: request.pr,
      headSha: request.headSha,
      currentHeadSha: want.headSha,
      labels: e.candidates.find((x) => x.c.pr === request.pr)?.c.labels ?? [],
      requested: true,
      requestedAt: Date.parse(request.requestedAt),
      request,
      role: 'reference',
    },
    phase: { phase: 'queued' },
    inPass: true,
  };
  return { ...p, decided: { view: judgeCandidate(e, p), stop: null } };
}

/** Cancels a live job the plan says to stop; a stop on the decision fills in the GPU-minutes it saves. */
async function stop(
  ports: MonitorPorts,
  e: ExperimentPass,
  p: CandidatePass,
  reason: string | undefined,
  x: Acting,
): Promise<void> {
  const view = p.decided?.view;
  if (!reason || !view || !p.job || x.candidates.get(p)?.left) return;
  await ports.slurm.cancel(p.job.jobId, e.id);
  x.views.set(p, stoppedView(e, p, view, reason));
  did(x, p, { cancelled: p.job.jobId });
}

/** The view of a candidate act stopped: its decision with the GPU-minutes the stop saves, or a reference job's reason. */
function stoppedView(
  e: ExperimentPass,
  p: CandidatePass,
  view: CandidateView,
  reason: string,
): CandidateView {
  const d = view.observation.decision;
  const gpu = candidateGpu(e, p, true);
  if (d && reason.startsWith(DECISION_STOP) && gpu)
    return { ...view, observation: { ...view.observation, decision: withGpuMinutes(d, gpu) } };
  // a reference job's comment remembers why it was stopped (the judge reads it back: src/judge/judge.ts)
  if (d && reason.startsWith(REFERENCE_STOP))
    return {
      ...view,
      observation: {
        ...view.observation,
        decision: {
          ...d,
          evidence: [...d.evidence, reason],
          ...(gpu ? { gpu_minutes_used: Math.round(gpu.gpus * gpu.minutesRunning) } : {}),
        },
      },
    };
  return view;
}
