// The autopilot's pure core, one reconcile step (controller-runtime's Reconcile, Optuna's
// ask-and-tell): given the experiment's policy, its runs (the record's and the live ones, each with
// its decision) and the dashboard's controls, what the bot does next. No I/O, no clock: the monitor
// stage (./stage.ts), `topo autopilot plan` and the demo all call `planStep` and carry out its actions.
import { decidedRun, planRound, type Suggestion } from '../campaign/loop.js';
import {
  type CampaignPolicy,
  type CampaignState,
  canStart,
  closeRound,
  nextStep,
  type Round,
  type RoundRun,
  type RunOutcome,
  spentGpuHours,
  startCampaign,
} from '../campaign/rounds.js';
import { type AutopilotPolicy, campaignPolicy } from './policy.js';

/** Where a bot pull request lives: one branch per candidate, its key for exactly-once. */
export function botBranch(experimentId: string, candidate: string): string {
  return `topo/autopilot/${experimentId}/${candidate}`;
}

/** The candidate a bot branch stands for, or null for any other branch (or another experiment). */
export function candidateOfBranch(experimentId: string, branch: string): string | null {
  const prefix = `topo/autopilot/${experimentId}/`;
  if (!branch.startsWith(prefix)) return null;
  const rest = branch.slice(prefix.length);
  return /^[a-z0-9][a-z0-9_.-]*$/.test(rest) ? rest : null;
}

/** One run of the experiment as the autopilot sees it. */
export interface PilotRun {
  name: string;
  /** 0: the baseline; a bot run's round from its pull request; a person's candidate: null. */
  round: number | null;
  origin: 'bot' | 'person';
  pr?: number;
  pull: 'open' | 'closed' | 'merged' | 'none';
  /** A person pushed to the bot's branch: the branch is theirs now, the autopilot leaves it. */
  takenOver?: boolean;
  /** Its Request: none yet, live (queued or running), or ended with an Outcome. */
  request: 'none' | 'live' | 'ended';
  /** Its decision against the reference, once its Outcome is in (null before). */
  outcome: RunOutcome | null;
  /** Its decided seconds per rollout (projected full run); absent for a failed run. */
  seconds?: number;
  /** GPU-hours its Slurm allocation has held so far (elapsed × GPUs; all of them once ended). */
  gpuHours: number;
  /**
   * Why its decision was not reached (src/campaign/held.ts runOutcome: no decision, a guard held it,
   * or it was closed at the horizon): no tried topology yet (an `undecided` run the forecast settled
   * within the decisions' noise is not held: it was tried).
   */
  held?: string;
  /** Its decision is to be re-judged beside a reference that runs: planRound reruns it (RoundRun.rerun). */
  rerun?: boolean;
  /**
   * Held so (a guard's hold below −min_improvement), a rerun of it settles `better`
   * (src/campaign/held.ts heldAgain): ./runs.ts withReruns applies it to a rerun.
   */
  settlesOnRerun?: boolean;
  /** Its job of the candidate: 1 the first, 2 a rerun after a held decision. */
  attempt?: number;
  /** Its last relative change against the reference (negative: faster), decided or not. */
  change?: number;
  /** The run name of its latest run (its GPU-hours are kept by it in the bot's state). */
  runName?: string;
  /**
   * Live, and its job is abandoned now to be rerun beside a reference that runs (src/campaign/held.ts
   * abandonReason: the detector marks a job drifting, or the full-run guard reads a drift, while the
   * guard holds an interval that settles better at equal run age), as the campaign loop abandons it.
   */
  abandon?: string;
  /** A writer approved its pull request's head in a review (`submit: approval` starts it then). */
  approved?: boolean;
  /** Its pull request carries the winner's label (WINNER_LABEL). */
  labelled?: boolean;
  /** The record on the default branch holds it. */
  recorded?: boolean;
}

