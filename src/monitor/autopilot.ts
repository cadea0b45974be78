// Stage `autopilot` (after decide, before act): for each experiment with an `autopilot` policy on the
// default branch, the core's plan (src/autopilot/core.ts planStep) over the record, this pass's
// decisions and the bot's own state (its controls), carried out through ports.autopilot: open a
// round's bot pull requests (the branch is the lock), make their Requests, close decided losers, and
// conclude. While paused, concluded or ending it takes the bot's queued Requests out of the queue
// (every queued one while paused), so act submits none of them. A run a control stops gets the
// Outcome `stopped` here and act cancels its job; a pause's stops are kept in the bot's state and run
// again on resume. The dashboard issue is written last, from the same plan.
import type { PilotAction, PilotPlan } from '../autopilot/core.js';
import { renderDashboard } from '../autopilot/dashboard.js';
import {
  type BotPull,
  botPullBody,
  closingText,
  type LiveCandidate,
  liveOutcome,
  liveRuns,
} from '../autopilot/pulls.js';
import { controlsOfState, type PilotState } from '../autopilot/state.js';
import type { Outcome } from '../lifecycle/model.js';
import { viewFigure } from '../report/pr-comment.js';
import { planFor } from '../usecases/autopilot.js';
import { candidateGpu } from './judge.js';
import type { AutopilotPort, AutopilotView, MonitorPorts } from './ports.js';
import {
  type CandidatePass,
  type ExperimentPass,
  eachExperiment,
  type PassState,
  type Stage,
} from './state.js';

export async function autopilot(state: PassState, ports: Parameters<Stage['run']>[1]): Promise<void> {
  const port = ports.autopilot;
  if (!port) return;
  await eachExperiment(state, 'autopilot', async (e) => {
    const view = await port.read(e.exp);
    if (!view) return; // no autopilot block on the default branch
    await pilot({ ports, port, e, view: withRounds(view) });
  });
}

interface Pass {
  ports: MonitorPorts;
  port: AutopilotPort;
  e: ExperimentPass;
  view: AutopilotView;
}

/** The bot's pulls with the round its own state gives them (the marker's for pulls older than it). */
function withRounds(view: AutopilotView): AutopilotView {
  const rounds = view.state.rounds;
  return { ...view, pulls: view.pulls.map((b) => ({ ...b, round: rounds[b.candidate] ?? b.round })) };
}

async function pilot(x: Pass): Promise<void> {
  const { e, view, port } = x;
  const s = view.state;
  const recorded = new Set(view.context.recorded.map((r) => r.name));
  const live = liveRuns(liveCandidates(e, s.stopped), view.pulls, recorded);
  const { runs, plan } = planFor(
    view.context,
    live,
    controlsOfState(s),
    s.concluded ? { reason: s.concluded.reason } : undefined,
    s.held,
    // the bot's candidates: its state's, and those its own pull requests carry (opened before the state)
    { ...Object.fromEntries(view.pulls.map((b) => [b.candidate, b.round])), ...s.rounds },
  );
  const off = !view.context.policy.enabled || view.context.refused.length > 0;
  holdQueue(e, view.pulls, s, off || plan.actions.some((a) => a.kind === 'conclude'));
  const known = new Set(runs.map((r) => r.name));
  const stopped: string[] = [];
  let concluded: PilotState['concluded'] = null;
  for (const a of plan.actions) {
    const done = await carryOut(x, a, known, stopped);
    if (done) concluded ??= { reason: done, winner: winnerOf(plan) };
  }
  const held = heldToKeep(e, s);
  if (concluded || stopped.length || held)
    await port.save(e.exp, (now) => ({
      ...now,
      ...(concluded && !now.concluded ? { concluded, concludeBy: null } : {}),
      stopped: [...new Set([...now.stopped, ...stopped])],
      held: { ...now.held, ...held },
    }));
  e.autopilot = { actions: plan.actions, waiting: plan.waiting };
  const final = concluded ?? s.concluded;
  const body = renderDashboard(e.id, runs, plan);
  await port.dashboard(e.exp, body, final ? final.reason : null);
}

/**
 * What act may submit: nothing queued of the experiment while paused (a person's control of it);
 * none of the bot's queued Requests once it concluded, is concluding, or its policy is off or refused.
 */
function holdQueue(e: ExperimentPass, pulls: readonly BotPull[], s: PilotState, ending: boolean): void {
  const bot = (p: CandidatePass) => pulls.some((b) => b.pr === p.c.pr && b.candidate === p.c.candidate);
  const off = ending || !!s.concluded || !!s.concludeBy;
  e.queue = {
    ...e.queue,
    order: e.queue.order.filter((p) => !(s.paused || (off && bot(p)))),
  };
}

function winnerOf(plan: PilotPlan): string | null {
  const best = plan.campaign.best;
  return best && best.name !== plan.campaign.baseline.name ? best.name : null;
}

/** One action; returns the conclusion's reason when it concludes. */
async function carryOut(
  x: Pass,
  a: PilotAction,
  known: ReadonlySet<string>,
  stopped: string[],
): Promise<string | null> {
  const { port, e, view } = x;
  switch (a.kind) {
    case 'open':
      return openRound(x, a, known);
    case 'submit': {
      const b = view.pulls.find((p) => p.pr === a.pr);
      if (b) await port.request(e.exp, b);
      return null;
    }
    case 'close':
      await port.close(e.exp, a.pr, closingText(a, evidenceOf(e, a.name)));
      return null;
    case 'stop':
      if (await stopRun(x, a)) stopped.push(a.name);
      return null;
    case 'conclude':
      return a.reason;
  }
}

