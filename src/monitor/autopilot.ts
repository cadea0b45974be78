// Stage `autopilot` (after decide, before act): for each experiment with an `autopilot` policy on the
// default branch, the core's plan (src/autopilot/core.ts planStep) over the record, this pass's
// decisions and the bot's own state (its controls), carried out through ports.autopilot: open the
// baseline's and each round's bot pull requests (the bot's commit kept in its state first, the
// branch the lock), make their Requests, close decided losers, conclude, and close the loop (label
// and, under merge: auto, merge the winner, then the final report). A pass that died while opening a
// round is resumed by the next: the pull requests and `topo/validate` checks it left out are made.
// While paused, concluded or ending it takes the bot's queued Requests out of the queue (every queued
// one while paused), so act submits none of them. A run a control stops gets the Outcome `stopped`
// here and act cancels its job; so does the round's reference job (issue 42). Whatever the bot cannot resolve (a take-over, a Request it cannot
// make, a name clash, a write GitHub refused, a skewed clock) is on the dashboard with what a person
// can do; the dashboard is written last, from the same plan.

import { referenceText } from '../analysis/reference.js';
import {
  type PilotAction,
  type PilotInput,
  type PilotPlan,
  type PilotRun,
  referenceServesPeople,
  type Stall,
  WINNER_LABEL,
} from '../autopilot/core.js';
import { actionText, renderDashboard } from '../autopilot/dashboard.js';
import { mergeReadiness } from '../autopilot/merge.js';
import {
  type BotPull,
  botPullBody,
  botPullTitle,
  closingText,
  type LiveCandidate,
  liveRuns,
} from '../autopilot/pulls.js';
import { campaignOutcome, heldFacts } from '../autopilot/runs.js';
import { controlsOfState, type PilotState } from '../autopilot/state.js';
import { abandonReason } from '../campaign/held.js';
import { dashboardHelp } from '../commands/help.js';
import { COMMANDS } from '../commands/registry.js';
import { inlineText } from '../github/user-text.js';
import { isReferenceRequest, type Outcome } from '../lifecycle/model.js';
import { viewFigure } from '../report/pr-comment.js';
import { isLive } from '../slurm/types.js';
import { experimentSettings } from '../topology/settings.js';
import { planFor } from '../usecases/autopilot.js';
import { clockSkew, prometheusNow, slurmLatest } from './clock.js';
import { candidateGpu } from './judge.js';
import type { AutopilotPort, AutopilotView, MonitorPorts, Proposed } from './ports.js';
import {
  type ActPlan,
  type AutopilotResult,
  actPlan,
  type CandidatePass,
  type ExperimentPass,
  eachExperiment,
  type PassState,
  type Stage,
  storeAutopilot,
} from './state.js';

export async function autopilot(state: PassState, ports: Parameters<Stage['run']>[1]): Promise<void> {
  const port = ports.autopilot;
  if (!port) return;
  await eachExperiment(state, 'autopilot', async (e) => {
    const r = await pilotOn(ports, port, e);
    if (r) storeAutopilot(e, r);
  });
}

/** The autopilot over one experiment: its result (what it did, the plan it leaves act, its errors); null without an autopilot block. */
export async function pilotOn(
  ports: MonitorPorts,
  port: AutopilotPort,
  e: ExperimentPass,
): Promise<AutopilotResult | null> {
  const view = await port.read(e.exp);
  if (!view) return null; // no autopilot block on the default branch
  const fresh = { stalls: [], saves: [], notes: [], errors: [], recorded: new Map() };
  const x: Pass = { ports, port, e, view: withState(view), plan: actPlan(e), ...fresh };
  const autopilot = await pilot(x);
  return { autopilot, plan: x.plan, errors: x.errors };
}

interface Pass {
  ports: MonitorPorts;
  port: AutopilotPort;
  e: ExperimentPass;
  view: AutopilotView;
  /** What only a person can resolve, found while carrying the plan out (beside the plan's own). */
  stalls: Stall[];
  /** Changes to the bot's state, saved together once the actions are carried out. */
  saves: Array<(s: PilotState) => PilotState>;
  /** Why something of the plan waits this pass (a required check still running). */
  notes: string[];
  /** suggest's answer for the round due this pass: the round opens the proposals its plan chose. */
  proposed?: Proposed;
  /** What act is to carry out, as the autopilot leaves it (its holds, its stops). */
  plan: ActPlan;
  /** The Outcomes it recorded this pass (its stops): the pass reads each run with its Outcome. */
  recorded: Map<CandidatePass, Outcome>;
  /** Its errors this pass (a refused write). */
  errors: string[];
}

