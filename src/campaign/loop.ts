// The campaign loop: the campaign bench runs it on simulated rounds; the autopilot plans each of its
// rounds with the same planRound (src/autopilot/core.ts planStep, once suggest answered; its `open`
// action names the reruns, which the monitor's stage carries out: src/monitor/autopilot.ts
// rerunHeld). Each turn: suggest's answer → planRound (conclude, or the
// round's reruns and proposals) → the caller runs the round → recordRound (what the round decided,
// whether it tried the model's best) → next. Pure but for the caller's functions.
import {
  type CampaignPolicy,
  type CampaignState,
  closeRound,
  type ModelOutlook,
  nextStep,
  type Round,
  type RoundRun,
} from './rounds.js';

/**
 * A candidate gets at most this many jobs: its first and reruns after held decisions. An incident
 * hits about one job in ten, the candidate's or its reference's: two holds in a row are 1 in 25, three
 * 1 in 150.
 */
export const MAX_ATTEMPTS = 3;

/** What the loop reads of a proposal (src/suggest's Proposal; suggest depends on the campaign, not back). */
export interface ProposalLike {
  candidate: { name: string };
  change: string;
}

/** What the loop reads of suggest's answer (src/suggest SuggestResult). */
export interface Suggestion<P extends ProposalLike = ProposalLike> {
  proposals: readonly P[];
  stop: { stop: boolean; reason: string };
  /** The calibrated model's predicted best move (absent: no reliable model). */
  outlook?: { change: string; gainLow: number } | null;
}

export interface PlannedRound<P extends ProposalLike = ProposalLike> {
  index: number;
  parent: string;
  /** Candidates of the last round whose decision was held (never decided), run again first. */
  reruns: RoundRun[];
  proposals: P[];
  /** The proposal the model predicts best (its name), or null when this round does not try it. */
  predictedBest: string | null;
  /** The model had an outlook (a round without one counts toward the stop rule as the seed's). */
  modelled: boolean;
}

export type CampaignStep<P extends ProposalLike = ProposalLike> =
  | { kind: 'round'; round: PlannedRound<P> }
  | { kind: 'conclude'; reason: string };

/**
 * A run's topology counts as tried: its decision was reached, or its forecast settled it within the
 * decisions' noise (not held, not closed at the horizon, not a failure).
 */
export function decidedRun(r: RoundRun): boolean {
  return r.outcome !== 'failed' && !r.held;
}

/**
 * The last round's candidates that need another job: to be re-judged (abandoned for a drift or a
 * lost reference, crashed, or held by a guard while its interval settled `better`) while pointing at
 * a gain, with attempts left. One closed at the horizon with an interval across −min_improvement is
 * not rerun: the same runs would read the same (it is no tried topology either).
 */
export function pendingReruns(state: CampaignState, minImprovement: number): RoundRun[] {
  const last = state.rounds.at(-1);
  if (!last) return [];
  return last.runs.filter(
    (r) =>
      !!r.rerun &&
      (r.attempt ?? 1) < MAX_ATTEMPTS &&
      r.change !== undefined &&
      r.change <= -minImprovement / 2,
  );
}

/**
 * The next round, or the conclusion. Held candidates are rerun first (a topology counts as tried
 * only once decided), and while one is pending neither the stop rule nor suggest's stop advice ends
 * the campaign (max_rounds and the budget still do). `expectedRunGpuHours`: one job's expected cost.
 */
export function planRound<P extends ProposalLike>(
  state: CampaignState,
  policy: CampaignPolicy,
  suggestion: Suggestion<P>,
  expectedRunGpuHours: number,
): CampaignStep<P> {
  const reruns = pendingReruns(state, policy.minImprovement);
  const outlook: ModelOutlook | null = suggestion.outlook ? { gainLow: suggestion.outlook.gainLow } : null;
  const held = reruns.length ? { ...policy, stopAfter: Number.POSITIVE_INFINITY } : policy;
  const step = nextStep(state, held, expectedRunGpuHours, outlook);
  if (step.kind === 'conclude') return step;
  const kept = reruns.slice(0, step.count);
  if (!kept.length && (suggestion.stop.stop || suggestion.proposals.length === 0))
    return { kind: 'conclude', reason: `suggest: ${suggestion.stop.reason}` };
  const proposals = suggestion.proposals.slice(0, step.count - kept.length);
  const best = suggestion.outlook
    ? proposals.find((p) => p.change === suggestion.outlook!.change)
    : undefined;
  return {
    kind: 'round',
    round: {
      index: step.index,
      parent: step.parent,
      reruns: kept,
      proposals,
      predictedBest: best?.candidate.name ?? null,
      modelled: !!suggestion.outlook,
    },
  };
}

/**
 * The state after a planned round ran: its runs (the reruns' and the proposals', each with its
 * outcome), and whether it tried what the model predicted best, which it did only once that
 * candidate is decided (held or closed at the horizon, it did not).
 */
export function recordRound(
  state: CampaignState,
  planned: PlannedRound<ProposalLike>,
  runs: RoundRun[],
  reference?: Round['reference'],
): CampaignState {
  const best = planned.predictedBest ? runs.find((r) => r.name === planned.predictedBest) : undefined;
  const round: Round = {
    index: planned.index,
    parent: planned.parent,
    runs,
    ...(planned.modelled ? { triedPredictedBest: !!best && decidedRun(best) } : {}),
    ...(reference ? { reference } : {}),
  };
  return closeRound(state, round);
}

/**
 * A round run: its runs' outcomes, and its reference job beside them (Round.reference: its GPU-hours,
 * and the best as it measured it; absent: no reference job, the best as it was).
 */
export interface RoundResult {
  runs: RoundRun[];
  reference?: Round['reference'];
}

/** What a caller of the loop provides: suggest's answer for a state, and a round run to its outcomes. */
export interface CampaignIO<P extends ProposalLike = ProposalLike> {
  suggest(state: CampaignState): Suggestion<P> | Promise<Suggestion<P>>;
  run(state: CampaignState, round: PlannedRound<P>): RoundResult | Promise<RoundResult>;
  /**
   * Who plans each turn (default planRound): the autopilot bench passes the autopilot's own step
   * (src/autopilot/core.ts planStep over the runs as a monitor pass reads them), which calls planRound.
   */
  plan?: typeof planRound<P>;
}

/** The campaign from its baseline to the conclusion: the loop the campaign bench runs. */
export async function runCampaign<P extends ProposalLike>(
  start: CampaignState,
  policy: CampaignPolicy,
  io: CampaignIO<P>,
  /** One job's expected GPU-hours (a round's reference beside its candidates included). */
  expectedRunGpuHours: number,
): Promise<{ state: CampaignState; reason: string }> {
  let state = start;
  for (;;) {
    const step = (io.plan ?? planRound)(state, policy, await io.suggest(state), expectedRunGpuHours);
    if (step.kind === 'conclude') return { state, reason: step.reason };
    const result = await io.run(state, step.round);
    state = recordRound(state, step.round, result.runs, result.reference);
  }
}