/** Opens a round's proposals, their rounds written to the bot's state first; none left concludes. */
async function openRound(
  x: Pass,
  a: Extract<PilotAction, { kind: 'open' }>,
  known: ReadonlySet<string>,
): Promise<string | null> {
  const { port, e, view } = x;
  const exclude = [...new Set([...known, ...view.pulls.map((b) => b.candidate)])];
  const proposals = await port.propose(e.exp, a.count, exclude);
  // nothing untried fits the resources: the seed's "no free resources left" conclusion
  if (proposals.length === 0)
    return `no proposal left for round ${a.round}: nothing untried fits the resources`;
  await port.save(e.exp, (s) => ({
    ...s,
    rounds: {
      ...s.rounds,
      ...Object.fromEntries(proposals.map((p) => [p.candidate, s.rounds[p.candidate] ?? a.round])),
    },
  }));
  for (const p of proposals)
    await port.open(e.exp, {
      ...p,
      round: a.round,
      body: botPullBody(e.id, p.candidate, a.round, p.reasoning),
    });
  return null;
}

/**
 * A bot run a control (or the budget) stops: Outcome `stopped` now, its job cancelled by act. A
 * queued one has no job: it is held in the queue instead (holdQueue). True: stopped by a pause.
 */
async function stopRun(x: Pass, a: Extract<PilotAction, { kind: 'stop' }>): Promise<boolean> {
  const { e, ports } = x;
  const p = e.candidates.find((c) => c.c.pr === a.pr && c.c.candidate === a.name);
  if (!p?.job || !p.c.request || p.c.outcome) return false;
  const outcome: Outcome = {
    kind: 'stopped',
    at: new Date(ports.now() * 1000).toISOString(),
    jobId: p.job.jobId,
    evidence: [`stopped by the autopilot: ${a.reason}; Slurm job ${p.job.jobId} cancelled`],
  };
  await ports.lifecycle?.recordOutcome(p.c.pr, p.c.request.id, outcome);
  p.c = { ...p.c, outcome };
  if (p.decided) p.decided.stop ??= `autopilot: ${a.reason}`;
  return !!x.view.state.paused && !x.view.state.concludeBy;
}

/** The decision's evidence line of a candidate of this pass, for its closing comment. */
function evidenceOf(e: ExperimentPass, name: string): string | null {
  const p = e.candidates.find((c) => c.c.candidate === name);
  const d = p?.decided?.view?.observation.decision;
  return d ? `${d.state} against ${d.against}` : null;
}

/**
 * GPU-hours a run's Slurm allocation held: elapsed (start to end, or to the pass's now) × its GPUs,
 * in run-hours (× the time scale), whatever its metrics say. The GPUs are the judge's (candidateGpu).
 */
export function allocatedGpuHours(e: ExperimentPass, p: CandidatePass): number {
  const job = p.job;
  if (!job?.startTs) return 0;
  const until = job.endTs ?? e.clock.evalTs;
  const gpus = candidateGpu(e, p, false)?.gpus ?? 0;
  return (Math.max(0, until - job.startTs) * e.clock.S * gpus) / 3600;
}

/**
 * The allocations to keep in the bot's state: an ended run's once, a live one's every GPU-hour it
 * grows (so a job Slurm forgets, or a closed pull request's, still counts); null when none changed.
 */
function heldToKeep(e: ExperimentPass, s: PilotState): Record<string, number> | null {
  const out: Record<string, number> = {};
  for (const p of e.candidates) {
    const h = Math.round(allocatedGpuHours(e, p) * 1000) / 1000;
    const kept = s.held[p.c.runName] ?? 0;
    if (h > kept && (p.job?.endTs || h - kept >= 1)) out[p.c.runName] = h;
  }
  return Object.keys(out).length ? out : null;
}

/**
 * This pass's candidates with a Request, with their decisions, as the autopilot counts them; a bot
 * run a pause stopped (`stopped`) is waiting for its Request again, its proposal standing.
 */
export function liveCandidates(e: ExperimentPass, stoppedByPause: readonly string[] = []): LiveCandidate[] {
  return e.candidates
    .filter((p) => p.c.request && !p.acted?.left)
    .map((p) => ({
      ...liveCandidate(p),
      gpuHours: allocatedGpuHours(e, p),
      ...(p.c.outcome?.kind === 'stopped' && stoppedByPause.includes(p.c.candidate) ? { stopped: true } : {}),
    }));
}

function liveCandidate(p: CandidatePass): Omit<LiveCandidate, 'gpuHours'> {
  const phase = p.phase?.phase;
  const obs = p.decided?.view?.observation;
  const live = phase === 'queued' || phase === 'running';
  // its figure as its comment shows it (what its decision says), ranked as the record's rule does
  const view = p.decided?.view;
  const seconds = view ? viewFigure(view)?.value : undefined;
  return {
    name: p.c.candidate,
    pr: p.c.pr,
    live,
    outcome: live ? null : liveOutcome(obs?.decision?.state, true, !!obs?.failure),
    ...(seconds !== undefined ? { seconds } : {}),
    runName: p.c.runName,
  };
}

export type { BotPull };