/** The experiment with the Outcomes the autopilot recorded this pass on its candidates (a copy). */
function withRecorded(e: ExperimentPass, recorded: ReadonlyMap<CandidatePass, Outcome>): ExperimentPass {
  if (!recorded.size) return e;
  const outcomeOf = (p: CandidatePass) => recorded.get(p);
  return {
    ...e,
    candidates: e.candidates.map((p) => {
      const outcome = outcomeOf(p);
      return outcome ? { ...p, c: { ...p.c, outcome } } : p;
    }),
  };
}

/**
 * The bot's pulls as its own state knows them: their round (the marker's for pulls older than the
 * state), and taken over when the head is not the bot's commit (an amended commit included; the
 * commit trailer decides for pulls opened before the state kept it).
 */
function withState(view: AutopilotView): AutopilotView {
  const { rounds, heads } = view.state;
  return {
    ...view,
    pulls: view.pulls.map((b) => ({
      ...b,
      round: rounds[b.candidate] ?? b.round,
      takenOver: heads[b.candidate] ? heads[b.candidate] !== b.headSha : b.takenOver,
    })),
  };
}

async function pilot(x: Pass): Promise<AutopilotResult['autopilot']> {
  const { e, view } = x;
  const skew = await firstPassSkew(x);
  if (!skew) await resume(x);
  x.stalls.push(...nameClashes(view));
  const { runs, plan } = await planned(x, !!skew);
  const ending = plan.actions.some((a) => a.kind === 'conclude');
  const off = !!skew || ending || !view.context.policy.enabled || view.context.refused.length > 0;
  x.plan = holdQueue(x.plan, x.view, off, referenceServesPeople(runs));
  if (skew) {
    x.stalls.push({
      what: `the runner's clock cannot be trusted: ${inlineText(skew, 400)}`,
      fix: "fix the runner's time synchronisation (NTP, chrony); until then the autopilot opens, starts and charges nothing",
    });
  } else await carryAll(x, plan, runs);
  await saveAll(x);
  // the pass that closed the loop shows the closed loop, not the report it has just posted as next
  const closed = !!x.view.state.concluded?.reported && !view.state.concluded?.reported;
  const shown = closed ? planOf(withRecorded(e, x.recorded), x.view) : { runs, plan };
  await writeDashboard(x, shown.runs, shown.plan);
  return {
    actions: skew ? [] : plan.actions,
    waiting: skew ? 'held: the runner’s clock is off' : plan.waiting,
  };
}

/**
 * The pass's plan. A round due is planned again over suggest's answer: the next round, or the
 * conclusion, is then the campaign loop's own step (planRound), as the campaign bench runs it. A
 * suggest that fails is a stall; the round waits for the next pass.
 */
async function planned(x: Pass, held: boolean): Promise<{ runs: PilotRun[]; plan: PilotPlan }> {
  const first = planOf(x.e, x.view);
  const due = first.plan.due;
  if (!due || held) return first;
  const exclude = excluded(x.view, first.runs);
  const proposed = await guard(x, `ask topo suggest for round ${due.round}`, () =>
    x.port.propose(x.e.exp, due.count, exclude, due.round),
  );
  if (!proposed) {
    const actions = first.plan.actions.filter((a) => a.kind !== 'open' && a.kind !== 'conclude');
    return {
      ...first,
      plan: { ...first.plan, actions, waiting: `round ${due.round} waits for topo suggest` },
    };
  }
  x.proposed = proposed;
  const suggestion = {
    proposals: proposed.proposals.map((p) => ({ candidate: { name: p.candidate }, change: p.change ?? '' })),
    stop: proposed.stop,
    outlook: proposed.outlook,
  };
  return planOf(x.e, x.view, suggestion);
}

/** What no proposal may be named: every run known, every bot pull request's, people's open pull requests'. */
function excluded(view: AutopilotView, runs: readonly PilotRun[]): string[] {
  const others = othersOf(view).map((o) => o.candidate);
  return [...new Set([...runs.map((r) => r.name), ...view.pulls.map((b) => b.candidate), ...others])];
}

