// The campaign loop's pure core: rounds, the current best, the stop rule and the budget. The seed's
// workflow is this loop (baseline → at most `parallel` candidates → decide → next round → stop after
// `stopAfter` rounds without a decided gain → report); the autopilot runs it for real and the
// campaign bench simulates it, both through these functions. No I/O, no clock.
import type { VerdictLike } from '../analysis/decision.js';
import type { RunOutcome as AnyOutcome } from '../analysis/outcome.js';

// the futility rule is the decision path's (src/analysis/decision.ts); the campaign reads it from there
export { FORECAST_AFTER_MINUTES, futileByForecast } from '../analysis/decision.js';

export interface CampaignPolicy {
  /** Candidates per round (the seed's "at most 3"), never above the experiment's max_parallel. */
  parallel: number;
  /** The experiment's min_improvement: a round gains when a candidate is decided `better`. */
  minImprovement: number;
  /** Rounds in a row without a decided gain after which the campaign concludes (the seed's stop rule). */
  stopAfter: number;
  /** At most this many rounds after the baseline. */
  maxRounds?: number;
  /** Hard budget of the whole campaign, GPU-hours. */
  gpuHours?: number;
  /**
   * Relative half-width of a reference's 95% interval (its projected full-run value) from which later
   * candidates are decided against its recorded value: the baseline, and a round's winner, run until
   * then (a reference keeps running; an early stop would leave every later decision open).
   */
  referencePrecision: number;
  /**
   * `beside` (default): each round runs its reference (the current best) again beside its candidates,
   * decided at equal run age, while its decisions need it (src/analysis/reference-lifetime.ts
   * referenceNeeded); the baseline runs only to
   * its first usable projection. `measured-first`: the baseline and each winner are measured to
   * ±referencePrecision first and candidates are decided against that recorded value (the old way:
   * about 10.7 GPU-hours for the baseline alone, and a fixed error no candidate data removes).
   */
  reference?: 'beside' | 'measured-first';
}

export const DEFAULT_POLICY: CampaignPolicy = {
  parallel: 3,
  minImprovement: 0.02,
  stopAfter: 2,
  referencePrecision: 0.015,
  reference: 'beside',
};

/** How a candidate of a round came out (its decision against the round's reference, or a failure). */
export type RunOutcome = Exclude<AnyOutcome, 'reference' | 'measuring' | 'better-at-equal-age'>;

export interface RoundRun {
  name: string;
  outcome: RunOutcome;
  /** Its decided (projected full-run) seconds per rollout; absent for a failed run. */
  seconds?: number;
  gpuHours: number;
  /** Why its decision was not reached (src/campaign/held.ts): a held run is no tried topology yet. */
  held?: string;
  /**
   * Its decision is to be re-judged beside a reference that runs (its job or its reference's was
   * abandoned, crashed, or a guard held an interval that settles `better`), not only left open.
   */
  rerun?: boolean;
  /** Its job of the candidate: 1 the first, 2 a rerun after a held decision (src/campaign/loop.ts). */
  attempt?: number;
  /** Its last relative change against the reference (negative: faster), decided or not. */
  change?: number;
}

export interface Round {
  /** 1 for the first round after the baseline. */
  index: number;
  /** The candidate this round's proposals change (the best when it started). */
  parent: string;
  runs: RoundRun[];
  /**
   * Whether the round tried what the calibrated model predicted best (false: it did not, so a round
   * without a gain says nothing about where the model points and does not count toward the stop rule;
   * absent: no model, the round counts).
   */
  triedPredictedBest?: boolean;
  /**
   * The round's reference job beside its candidates (a new job of the best): its GPU-hours, which the
   * budget counts like any run's, and the best's seconds as it measured them when it measured them
   * more precisely than the record had them (a young baseline, say; absent: the best stands as it was).
   */
  reference?: { name: string; gpuHours: number; seconds?: number };
}

/**
 * What the calibrated model still predicts beyond the current best: the lower end of the predicted
 * gain (its interval) of the best topology not tried yet. The stop rule does not conclude while it
 * is at least min_improvement (a gain predicted with confidence).
 */
export interface ModelOutlook {
  gainLow: number;
  /** The topology it predicts (for the reason). */
  name?: string;
}

export interface CampaignState {
  baseline: { name: string; seconds: number | null; gpuHours: number };
  rounds: Round[];
  /** The fastest candidate decided better so far (the baseline until one is; null when it failed). */
  best: { name: string; seconds: number } | null;
}

export function startCampaign(baseline: {
  name: string;
  seconds: number | null;
  gpuHours: number;
}): CampaignState {
  return {
    baseline,
    rounds: [],
    best: baseline.seconds === null ? null : { name: baseline.name, seconds: baseline.seconds },
  };
}

/**
 * The round's winner, if any: the fastest run decided `better` than the reference. After a failed
 * baseline there is no reference yet: the run the round decided between its candidates (`better`:
 * every other one decided against it), else the fastest measured run becomes the best.
 */
export function roundWinner(state: CampaignState, round: Round): RoundRun | undefined {
  const measured = round.runs.filter((r) => r.seconds !== undefined && r.outcome !== 'failed');
  const better = measured.filter((r) => r.outcome === 'better');
  const eligible = state.best === null && better.length === 0 ? measured : better;
  return eligible.sort((a, b) => (a.seconds as number) - (b.seconds as number))[0];
}