/** The label the conclusion puts on the winner's pull request. */
export const WINNER_LABEL = 'autopilot:winner';

/**
 * A state the bot cannot resolve by itself, shown on the dashboard with what a person can do: the
 * autopilot never stalls silently (a log line alone is not a place a person looks).
 */
export interface Stall {
  pr?: number;
  /** What happened, one line. */
  what: string;
  /** What a person can do about it. */
  fix: string;
}

/** The controls, from the bot's own state (./state.ts controlsOfState). */
export interface Controls {
  paused: boolean;
  /** /topo pause --now: running bot runs stop too. */
  stopLive: boolean;
  /** /topo conclude by this login. */
  concludedBy?: string;
}

export interface PilotInput {
  experimentId: string;
  policy: AutopilotPolicy;
  runs: PilotRun[];
  controls: Controls;
  /** One run's expected GPU-hours (./policy.ts runCost). */
  runGpuHours: number;
  /**
   * The experiment concluded already (the bot's state, or the record's final report): what is left
   * is to close the loop (label and, under `merge: auto`, merge the winner, then post the final
   * report); nothing once `reported`.
   */
  concluded?: { reason: string; winner?: string | null; reported?: boolean };
  /** GPU-hours held by runs not among `runs` (a closed pull request's, a candidate's earlier runs). */
  spentElsewhere?: number;
  /** The policy breaks validate's rules (merged anyway): nothing starts, the dashboard says why. */
  refused?: string[];
  /**
   * suggest's answer for the round that is due (PilotPlan.due): its proposals (by name and change),
   * its stop advice and the calibrated model's outlook. With it the next round, or the conclusion, is
   * the campaign loop's own planRound (src/campaign/loop.ts), the step the campaign bench measures;
   * without it (`topo autopilot status`) the seed's stop rule alone.
   */
  suggestion?: Suggestion;
  /**
   * The proposal the model predicted best in each round it had an outlook, by round (null: that
   * round did not propose it), from the bot's state: the stop rule counts a dry round only when it
   * tried what the model predicted best, as the campaign's does.
   */
  predicted?: Readonly<Record<string, string | null>>;
  /**
   * Each round's reference job beside its candidates, by round (Round.reference: the best as it
   * measured it, its GPU-hours), as the campaign loop records it; absent: the best as its run reads.
   */
  references?: Readonly<Record<string, NonNullable<Round['reference']>>>;
  /**
   * The round's reference jobs that are live now (queued or running: a run of the best the monitor
   * starts beside the candidates, src/monitor/reference-job.ts), by the best's name and the pull
   * request it runs on. They are no runs of the campaign, but they hold GPUs for it: a pause with
   * `--now` and the ending stop them with the bot's runs (issue 42).
   */
  referenceJobs?: ReadonlyArray<{ name: string; pr: number }>;
}

export type PilotAction =
  | { kind: 'submit'; name: string; pr: number }
  /**
   * Round 0 is the baseline's own bot pull request (an experiment with no baseline run yet). With
   * the suggestion: `proposals`, the names planRound chose, what the model predicted best, and
   * `reruns`, the last round's held candidates planRound runs again first (a new job each).
   */
  | {
      kind: 'open';
      round: number;
      parent: string;
      count: number;
      proposals?: string[];
      predicted?: { best: string | null };
      reruns?: string[];
    }
  | {
      kind: 'close';
      name: string;
      pr: number;
      why: 'rejected' | 'superseded' | 'failed' | 'concluded';
      by?: string;
    }
  /** `reference`: the round's reference job of the best `name` on pull request `pr`, not a run of it. */
  | { kind: 'stop'; name: string; pr: number; reason: string; reference?: true; abandon?: true }
  | { kind: 'conclude'; reason: string; winner: string | null }
  | { kind: 'label'; name: string; pr: number }
  /** Merged once its required checks pass (the stage reads them): the measured baseline, or the winner. */
  | { kind: 'merge'; name: string; pr: number; why: 'baseline' | 'winner' }
  /** The final report, posted on the dashboard from the record: the loop is closed. */
  | { kind: 'report'; winner: string | null };