/** The plan over this pass's view: recorded runs, live ones, the bot's pulls and the rounds it keeps. */
function planOf(
  e: ExperimentPass,
  view: AutopilotView,
  suggestion?: PilotInput['suggestion'],
): { runs: PilotRun[]; plan: PilotPlan } {
  const s = view.state;
  const recorded = new Set(view.context.recorded.map((r) => r.name));
  const live = liveRuns(
    liveCandidates(e, s.stopped, s.reruns),
    view.pulls,
    recorded,
    unopened(view, recorded),
  );
  return planFor(
    view.context,
    live,
    controlsOfState(s),
    s.concluded ?? undefined,
    heldWithSlurm(e, s),
    // the bot's candidates: its state's, and those its own pull requests carry (opened before the state)
    { ...Object.fromEntries(view.pulls.map((b) => [b.candidate, b.round])), ...s.rounds },
    {
      predicted: s.predicted,
      reruns: s.reruns,
      referenceJobs: liveReferences(e),
      ...(suggestion ? { suggestion } : {}),
    },
  );
}

/** The round's reference jobs of this pass that are live (a job queued or running, no Outcome yet). */
function liveReferences(e: ExperimentPass): Array<{ name: string; pr: number }> {
  return e.candidates
    .filter(
      (p) =>
        isReferenceRequest(p.c) &&
        !!p.c.request &&
        !p.c.outcome &&
        !p.acted?.left &&
        !!p.job &&
        isLive(p.job.status),
    )
    .map((p) => ({ name: p.c.candidate, pr: p.c.pr }));
}

/** People's open pull requests (never a bot pull request) that change a candidate of the experiment. */
function othersOf(view: AutopilotView): Array<{ pr: number; candidate: string }> {
  const bots = new Set(view.pulls.map((b) => b.pr));
  return (view.others ?? []).filter((o) => !bots.has(o.pr));
}

/**
 * A bot pull request whose candidate a person's open pull request changes too (opened after the
 * bot's: the bot never proposes a name a person's open pull request uses). Whichever is merged or
 * recorded first takes the name in the record.
 */
function nameClashes(view: AutopilotView): Stall[] {
  const others = othersOf(view);
  return view.pulls
    .filter((b) => b.state === 'open' && !b.takenOver)
    .flatMap((b) =>
      others
        .filter((o) => o.candidate === b.candidate)
        .map((o) => ({
          pr: b.pr,
          what: `\`${b.candidate}\` is also the candidate of #${o.pr}, a person's pull request: the two would record one name`,
          fix: `rename the candidate of #${o.pr} (its file and its \`name\`), or close one of them`,
        })),
    );
}

/** Candidates the bot committed (its state) whose pull request is not there: a pass died opening them. */
function unopened(
  view: AutopilotView,
  recorded: ReadonlySet<string>,
): Array<{ candidate: string; round: number }> {
  const s = view.state;
  return Object.keys(s.heads)
    .filter(
      (c) => !view.pulls.some((b) => b.candidate === c) && !recorded.has(c) && s.rounds[c] !== undefined,
    )
    .map((c) => ({ candidate: c, round: s.rounds[c] as number }));
}

/**
 * What a pass that died while opening a round left out, made now: the pull request of each candidate
 * the bot committed (its branch first, at the commit its state keeps), and the `topo/validate` check
 * of each open bot pull request whose head has none from the bot yet.
 */
async function resume(x: Pass): Promise<void> {
  const { e, port, view } = x;
  const recorded = new Set(view.context.recorded.map((r) => r.name));
  for (const u of unopened(view, recorded)) {
    const sha = view.state.heads[u.candidate] as string;
    const opened = await guard(x, `open the pull request of \`${u.candidate}\``, () =>
      port.open(e.exp, u.candidate, sha),
    );
    if (opened)
      view.pulls.push({
        pr: opened.pr,
        candidate: u.candidate,
        round: u.round,
        state: 'open',
        headSha: sha,
        takenOver: false,
      });
  }
  for (const b of view.pulls) {
    const mine = view.state.heads[b.candidate];
    if (b.state !== 'open' || b.takenOver || !mine || view.state.validated[b.candidate] === b.headSha)
      continue;
    await validated(x, b.pr, b.candidate, b.headSha);
  }
}

