// THE decision path: every rule that decides or stops a candidate at one look, in one function the
// monitor (through src/judge), `topo analyze --against`, the autopilot, the demo and both benches
// call. It decides the candidate against its reference at equal run age with the full-run guard, the
// horizon, the reference-ended and the forecast closings (src/analysis/decision.ts decideCandidate);
// while that is open, against the experiment's leading candidate (the pruner); and says whether its
// job stops now. A bench composes nothing of its own (test/unit/build/structure.test.ts). Pure.
import type { Decision, DecisionReference } from '../types/generated/metrics.js';
import {
  type DecideOptions,
  decideCandidate,
  decisionOpen,
  isFinalDecision,
  pruneByLeader,
  referenceOf,
  shouldStopOnDecision,
  type VerdictLike,
} from './decision.js';
import { sameReference } from './reference.js';

/** A run a candidate is read against: its name as decisions name it, its verdict, how evidence shows it. */
export interface LookRun {
  name: string;
  verdict: VerdictLike;
  label?: string;
  /** How the decision names it (default: a run of that name). */
  reference?: DecisionReference;
}

export interface LookInput {
  /** The candidate's verdict at this look (its cohorts, estimate, run age). */
  candidate: VerdictLike;
  /** The reference (the current best, else the baseline), or null without one. */
  reference: LookRun | null;
  /** The experiment's leading candidate (another one), and how many it was picked among. */
  leader?: (LookRun & { contenders?: number }) | null;
  /** The decision of the previous look. */
  previous?: Decision | null;
  /** This candidate is the reference itself. */
  isReference?: boolean;
}

export interface LookOutcome {
  decision: Decision;
  /** Cancel its job now (`stop_when_decided`). */
  stop: boolean;
  reason: string;
}

/** The decision at one look and whether the job stops: the one path (see the header). */
export function decideLook(
  look: LookInput,
  options: DecideOptions & { stopWhenDecided?: boolean } = {},
): LookOutcome {
  const decision = decisionAt(look, options);
  return { decision, ...shouldStopOnDecision([decision], { stopWhenDecided: options.stopWhenDecided }) };
}

function decisionAt(look: LookInput, options: DecideOptions): Decision {
  const { previous, leader, isReference } = look;
  // pruned by the same leader on an earlier look: final too (the job may run on without stop_when_decided)
  if (leader && isFinalDecision(previous) && sameReference(previous?.reference, referenceOf(leader)))
    return previous as Decision;
  const against = (o: DecideOptions) =>
    decideCandidate(look.candidate, look.reference, { ...options, ...o, previous, isReference });
  // the pruner comes before the forecast's closing: a claim the leader settles says more than "futile"
  const d = against({ futility: false });
  if (!decisionOpen(d) || isReference) return d;
  // open (measuring, or the provisional winner): a candidate that cannot beat the leader cannot win;
  // the pruner's error is split over the candidates that could lead (all but this one)
  const leaders = Math.max(1, (leader?.contenders ?? 2) - 1);
  const pruned = leader ? pruneByLeader(look.candidate, leader, { ...options, previous, leaders }) : null;
  return pruned ?? (options.futility === false ? d : against({}));
}