export interface Budget {
  limit: number;
  spent: number;
  /** What the live runs are still expected to take. */
  committed: number;
  left: number;
}

export interface PilotPlan {
  actions: PilotAction[];
  /** Why it does nothing (more) this pass, for the dashboard; null when it acts. */
  waiting: string | null;
  budget: Budget;
  campaign: CampaignState;
  /** The round in progress (0 before the first). */
  round: number;
  /** What only a person can resolve, for the dashboard (more come from the stage's writes). */
  stalls: Stall[];
  /**
   * A round is due and its plan awaits suggest's answer (PilotInput.suggestion): the caller asks
   * suggest for up to `count` proposals and plans again. Null when no round is due or it was given.
   */
  due: { round: number; parent: string; count: number } | null;
}

const live = (r: PilotRun) => r.request === 'live';
/** Out of the bot's round: closed by a person before an Outcome, or taken over by a person's push (the round goes on without it). */
const withdrawn = (r: PilotRun) =>
  r.origin === 'bot' && ((r.pull === 'closed' && r.outcome === null) || r.takenOver === true);

/** spent, what live runs are still expected to take (a run's cost less what it has held), and what is left. */
export function budgetOf(
  runs: readonly PilotRun[],
  limit: number,
  runGpuHours: number,
  elsewhere = 0,
): Budget {
  const spent = elsewhere + runs.reduce((a, r) => a + r.gpuHours, 0);
  const committed = runs.filter(live).reduce((a, r) => a + Math.max(0, runGpuHours - r.gpuHours), 0);
  return { limit, spent, committed, left: limit - spent - committed };
}

/**
 * The campaign's state from the runs: the baseline, then each finished bot round, each with whether
 * it tried what the model predicted best (`predicted`, the bot's state: decided, as recordRound counts).
 */
export function campaignOf(
  runs: readonly PilotRun[],
  predicted: Readonly<Record<string, string | null>> = {},
  references: PilotInput['references'] = {},
): { state: CampaignState; current: number } {
  const base = runs.find((r) => r.round === 0);
  let state = startCampaign({
    name: base?.name ?? 'baseline',
    seconds: base?.outcome === 'failed' ? null : (base?.seconds ?? null),
    gpuHours: base?.gpuHours ?? 0,
  });
  // A person's candidate decided better (merged or not) is the current best too.
  for (const r of runs)
    if (
      r.round === null &&
      r.outcome === 'better' &&
      r.seconds !== undefined &&
      r.seconds < (state.best?.seconds ?? Infinity)
    )
      state = { ...state, best: { name: r.name, seconds: r.seconds } };
  const current = Math.max(0, ...runs.map((r) => r.round ?? 0));
  for (let index = 1; index <= current; index++) {
    const of = runs.filter((r) => r.round === index && r.origin === 'bot' && !withdrawn(r));
    if (index === current && !roundFinished(runs, index)) break;
    const round: Round = {
      index,
      parent: state.best?.name ?? state.baseline.name,
      runs: of.map(roundRunOf),
      ...(references[String(index)] ? { reference: references[String(index)] } : {}),
    };
    // tried only once decided (recordRound's rule): not held, not closed at the horizon, not failed
    const best = predicted[String(index)];
    if (best !== undefined)
      round.triedPredictedBest = round.runs.some((r) => r.name === best && decidedRun(r));
    state = closeRound(state, round);
  }
  return { state, current };
}