/** Posts a bot pull request's `topo/validate` check; kept in the state once posted. */
async function validated(x: Pass, pr: number, candidate: string, sha: string): Promise<void> {
  const done = await guard(x, `post \`topo/validate\` on #${pr}`, async () => {
    await x.port.validate(x.e.exp, pr);
    return true;
  });
  if (done) x.saves.push((s) => ({ ...s, validated: { ...s.validated, [candidate]: sha } }));
}

/**
 * On a pass before any run was counted, the runner's clock is checked here (observe checks it once a
 * job started): off Prometheus's now, or behind a time Slurm printed, and nothing is opened, started
 * or charged; the dashboard says so.
 */
async function firstPassSkew(x: Pass): Promise<string | null> {
  const { e, ports } = x;
  if (e.clock.skew) return e.clock.skew;
  if (e.clock.source === 'prometheus') return null;
  const prometheus = await prometheusNow(e.exp.prometheus ?? ports.prometheus);
  return clockSkew(ports.now(), { prometheus, slurm: slurmLatest(e.jobs) });
}

/**
 * What act may submit: nothing queued of the experiment while paused (a person's control of it);
 * none of the bot's queued Requests once it concluded, is concluding, its policy is off or refused,
 * or the clock is off. The bot's Request is the one it made (its login) for one of its pull requests:
 * a writer's `/topo submit` on a bot pull request is the writer's, and runs after a conclusion. The
 * round's reference Request (made by the bot on a candidate's pull request, a run of the best) is
 * held with them, and none is made, unless a person's run still goes on (`forPeople`: it is decided
 * against it); while paused, never (a resumed round asks for one again).
 */
function holdQueue(plan: ActPlan, view: AutopilotView, ending: boolean, forPeople: boolean): ActPlan {
  const s = view.state;
  const bot = (p: CandidatePass) =>
    p.c.request?.login === view.botLogin &&
    view.pulls.some((b) => b.pr === p.c.pr && b.candidate === p.c.candidate);
  const off = ending || !!s.concluded || !!s.concludeBy;
  const holdReference = !!s.paused || (off && !forPeople);
  const held = (p: CandidatePass) =>
    !!s.paused || (off && bot(p)) || (holdReference && isReferenceRequest(p.c));
  return {
    ...plan,
    queue: { ...plan.queue, order: plan.queue.order.filter((p) => !held(p)) },
    request: holdReference ? null : plan.request,
  };
}

function winnerOf(plan: PilotPlan): string | null {
  const best = plan.campaign.best;
  return best && best.name !== plan.campaign.baseline.name ? best.name : null;
}

/** The plan's actions in order, each guarded: a refused write is a stall on the dashboard, and the rest go on. */
async function carryAll(x: Pass, plan: PilotPlan, runs: readonly PilotRun[]): Promise<void> {
  const stopped: string[] = [];
  for (const a of plan.actions) {
    const done = await guard(x, actionText(a), () => carryOut(x, a, runs, stopped));
    if (typeof done === 'string') {
      const concluded = { reason: done, winner: winnerOf(plan) };
      x.saves.push((s) => (s.concluded ? s : { ...s, concluded, concludeBy: null }));
    }
  }
  if (stopped.length) x.saves.push((s) => ({ ...s, stopped: [...new Set([...s.stopped, ...stopped])] }));
  const held = heldToKeep(x.e, x.view.state);
  if (held) x.saves.push((s) => ({ ...s, held: { ...s.held, ...held } }));
}

/**
 * Runs one write; one GitHub refuses (403: the token lacks a permission; 404, 405, 422: what it
 * names) or that fails otherwise is a stall on the dashboard and an error of the pass, never only a
 * log line. Null when it failed.
 */
async function guard<T>(x: Pass, what: string, run: () => Promise<T>): Promise<T | null> {
  try {
    return await run();
  } catch (error) {
    const status = (error as { status?: number }).status;
    const message = inlineText((error as Error).message, 300);
    x.errors.push(`${x.e.id}: autopilot could not ${what}: ${(error as Error).message}`);
    x.stalls.push({
      what: `GitHub refused to ${what}${status ? ` (HTTP ${status}: ${message})` : ` (${message})`}`,
      fix:
        status === 403 || status === 401
          ? "give the monitor job's token what the write needs (`contents`, `pull-requests`, `issues` and `checks: write`; `topo doctor` checks them) and check the branch protection rules; the next pass tries again"
          : 'the next pass tries again; if it keeps failing, the monitor run’s log has the whole error',
    });
    return null;
  }
}

