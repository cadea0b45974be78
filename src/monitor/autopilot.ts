// Stage `autopilot` (after decide, before act): for each experiment with an `autopilot` policy on the
// default branch, the core's plan (src/autopilot/core.ts planStep) over the record and this pass's
// decisions, carried out through ports.autopilot: open a round's bot pull requests (the branch is
// the lock), make their Requests, close decided losers, and conclude; stopping a live run is left
// to act (its `decided.stop`), so the job is cancelled and recorded like any other stop. The
// dashboard issue is written last, from the same plan. Without ports.autopilot it does nothing.
import type { PilotAction } from '../autopilot/core.js';
import { renderDashboard } from '../autopilot/dashboard.js';
import { gpusPerRun } from '../autopilot/policy.js';
import {
  type BotPull,
  botPullBody,
  closingText,
  type LiveCandidate,
  liveOutcome,
  liveRuns,
} from '../autopilot/pulls.js';
import { planFor } from '../usecases/autopilot.js';
import type { AutopilotPort, AutopilotView } from './ports.js';
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
    const recorded = new Set(view.context.recorded.map((r) => r.name));
    const live = liveRuns(liveCandidates(e), view.pulls, recorded);
    const { runs, plan } = planFor(view.context, live, view.controls, view.concluded);
    let concluded: string | null = null;
    for (const a of plan.actions)
      concluded ??= await carryOut(port, e, view, a, new Set(runs.map((r) => r.name)));
    e.autopilot = { actions: plan.actions, waiting: plan.waiting };
    await port.dashboard(e.exp, renderDashboard(e.id, runs, plan), concluded);
  });
}

async function carryOut(
  port: AutopilotPort,
  e: ExperimentPass,
  view: AutopilotView,
  a: PilotAction,
  known: ReadonlySet<string>,
): Promise<string | null> {
  const pull = (pr: number) => view.pulls.find((b) => b.pr === pr);
  switch (a.kind) {
    case 'open': {
      const exclude = [...new Set([...known, ...view.pulls.map((b) => b.candidate)])];
      const proposals = await port.propose(e.exp, a.count, exclude);
      // nothing untried fits the resources: the seed's "no free resources left" conclusion
      if (proposals.length === 0)
        return `no proposal left for round ${a.round}: nothing untried fits the resources`;
      for (const p of proposals)
        await port.open(e.exp, {
          ...p,
          round: a.round,
          body: botPullBody(e.id, p.candidate, a.round, p.reasoning),
        });
      return null;
    }
    case 'submit': {
      const b = pull(a.pr);
      if (b) await port.request(e.exp, b);
      return null;
    }
    case 'close':
      await port.close(e.exp, a.pr, closingText(a, evidenceOf(e, a.name)));
      return null;
    case 'stop': {
      const p = e.candidates.find((c) => c.c.pr === a.pr && c.c.candidate === a.name);
      if (p?.decided) p.decided.stop ??= `autopilot: ${a.reason}`;
      return null;
    }
    case 'conclude':
      return a.reason;
  }
}

/** The decision's evidence line of a candidate of this pass, for its closing comment. */
function evidenceOf(e: ExperimentPass, name: string): string | null {
  const p = e.candidates.find((c) => c.c.candidate === name);
  const d = p?.decided?.view?.observation.decision;
  return d ? `${d.state} against ${d.against}` : null;
}

/** This pass's candidates with a Request, with their decisions, as the autopilot counts them. */
export function liveCandidates(e: ExperimentPass): LiveCandidate[] {
  const gpus = e.exp.gpusPerNode ?? gpusPerRun(e.exp.experiment);
  return e.candidates.filter((p) => p.c.request && !p.acted?.left).map((p) => liveCandidate(p, gpus));
}

function liveCandidate(p: CandidatePass, gpus: number): LiveCandidate {
  const phase = p.phase?.phase;
  const obs = p.decided?.view?.observation;
  const live = phase === 'queued' || phase === 'running';
  const seconds = obs?.verdict.projected_full_run?.value ?? obs?.verdict.value?.value ?? undefined;
  return {
    name: p.c.candidate,
    pr: p.c.pr,
    live,
    outcome: live ? null : liveOutcome(obs?.decision?.state, true, !!obs?.failure),
    ...(seconds !== undefined ? { seconds } : {}),
    gpuHours: (gpus * (obs?.verdict.minutes_of_data ?? 0)) / 60,
  };
}

export type { BotPull };