/** A run as its round records it (RoundRun), held or not as its decision says (runOutcome). */
function roundRunOf(r: PilotRun): RoundRun {
  return {
    name: r.name,
    outcome: r.outcome ?? 'undecided',
    ...(r.seconds !== undefined ? { seconds: r.seconds } : {}),
    gpuHours: r.gpuHours,
    ...(r.held !== undefined ? { held: r.held } : {}),
    ...(r.rerun ? { rerun: true } : {}),
    ...(r.attempt !== undefined ? { attempt: r.attempt } : {}),
    ...(r.change !== undefined ? { change: r.change } : {}),
  };
}

/** Every bot run of the round ended with an Outcome (decided or not), or was withdrawn by a person. */
export function roundFinished(runs: readonly PilotRun[], index: number): boolean {
  return runs
    .filter((r) => r.round === index && r.origin === 'bot' && !withdrawn(r))
    .every((r) => r.outcome !== null && r.request !== 'live');
}

/** The next actions; the caller carries them out in order (./stage.ts) and keys each by branch and round. */
export function planStep(input: PilotInput): PilotPlan {
  const { policy, runs, controls } = input;
  const budget = budgetOf(runs, policy.gpuHours, input.runGpuHours, input.spentElsewhere);
  const { state, current } = campaignOf(runs, input.predicted, input.references);
  const taken = takeovers(runs);
  const plan = (step: Step): PilotPlan => ({
    actions: oncePerPull(step.actions),
    waiting: step.waiting,
    budget,
    campaign: state,
    round: current,
    stalls: [...taken, ...(step.stalls ?? [])],
    due: step.due ?? null,
  });
  if (input.concluded) return plan(finishStep(input, input.concluded));
  if (input.refused?.length)
    return plan({
      actions: [],
      waiting: `the autopilot policy on the default branch is refused, nothing starts until it is fixed: ${input.refused.join('; ')}`,
    });
  const housekeeping = closeLosers(runs, state);
  const ending = endingReason(input, budget);
  if (ending)
    return plan({
      actions: [
        ...stopLive(input, ending),
        ...housekeeping,
        ...conclusionOf(runs, state, ending, housekeeping),
      ],
      waiting: null,
    });
  if (controls.paused || !policy.enabled) {
    const why = controls.paused
      ? 'paused on the dashboard (/topo resume goes on)'
      : 'autopilot.enabled is false';
    return plan({
      actions: [...housekeeping, ...(controls.stopLive ? stopLive(input, why) : [])],
      waiting: why,
    });
  }
  const submits = submitsOf(input, budget, current);
  const base = baselineStep(input, budget, submits);
  if (base) return plan({ ...base, actions: [...housekeeping, ...base.actions] });
  if (!roundFinished(runs, current) || runs.some((r) => r.origin === 'person' && live(r)))
    return plan({
      actions: [...housekeeping, ...abandoned(runs), ...submits.actions],
      waiting: submits.waiting ?? `round ${current} is running`,
    });
  const merge = winnerStep(input, state);
  if (merge) return plan({ ...merge, actions: [...housekeeping, ...merge.actions] });
  const next = nextRound(input, state, budget, housekeeping);
  return plan({ ...next, actions: [...housekeeping, ...next.actions] });
}

/** Live bot runs whose jobs the campaign abandons now: stopped, and rerun in the next round (runOutcome). */
function abandoned(runs: readonly PilotRun[]): PilotAction[] {
  return runs
    .filter((r) => r.origin === 'bot' && live(r) && r.abandon && r.pr !== undefined && !r.takenOver)
    .map((r) => ({
      kind: 'stop',
      name: r.name,
      pr: r.pr as number,
      reason: r.abandon as string,
      abandon: true,
    }));
}

/**
 * A finished round's winner (a bot pull request decided better, the new best) is merged before the
 * next round opens (`merge: auto`, once its required checks pass), or left for a writer to merge
 * (`merge: manual`): the default branch then holds the best topology, the record names it the current
 * best, and the next round's proposals and its reference start from it, as the campaign's rounds do.
 */