/** One action; returns the conclusion's reason when it concludes. */
async function carryOut(
  x: Pass,
  a: PilotAction,
  runs: readonly PilotRun[],
  stopped: string[],
): Promise<string | null> {
  const { port, e, view } = x;
  switch (a.kind) {
    case 'open':
      return openRound(x, a, runs);
    case 'submit': {
      const b = view.pulls.find((p) => p.pr === a.pr);
      const refused = b ? await port.request(e.exp, b) : null;
      if (refused)
        x.stalls.push({ pr: a.pr, what: `no Request for \`${a.name}\`: ${refused.why}`, fix: refused.fix });
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
    case 'label':
      await port.label(e.exp, a.pr, WINNER_LABEL);
      return null;
    case 'merge':
      return mergeWhenReady(x, a);
    case 'report':
      await report(x);
      return null;
  }
}

/** The final report on the dashboard: the loop is closed (the dashboard closes with it). */
async function report(x: Pass): Promise<void> {
  await x.port.report(x.e.exp);
  x.saves.push((s) => (s.concluded ? { ...s, concluded: { ...s.concluded, reported: true } } : s));
}

/**
 * Merges the measured baseline, a round's winner or the concluded winner once each required check
 * passed on its head (what branch protection asks), and records it; a failed check is a stall, one
 * still running a wait. The concluded winner merged, the final report follows in the same pass.
 */
async function mergeWhenReady(x: Pass, a: Extract<PilotAction, { kind: 'merge' }>): Promise<null> {
  const { port, e, view } = x;
  const pull = view.pulls.find((p) => p.pr === a.pr);
  if (!pull) return null;
  const ready = mergeReadiness(view.context.policy.requiredChecks, await port.checks(e.exp, pull.headSha));
  if (ready.failed.length) {
    x.stalls.push({
      pr: a.pr,
      what: `\`${a.name}\` is not merged: its required check(s) ${ready.failed.map((c) => `\`${c}\``).join(', ')} failed on its head`,
      fix: `merge #${a.pr} by hand if you accept it anyway, or close it; autopilot.required_checks lists what it waits for`,
    });
    return null;
  }
  if (ready.pending.length) {
    x.notes.push(`#${a.pr} waits for its required check(s) ${ready.pending.join(', ')}`);
    return null;
  }
  await port.merge(e.exp, a.pr, pull.headSha);
  // the concluded experiment's winner: the loop closes in this pass (a round's winner opens the next round)
  if (a.why === 'winner' && view.state.concluded) await report(x);
  return null;
}

/**
 * Opens a round's proposals (round 0: the baseline's): each one's bot commit first, kept in the bot's
 * state with its round before any branch points at it (so a pass that dies after is resumed by the
 * next), then its branch and pull request, then its `topo/validate` check. None left concludes.
 */
async function openRound(
  x: Pass,
  a: Extract<PilotAction, { kind: 'open' }>,
  runs: readonly PilotRun[],
): Promise<string | null> {
  const { port, e, view } = x;
  const reruns = a.round > 0 ? await rerunHeld(x, a, runs) : 0;
  const chosen = a.proposals;
  const proposals =
    a.round > 0 && chosen && x.proposed
      ? x.proposed.proposals.filter((p) => chosen.includes(p.candidate))
      : (await port.propose(e.exp, a.count, excluded(view, runs), a.round)).proposals;
  // nothing untried fits the resources: the seed's "no free resources left" conclusion
  if (proposals.length === 0)
    return a.round === 0 || reruns > 0
      ? null
      : `no proposal left for round ${a.round}: nothing untried fits the resources`;
  const commits: Record<string, string> = {};
  for (const p of proposals) {
    const title = botPullTitle(e.id, p.candidate, a.round);
    const body = botPullBody(e.id, p.candidate, a.round, p.reasoning);
    commits[p.candidate] = await port.commit(e.exp, { ...p, round: a.round, title, body });
  }
  // the first pass to keep a candidate's commit wins: a pass at the same time opens that one too
  const key = String(a.round);
  const saved = await port.save(e.exp, (s) => ({
    ...s,
    rounds: {
      ...s.rounds,
      ...Object.fromEntries(proposals.map((p) => [p.candidate, s.rounds[p.candidate] ?? a.round])),
    },
    heads: { ...commits, ...s.heads },
    predicted:
      a.predicted && !(key in s.predicted) ? { ...s.predicted, [key]: a.predicted.best } : s.predicted,
  }));
  for (const p of proposals) {
    const sha = saved.heads[p.candidate] ?? (commits[p.candidate] as string);
    const opened = await guard(x, `open the pull request of \`${p.candidate}\``, () =>
      port.open(e.exp, p.candidate, sha),
    );
    if (opened) await validated(x, opened.pr, p.candidate, sha);
  }
  return null;
}