/**
 * The state after a finished round: the best as its reference job measured it (Round.reference),
 * then its winner (if faster) becomes the best.
 */
export function closeRound(before: CampaignState, round: Round): CampaignState {
  const ref = round.reference;
  const state =
    ref?.seconds !== undefined && before.best?.name === ref.name
      ? { ...before, best: { name: ref.name, seconds: ref.seconds } }
      : before;
  const winner = roundWinner(state, round);
  const best =
    winner && (state.best === null || (winner.seconds as number) < state.best.seconds)
      ? { name: winner.name, seconds: winner.seconds as number }
      : state.best;
  return { ...state, rounds: [...state.rounds, round], best };
}

/**
 * Rounds in a row, the latest last, that produced no new best, counting only rounds that tried what
 * the model predicted best (or had no model): a dry round elsewhere neither counts nor breaks the row.
 */
export function roundsWithoutGain(state: CampaignState): number {
  let n = 0;
  let replay = startCampaign(state.baseline);
  const gained: Array<boolean | null> = [];
  for (const round of state.rounds) {
    const before = replay.best?.name;
    replay = closeRound(replay, round);
    const gain = replay.best?.name !== before;
    gained.push(gain ? true : round.triedPredictedBest === false ? null : false);
  }
  for (let i = gained.length - 1; i >= 0 && gained[i] !== true; i--) if (gained[i] === false) n++;
  return n;
}

/**
 * The seed's stop rule with the model beside it: `stopAfter` dry rounds (roundsWithoutGain), unless
 * the model predicts a gain of at least min_improvement elsewhere with confidence. The reason, or
 * null to go on. `suggest`'s stop advice, the autopilot and the demo all ask this.
 */
export function stopRule(
  state: CampaignState,
  policy: Pick<CampaignPolicy, 'stopAfter' | 'minImprovement'>,
  outlook?: ModelOutlook | null,
): string | null {
  const dry = roundsWithoutGain(state);
  if (state.rounds.length === 0 || dry < policy.stopAfter) return null;
  if (outlook && outlook.gainLow >= policy.minImprovement) return null;
  return `no decided gain in the last ${dry} round(s) (stop after ${policy.stopAfter})${outlook ? `, and the model predicts no gain of ${Math.round(policy.minImprovement * 1000) / 10}% with confidence elsewhere` : ''}`;
}

/** Every job's GPU-hours: the baseline's, each round's runs' and its reference job's. */
export function spentGpuHours(state: CampaignState): number {
  return state.rounds.reduce(
    (a, r) => a + (r.reference?.gpuHours ?? 0) + r.runs.reduce((b, x) => b + x.gpuHours, 0),
    state.baseline.gpuHours,
  );
}

export type NextStep =
  | { kind: 'round'; index: number; parent: string; count: number }
  | { kind: 'conclude'; reason: string };

/**
 * What to do once every run of the last round has an outcome: another round of up to `parallel`
 * candidates from the best (as many as the budget allows at `expectedRunGpuHours` each), or the
 * conclusion with its reason (the stop rule, max_rounds, the budget). The suggester may still advise
 * to stop (no proposal left): the caller concludes then.
 */
export function nextStep(
  state: CampaignState,
  policy: CampaignPolicy,
  expectedRunGpuHours: number,
  /** What the model still predicts (see stopRule); absent: the seed's rule alone. */
  outlook?: ModelOutlook | null,
): NextStep {
  const stop = stopRule(state, policy, outlook);
  if (stop) return { kind: 'conclude', reason: stop };
  if (policy.maxRounds !== undefined && state.rounds.length >= policy.maxRounds)
    return { kind: 'conclude', reason: `max_rounds ${policy.maxRounds} reached` };
  const parent = state.best?.name ?? state.baseline.name;
  let count = policy.parallel;
  if (policy.gpuHours !== undefined) {
    const left = policy.gpuHours - spentGpuHours(state);
    count = Math.min(count, Math.floor(left / Math.max(1e-9, expectedRunGpuHours)));
    if (count < 1)
      return {
        kind: 'conclude',
        reason: `budget: ${round2(left)} GPU-hours left of ${policy.gpuHours}, a run is expected to take ${round2(expectedRunGpuHours)}`,
      };
  }
  return { kind: 'round', index: state.rounds.length + 1, parent, count };
}

/** May one more run start now? Spent + what live runs are expected to take + its own ≤ the budget. */
export function canStart(
  policy: Pick<CampaignPolicy, 'gpuHours'>,
  spent: number,
  committed: number,
  expected: number,
): boolean {
  return policy.gpuHours === undefined || spent + committed + expected <= policy.gpuHours + 1e-9;
}

/**
 * A reference (the baseline, a round's winner) is measured well enough to be decided against from
 * its recorded value once its projection's 95% interval is within ±referencePrecision.
 */
export function referenceReady(
  verdict: VerdictLike,
  policy: Pick<CampaignPolicy, 'referencePrecision'>,
): boolean {
  const p = verdict.projected_full_run;
  if (!p || !(p.value > 0) || ['warming', 'no-data', 'unhealthy', 'drifting'].includes(verdict.state))
    return false;
  return (p.high - p.low) / 2 / p.value <= policy.referencePrecision;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