function winnerStep(input: PilotInput, state: CampaignState): Step | null {
  const w = input.runs.find((r) => r.name === state.best?.name && r.round !== 0);
  if (w?.origin !== 'bot' || w.takenOver || w.pr === undefined) return null;
  if (w.pull === 'merged' || w.pull === 'none')
    return w.recorded ? null : { actions: [], waiting: `waiting for the record of the winner #${w.pr}` };
  if (w.pull !== 'open') return null;
  const label: PilotAction[] = w.labelled ? [] : [{ kind: 'label', name: w.name, pr: w.pr }];
  if (input.policy.merge === 'auto')
    return { actions: [...label, { kind: 'merge', name: w.name, pr: w.pr, why: 'winner' }], waiting: null };
  return {
    actions: label,
    waiting: `round ${w.round} won by \`${w.name}\`; the next round opens once #${w.pr} is merged`,
    stalls: [
      {
        pr: w.pr,
        what: `\`${w.name}\` won round ${w.round} (merge: manual leaves its merge to a person)`,
        fix: `merge #${w.pr} to record it as the current best; the next round opens from it`,
      },
    ],
  };
}

/**
 * The last guard of every plan: one action of a kind per pull request (the first kept), so a pull
 * request never gets two closing comments, labels, merges or Requests from one pass whatever the runs
 * hold (two entries of one candidate, one pull request under two names). A run's stop and the stop of
 * the reference job on its pull request are two jobs, kept apart.
 */
export function oncePerPull(actions: readonly PilotAction[]): PilotAction[] {
  const seen = new Set<string>();
  return actions.filter((a) => {
    if (!('pr' in a)) return true;
    const key = `${a.kind}:${a.pr}${a.kind === 'stop' && a.reference ? ':reference' : ''}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** One step's actions, why it waits, and what a person must resolve. */
interface Step {
  actions: PilotAction[];
  waiting: string | null;
  stalls?: Stall[];
  due?: PilotPlan['due'];
}

/** Bot pull requests someone else pushed to (an amended bot commit included): theirs now, shown with what they can do. */
function takeovers(runs: readonly PilotRun[]): Stall[] {
  return runs
    .filter((r) => r.origin === 'bot' && r.takenOver && r.pull === 'open' && r.pr !== undefined)
    .map((r) => ({
      pr: r.pr as number,
      what: `\`${r.name}\` was changed by someone else: its head is not the autopilot's commit (an amended or force-pushed commit counts), so the autopilot leaves it alone and its round goes on without it`,
      fix: `it is yours now: comment \`/topo submit\` on #${r.pr} to run it as your candidate, or close it`,
    }));
}

/**
 * Before round 1, the baseline: an experiment with no baseline run gets its own bot pull request
 * (round 0, within the budget); the bot's baseline is submitted like any bot run, then merged once
 * measured (`merge: auto`) or left for a writer to merge (`merge: manual`), so the record holds the
 * reference every round is decided against; a failed one is closed (recorded as failed). Null once
 * the baseline is decided and recorded.
 */
function baselineStep(input: PilotInput, budget: Budget, submits: Step): Step | null {
  const { runs, policy } = input;
  const base = runs.find((r) => r.round === 0);
  if (!base) {
    // a person's runs without a recorded baseline: theirs to record first
    if (runs.some((r) => r.origin === 'person'))
      return { actions: [], waiting: 'waiting for the baseline to be recorded (merge its pull request)' };
    if (!canStart(policy, budget.spent, budget.committed, input.runGpuHours))
      return { actions: [], waiting: 'the budget has no room for the baseline' };
    return { actions: [{ kind: 'open', round: 0, parent: '', count: 1 }], waiting: null };
  }
  if (base.origin !== 'bot' || base.pull !== 'open' || base.pr === undefined)
    return base.outcome === null
      ? { actions: [], waiting: 'waiting for the baseline to be decided and recorded' }
      : null;
  if (base.takenOver) return { actions: [], waiting: 'the baseline’s pull request is a person’s now' };
  if (base.request !== 'ended' || base.outcome === null)
    return { actions: submits.actions, waiting: submits.waiting ?? 'the baseline is running' };
  if (base.outcome === 'failed')
    return { actions: [{ kind: 'close', name: base.name, pr: base.pr, why: 'failed' }], waiting: null };
  if (policy.merge === 'auto')
    return { actions: [{ kind: 'merge', name: base.name, pr: base.pr, why: 'baseline' }], waiting: null };
  return {
    actions: [],
    waiting: `the baseline is measured; round 1 starts once #${base.pr} is merged`,
    stalls: [
      {
        pr: base.pr,
        what: `the baseline \`${base.name}\` is measured (merge: manual leaves its merge to a person)`,
        fix: `merge #${base.pr} to record it as the reference; round 1 opens on the next pass`,
      },
    ],
  };
}