/**
 * The round's reruns (planRound's: held candidates pointing at a gain): each moves to this round
 * with its next attempt and the run name of the job it replaces, kept in the bot's state (the first
 * pass to move it wins). Its pull request stays open; the next pass reads it waiting for its Request
 * (withReruns) and makes it (submit), so its new job runs beside the round's reference job and its
 * allocation counts by its own run name. How many it moved or had moved.
 */
async function rerunHeld(
  x: Pass,
  a: Extract<PilotAction, { kind: 'open' }>,
  runs: readonly PilotRun[],
): Promise<number> {
  const held = runs.filter(
    (r) => a.reruns?.includes(r.name) && r.origin === 'bot' && r.pull === 'open' && !r.takenOver,
  );
  if (held.length === 0) return 0;
  await x.port.save(x.e.exp, (s) => {
    const moved = held.filter((r) => (s.rounds[r.name] ?? 0) < a.round);
    return {
      ...s,
      rounds: { ...s.rounds, ...Object.fromEntries(moved.map((r) => [r.name, a.round])) },
      reruns: {
        ...s.reruns,
        ...Object.fromEntries(
          moved.map((r) => [r.name, { attempt: (r.attempt ?? 1) + 1, after: r.runName ?? null }]),
        ),
      },
    };
  });
  return held.length;
}

/**
 * A bot run a control (or the budget) stops: Outcome `stopped` now, its job cancelled by act. A
 * queued one has no job: it is held in the queue instead (holdQueue). True: stopped by a pause.
 */
async function stopRun(x: Pass, a: Extract<PilotAction, { kind: 'stop' }>): Promise<boolean> {
  const { e, ports } = x;
  const p = e.candidates.find(
    (c) => c.c.pr === a.pr && c.c.candidate === a.name && isReferenceRequest(c.c) === !!a.reference,
  );
  if (!p?.job || !p.c.request || p.c.outcome || x.recorded.has(p)) return false;
  const outcome: Outcome = {
    kind: 'stopped',
    at: new Date(ports.now() * 1000).toISOString(),
    jobId: p.job.jobId,
    evidence: [`stopped by the autopilot: ${a.reason}; Slurm job ${p.job.jobId} cancelled`],
  };
  await ports.lifecycle?.recordOutcome(p.c.pr, p.c.request.id, outcome);
  x.recorded.set(p, outcome);
  const stops = new Map(x.plan.stops);
  if (p.decided && !stops.has(p)) stops.set(p, `autopilot: ${a.reason}`);
  x.plan = { ...x.plan, stops, recorded: new Set([...x.plan.recorded, p]) };
  // a reference job is not asked for again by its name: decide makes a new one when the round needs it
  return !a.reference && !a.abandon && !!x.view.state.paused && !x.view.state.concludeBy;
}

/** The state changes of this pass, in one compare-and-swap (applied again to a state another pass wrote). */
async function saveAll(x: Pass): Promise<void> {
  if (x.saves.length === 0) return;
  const written = await x.port.save(x.e.exp, (s) => x.saves.reduce((acc, f) => f(acc), s));
  x.view = { ...x.view, state: written };
}

/** The dashboard, from the plan and what this pass found; closed once the loop is closed (the final report posted). */
async function writeDashboard(x: Pass, runs: readonly PilotRun[], plan: PilotPlan): Promise<void> {
  const s = x.view.state;
  const body = dashboardText(x.e.id, runs, plan, {
    stalls: x.stalls,
    notes: x.notes,
    state: s,
    accounting: x.e.accounting,
  });
  await guard(x, 'write the dashboard', () => x.port.dashboard(x.e.exp, body, !!s.concluded?.reported));
}