/** Why the experiment ends now whatever the round: a person concluded, or the budget is spent. */
function endingReason(input: PilotInput, budget: Budget): string | null {
  if (input.controls.concludedBy) return `concluded on the dashboard by @${input.controls.concludedBy}`;
  if (budget.spent >= budget.limit - 1e-9)
    return `budget: ${fmt(budget.spent)} of ${fmt(budget.limit)} GPU-hours spent${runningForecast(input.runs, budget)}`;
  return null;
}

/**
 * What the live runs would still take, said apart from what was spent: the spent figure is what
 * Slurm's allocations held, never a forecast (a running job's time limit, a pending job's start).
 */
function runningForecast(runs: readonly PilotRun[], budget: Budget): string {
  const n = runs.filter(live).length;
  if (n === 0) return '';
  return `, held so far; the ${n} live run${n === 1 ? '' : 's'} would take about ${fmt(budget.committed)} GPU-hours more to finish, a forecast not counted`;
}

/**
 * The current round's bot pull requests without a Request, started while the budget allows; under
 * `submit: approval` only those a writer approved (an approving review at its head; a writer's own
 * `/topo submit` makes the Request itself).
 */
function submitsOf(input: PilotInput, budget: Budget, current: number): Step {
  const waiting = input.runs.filter(
    (r) =>
      r.round === current && r.origin === 'bot' && r.request === 'none' && r.pull === 'open' && !r.takenOver,
  );
  if (waiting.length === 0) return { actions: [], waiting: null };
  const approval = input.policy.submit === 'approval';
  const ready = approval ? waiting.filter((r) => r.approved) : waiting;
  const unapproved = waiting.filter((r) => !ready.includes(r));
  const actions: PilotAction[] = [];
  let committed = budget.committed;
  for (const r of ready) {
    if (!canStart(input.policy, budget.spent, committed, input.runGpuHours)) break;
    committed += input.runGpuHours;
    actions.push({ kind: 'submit', name: r.name, pr: r.pr as number });
  }
  const held = ready.length - actions.length;
  const why = [
    ...(unapproved.length
      ? [
          `waiting for a writer's approving review or /topo submit on ${unapproved.map((r) => `#${r.pr}`).join(', ')}`,
        ]
      : []),
    ...(held ? [`${held} run(s) wait: the budget has no room for them`] : []),
  ];
  return { actions, waiting: why.length ? why.join('; ') : null };
}

/**
 * The round after a finished one, or the conclusion: the campaign loop's planRound over suggest's
 * answer (the stop rule with the model's outlook, suggest's stop advice, max_rounds, the budget), the
 * step runCampaign takes. Without the answer the round is `due` (the caller asks suggest and plans
 * again) and the seed's stop rule alone says what comes next.
 */