/** The dashboard's text: the plan, the pass's stalls and waits, and the conclusion once there is one. */
function dashboardText(
  id: string,
  runs: readonly PilotRun[],
  plan: PilotPlan,
  pass: {
    stalls: readonly Stall[];
    notes: readonly string[];
    state: PilotState;
    accounting?: ExperimentPass['accounting'];
  },
): string {
  const s = pass.state;
  const waiting = [plan.waiting, ...pass.notes].filter(Boolean).join('; ') || null;
  const body = renderDashboard(id, runs, { ...plan, waiting }, dashboardHelp(COMMANDS), pass.stalls);
  const lowerBound =
    pass.accounting === 'off'
      ? "\n\nWithout Slurm accounting a requeued job's earlier allocations are not counted (squeue prints only its current one): the GPU-hours spent are a lower bound."
      : '';
  const concluded = s.concluded
    ? `\n\n**Concluded:** ${inlineText(s.concluded.reason, 300)}; winner: ${s.concluded.winner ? `\`${s.concluded.winner}\`` : 'none, the baseline stays'}.${s.concluded.reported ? ' The final report is below.' : ''}`
    : '';
  return `${body}${lowerBound}${concluded}`;
}

/**
 * What the dashboard shows of an experiment as this pass reads it (its decisions, the bot's state, its
 * pulls), writing nothing: `topo autopilot status|plan` read the same model the stage writes.
 */
export function autopilotDashboard(
  e: ExperimentPass,
  read: AutopilotView,
): { runs: PilotRun[]; plan: PilotPlan; text: string } {
  const view = withState(read);
  const { runs, plan } = planOf(e, view);
  const text = dashboardText(e.id, runs, plan, {
    stalls: nameClashes(view),
    notes: [],
    state: view.state,
    accounting: e.accounting,
  });
  return { runs, plan, text };
}

/** The decision's evidence line of a candidate of this pass, for its closing comment. */
function evidenceOf(e: ExperimentPass, name: string): string | null {
  const p = e.candidates.find((c) => c.c.candidate === name);
  const d = p?.decided?.view?.observation.decision;
  return d ? `${d.state} against ${referenceText(d.reference)}` : null;
}

/**
 * GPU-hours a run's Slurm allocations held: what Slurm says they held (elapsed × GPUs over every
 * allocation, a requeue's earlier ones included), in run-hours (× the time scale), whatever its
 * metrics say; its GPUs the judge's (candidateGpu) where Slurm does not print them. Never a forecast:
 * nothing for a job that waits, nothing for the rest of a running one's time limit.
 */
export function allocatedGpuHours(e: ExperimentPass, p: CandidatePass): number {
  const held = p.job?.held;
  if (!held) return 0;
  const gpuSeconds =
    held.gpuMinutes !== null ? held.gpuMinutes * 60 : held.seconds * (candidateGpu(e, p, false)?.gpus ?? 0);
  return (Math.max(0, gpuSeconds) * e.clock.S) / 3600;
}

/**
 * Every allocation Slurm lists for the experiment, by run name (GPU-hours held, and whether its job
 * ended): the candidates' (allocatedGpuHours), and every other job of the tool's the listing holds
 * (an earlier run of a candidate, a closed pull request's; only jobs Slurm's record gives the tool,
 * src/lifecycle/jobs.ts isOwnedRun). With accounting that is every run of sacct's window (72 hours),
 * so a lost state branch is rebuilt from it; without, only what the controller still holds.
 */
function allocationsInSlurm(e: ExperimentPass): Map<string, { hours: number; ended: boolean }> {
  const out = new Map<string, { hours: number; ended: boolean }>();
  const put = (name: string, hours: number, ended: boolean) => {
    const h = Math.round(hours * 1000) / 1000;
    if (h > (out.get(name)?.hours ?? 0)) out.set(name, { hours: h, ended });
  };
  for (const j of e.jobs)
    if (j.held?.gpuMinutes != null)
      put(j.name, (Math.max(0, j.held.gpuMinutes) * 60 * e.clock.S) / 3600, !!j.endTs);
  for (const p of e.candidates) put(p.c.runName, allocatedGpuHours(e, p), !!p.job?.endTs);
  return out;
}

/** The bot's kept allocations with what Slurm lists now (the larger of the two per run): what the budget reads. */
function heldWithSlurm(e: ExperimentPass, s: PilotState): Record<string, number> {
  const out = { ...s.held };
  for (const [name, { hours }] of allocationsInSlurm(e)) if (hours > (out[name] ?? 0)) out[name] = hours;
  return out;
}

/**
 * The allocations to keep in the bot's state: an ended run's once, a live one's every GPU-hour it
 * grows (so a job Slurm forgets, or a closed pull request's, still counts, and a state branch lost
 * is rebuilt from Slurm's listing); null when none changed.
 */
function heldToKeep(e: ExperimentPass, s: PilotState): Record<string, number> | null {
  const out: Record<string, number> = {};
  for (const [name, { hours, ended }] of allocationsInSlurm(e)) {
    const kept = s.held[name] ?? 0;
    if (hours > kept && (ended || hours - kept >= 1)) out[name] = hours;
  }
  return Object.keys(out).length ? out : null;
}

/**
 * This pass's candidates with a Request, with their decisions, as the autopilot counts them; a bot
 * run a pause stopped (`stopped`) is waiting for its Request again, its proposal standing. A round's
 * reference job is none of them: it runs the current best (already a run of the record) on a candidate's
 * pull request, so read as a run it would stand for the best as a person's undecided candidate; its
 * allocation counts in the budget through the bot's state (heldToKeep).
 */
export function liveCandidates(
  e: ExperimentPass,
  stoppedByPause: readonly string[] = [],
  reruns: PilotState['reruns'] = {},
): LiveCandidate[] {
  return e.candidates
    .filter((p) => p.c.request && !p.acted?.left && !isReferenceRequest(p.c))
    .map((p) => {
      const abandon = abandonOf(e, p, reruns);
      return {
        ...liveCandidate(e, p),
        gpuHours: allocatedGpuHours(e, p),
        ...(p.c.outcome?.kind === 'stopped' && stoppedByPause.includes(p.c.candidate)
          ? { stopped: true }
          : {}),
        ...(abandon ? { abandon } : {}),
      };
    });
}

/**
 * Why the campaign abandons this running candidate's job now (src/campaign/held.ts abandonReason, the
 * campaign loop's rule), or null: its decision against the round's reference job, the detector's
 * states of both jobs, and its attempt (a rerun is not abandoned on the guard's slope alone). How
 * long the hold has lasted is not kept across passes: the 60-minute limit is left to the horizon.
 */
function abandonOf(e: ExperimentPass, p: CandidatePass, reruns: PilotState['reruns']): string | null {
  const obs = p.decided?.view?.observation;
  if (p.phase?.phase !== 'running' || !obs?.decision) return null;
  const ref = e.referenceJob?.job ?? null;
  const rerun = reruns[p.c.candidate];
  const attempt = rerun && (p.c.runName ?? null) !== rerun.after ? rerun.attempt : 1;
  return abandonReason({
    decision: obs.decision,
    candidate: obs.verdict,
    reference: ref?.decided?.view?.observation.verdict ?? null,
    referenceEnded: !!ref?.c.outcome,
    heldMinutes: 0,
    minImprovement: experimentSettings(e.exp.experiment).minImprovement,
    attempt,
  });
}

function liveCandidate(e: ExperimentPass, p: CandidatePass): Omit<LiveCandidate, 'gpuHours'> {
  const phase = p.phase?.phase;
  const obs = p.decided?.view?.observation;
  const live = phase === 'queued' || phase === 'running';
  // its figure as its comment shows it (what its decision says), ranked as the record's rule does
  const view = p.decided?.view;
  const seconds = view ? viewFigure(view)?.value : undefined;
  const outcome = live
    ? null
    : campaignOutcome({ decision: obs?.decision ?? null, failed: !!obs?.failure, ended: true });
  const settings = experimentSettings(e.exp.experiment);
  // held or closed at the horizon: no tried topology yet, as the campaign loop records it
  const held =
    outcome === null || outcome === 'failed'
      ? {}
      : heldFacts(obs?.decision ?? null, {
          minImprovement: settings.minImprovement,
          horizonMinutes: settings.maxDecisionMinutes,
          drifting: obs?.verdict.state === 'drifting',
        });
  return {
    name: p.c.candidate,
    pr: p.c.pr,
    live,
    outcome,
    ...(seconds !== undefined ? { seconds } : {}),
    runName: p.c.runName,
    ...held,
  };
}

export type { BotPull };