function nextRound(
  input: PilotInput,
  state: CampaignState,
  budget: Budget,
  closing: readonly PilotAction[],
): Step {
  const policy = roundPolicy(input, state, budget);
  const open = nextStep(state, { ...policy, stopAfter: Number.POSITIVE_INFINITY }, input.runGpuHours);
  if (!input.suggestion) {
    const due = open.kind === 'round' ? { round: open.index, parent: open.parent, count: open.count } : null;
    const step = nextStep(state, policy, input.runGpuHours);
    if (step.kind === 'conclude')
      return { actions: conclusionOf(input.runs, state, step.reason, closing), waiting: null, due };
    return {
      actions: [{ kind: 'open', round: step.index, parent: step.parent, count: step.count }],
      waiting: null,
      due,
    };
  }
  const step = planRound(state, policy, input.suggestion, input.runGpuHours);
  if (step.kind === 'conclude')
    return { actions: conclusionOf(input.runs, state, step.reason, closing), waiting: null };
  const r = step.round;
  const action: PilotAction = {
    kind: 'open',
    round: r.index,
    parent: r.parent,
    count: r.proposals.length,
    proposals: r.proposals.map((p) => p.candidate.name),
    ...(r.modelled ? { predicted: { best: r.predictedBest } } : {}),
    ...(r.reruns.length ? { reruns: r.reruns.map((x) => x.name) } : {}),
  };
  return { actions: [action], waiting: null };
}

/**
 * The campaign's policy for the next round: its slots (`parallel` less people's live candidates, at
 * least one), and the budget less what runs outside the finished rounds hold (live runs, reference jobs).
 */
function roundPolicy(input: PilotInput, state: CampaignState, budget: Budget): CampaignPolicy {
  const policy = campaignPolicy(input.policy);
  const held = budget.spent + budget.committed - spentGpuHours(state);
  const slots = input.policy.parallel - input.runs.filter((r) => r.origin === 'person' && live(r)).length;
  return { ...policy, parallel: Math.max(1, slots), gpuHours: policy.gpuHours! - held };
}

/** Decided losers' pull requests closed with their decision; an earlier winner a later one beat, as superseded. */
function closeLosers(runs: readonly PilotRun[], state: CampaignState): PilotAction[] {
  const best = state.best?.name;
  const out: PilotAction[] = [];
  for (const r of runs) {
    if (r.origin !== 'bot' || r.pull !== 'open' || r.takenOver || r.pr === undefined || r.request === 'live')
      continue;
    if (r.outcome === null || r.outcome === 'undecided' || r.name === best) continue;
    const roundOver = r.round !== null && state.rounds.some((x) => x.index === r.round);
    if (!roundOver) continue;
    const won = state.rounds.some((x) => x.runs.some((y) => y.name === r.name)) && r.outcome === 'better';
    out.push(
      won
        ? { kind: 'close', name: r.name, pr: r.pr, why: 'superseded', ...(best ? { by: best } : {}) }
        : { kind: 'close', name: r.name, pr: r.pr, why: 'rejected' },
    );
  }
  return out;
}

/**
 * Once the campaign stops (concluded, concluding, off), the round's reference job is still a person's
 * when a person's run goes on (queued or running): it is decided against it. Else nothing of the
 * campaign needs it: a live one is stopped (stopLive), a queued one is held (src/monitor/autopilot.ts).
 */
export function referenceServesPeople(runs: readonly PilotRun[]): boolean {
  return runs.some((r) => r.origin === 'person' && live(r));
}

/**
 * The bot's live runs, and the round's live reference jobs unless a person's run still goes on (it is
 * decided against the reference): nothing else keeps holding GPUs for the campaign.
 */
function stopLive(input: Pick<PilotInput, 'runs' | 'referenceJobs'>, reason: string): PilotAction[] {
  const runs: PilotAction[] = input.runs
    .filter((r) => r.origin === 'bot' && live(r) && r.pr !== undefined && !r.takenOver)
    .map((r) => ({ kind: 'stop', name: r.name, pr: r.pr as number, reason }));
  const needed = referenceServesPeople(input.runs);
  const references: PilotAction[] = (needed ? [] : (input.referenceJobs ?? [])).map((j) => ({
    kind: 'stop',
    name: j.name,
    pr: j.pr,
    reason,
    reference: true,
  }));
  return [...runs, ...references];
}

/**
 * After the conclusion, closing the loop: the winner's pull request labelled and, under `merge:
 * auto`, merged once its required checks pass (the stage reads them) and recorded; then the final
 * report from the record, posted on the dashboard. A winner left to a person (`merge: manual`, a
 * person's own candidate) is on the dashboard with what to do; the report follows its merge.
 */
function finishStep(input: PilotInput, c: NonNullable<PilotInput['concluded']>): Step {
  if (c.reported || c.winner === undefined) return { actions: [], waiting: `concluded: ${c.reason}` };
  // the bot's pull requests left open but the winner's are closed first, in the same pass
  const step = winnerStepAfter(input, c);
  return { ...step, actions: [...leftOpen(input.runs, c.winner), ...step.actions] };
}

/** The concluded winner labelled and merged (or left to a writer), then the final report. */
function winnerStepAfter(input: PilotInput, c: NonNullable<PilotInput['concluded']>): Step {
  const w = c.winner ? input.runs.find((r) => r.name === c.winner) : undefined;
  if (w?.pull === 'open' && w.pr !== undefined && !w.takenOver) {
    const label: PilotAction[] = w.labelled ? [] : [{ kind: 'label', name: w.name, pr: w.pr }];
    if (input.policy.merge === 'auto' && w.origin === 'bot')
      return { actions: [...label, { kind: 'merge', name: w.name, pr: w.pr, why: 'winner' }], waiting: null };
    return {
      actions: label,
      waiting: `concluded (${c.reason}); the final report follows the winner's merge`,
      stalls: [
        {
          pr: w.pr,
          what: `\`${w.name}\` is the winner (${w.origin === 'bot' ? 'merge: manual leaves its merge to a person' : 'a person’s own candidate'})`,
          fix: `merge #${w.pr} to record it; the final report is posted here then (or close it to conclude without it)`,
        },
      ],
    };
  }
  if (w?.pull === 'merged' && !w.recorded)
    return { actions: [], waiting: `concluded; waiting for the record of the winner #${w.pr}` };
  return { actions: [{ kind: 'report', winner: w?.pull === 'merged' ? w.name : null }], waiting: null };
}

/**
 * The conclusion after the closes the step already plans (`closing`: closeLosers, the step's
 * housekeeping, carried before it): the rest of the bot's open pull requests, then `conclude`. The
 * losers are the caller's alone, so a loser's pull request is closed once (one closing comment).
 */
function conclusionOf(
  runs: readonly PilotRun[],
  state: CampaignState,
  reason: string,
  closing: readonly PilotAction[],
): PilotAction[] {
  const winner = state.best && state.best.name !== state.baseline.name ? state.best.name : null;
  return [...leftOpen(runs, winner, closing), { kind: 'conclude', reason, winner }];
}

/**
 * The bot's pull requests still open once the experiment concludes, the winner's aside (an undecided
 * run, one the conclusion stopped, one never run): closed with the conclusion, so none is left dangling.
 */
function leftOpen(
  runs: readonly PilotRun[],
  winner: string | null,
  closing: readonly PilotAction[] = [],
): PilotAction[] {
  return runs
    .filter(
      (r) =>
        r.origin === 'bot' &&
        r.pull === 'open' &&
        !r.takenOver &&
        r.pr !== undefined &&
        r.name !== winner &&
        !closing.some((a) => a.kind === 'close' && (a.name === r.name || a.pr === r.pr)),
    )
    .map((r) => ({ kind: 'close', name: r.name, pr: r.pr as number, why: 'concluded' }));
}

function fmt(x: number): string {
  return (Math.round(x * 10) / 10).toString();
}
