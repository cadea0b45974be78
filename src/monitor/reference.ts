// What each candidate is decided against, and THE comparison and decision of a candidate (the one
// place): the reference (the record's current best, else its baseline, else a baseline running in
// this pass), the leading candidate for the pruner, and the sequential decision
// (src/analysis/decision.ts). Pure.
import { compare } from '../analysis/comparison.js';
import {
  decideCandidate,
  decisionOptions,
  type GpuMinutesInput,
  leadingCandidate,
  pruneByLeader,
  type VerdictLike,
  withGpuMinutes,
} from '../analysis/decision.js';
import type { RunAnalysis } from '../analysis/observe.js';
import { DEFAULT_MIN_IMPROVEMENT, describeReference } from '../report/standing.js';
import type { CandidateObservation, Comparison, Decision, Interval } from '../types/generated/metrics.js';
import type { MonitorCandidate, MonitorExperiment } from './ports.js';
import type { Reference } from './state.js';

/** A candidate as the reference and the leader are chosen from (its run's analysis, if any). */
export interface Judged {
  c: Pick<MonitorCandidate, 'candidate' | 'pr'>;
  analysis?: RunAnalysis;
}

/** The baseline's candidate name: the experiment's baseline, else `topo init`'s `baseline`. */
export function baselineName(exp: MonitorExperiment): string {
  return exp.baseline?.name ?? 'baseline';
}

const measured = (role: Reference['role'], r: { name: string; value: Interval }): Reference => ({
  role,
  name: r.name,
  verdict: { state: 'stable', projected_full_run: r.value },
  value: r.value,
  live: false,
});

export function referenceOf(exp: MonitorExperiment, observed: readonly Judged[]): Reference | null {
  if (exp.best) return measured('current best', exp.best);
  if (exp.baseline) return measured('baseline', exp.baseline);
  const base = observed.find((o) => o.c.candidate === baselineName(exp) && o.analysis);
  const verdict = base?.analysis?.observation.verdict;
  if (!base || !verdict || base.analysis?.observation.failure) return null;
  return { role: 'baseline', name: base.c.candidate, verdict, value: verdict.value ?? null, live: true };
}

/**
 * The leading candidate of the pass (src/analysis/decision.ts leadingCandidate): the other
 * candidates' best usable projection, live or frozen at its last pass, when faster than the
 * reference's. Never the reference or the baseline, never a failed run.
 */
export function leaderOf(
  exp: MonitorExperiment,
  observed: readonly Judged[],
  reference: Reference | null,
): Reference | null {
  const runs = observed.flatMap((o) =>
    o.analysis &&
    !o.analysis.observation.failure &&
    o.c.candidate !== reference?.name &&
    o.c.candidate !== baselineName(exp)
      ? [{ name: o.c.candidate, verdict: o.analysis.observation.verdict, pr: o.c.pr }]
      : [],
  );
  const lead = leadingCandidate(runs, reference?.verdict ?? null);
  return lead
    ? {
        role: 'leading candidate',
        name: lead.name,
        verdict: lead.verdict,
        value: null,
        live: true,
        pr: lead.pr,
        contenders: runs.length,
      }
    : null;
}

const DECIDED = new Set(['better', 'worse', 'equivalent', 'not-better']);
export const isDecided = (d: Decision | null | undefined): d is Decision => !!d && DECIDED.has(d.state);

/** What the sequential decision of a candidate reads besides its observation. */
export interface DecisionContext {
  reference?: Reference | null;
  /** The leading candidate: one that cannot beat it by min_improvement is not-better (pruned). */
  leader?: Reference | null;
  /** The decision of the last pass (its comment's observation block): decisions are final. */
  previous?: Decision | null;
  /** The job ended: a decision it reached is kept as it was. */
  ended?: boolean;
  gpu?: GpuMinutesInput | null;
}

/**
 * THE comparison of a candidate (the one place): against the current best, then the baseline;
 * the first one is written into the observation. With a reference, the sequential decision
 * (src/analysis/decision.ts decideCandidate) is written too: against the current best, else the
 * baseline, with the experiment's min_improvement; a failed run gets none.
 */
export function compareCandidate(
  exp: MonitorExperiment,
  c: MonitorCandidate,
  observation: CandidateObservation,
  context: DecisionContext = {},
): Comparison[] {
  const value = observation.verdict.value ?? null;
  const comparisons: Comparison[] = [];
  if (exp.best && exp.best.name !== c.candidate)
    comparisons.push(compare(value, exp.best.value, `current best ${exp.best.name}`));
  if (exp.baseline && exp.baseline.name !== c.candidate && exp.baseline.name !== exp.best?.name)
    comparisons.push(compare(value, exp.baseline.value, `baseline ${exp.baseline.name}`));
  const ref = context.reference;
  if (ref?.live && ref.name !== c.candidate)
    comparisons.push(compare(value, ref.value, `baseline ${ref.name}`));
  if (comparisons[0]) observation.comparison = comparisons[0];
  const decision = decisionOf(exp, c, observation, context);
  if (decision) observation.decision = context.gpu ? withGpuMinutes(decision, context.gpu) : decision;
  return comparisons;
}

function decisionOf(
  exp: MonitorExperiment,
  c: MonitorCandidate,
  observation: CandidateObservation,
  { reference, leader, previous, ended }: DecisionContext,
): Decision | null {
  if (observation.failure) return null;
  const isReference = c.candidate === reference?.name || c.candidate === baselineName(exp);
  // a decision once reached stays, also when the job ended or the reference's run is gone
  if ((ended || !reference) && isDecided(previous)) return previous;
  if (!reference && !isReference) return null;
  const lead = leader && leader.name !== c.candidate ? decidedAgainst(leader, c.pr) : null;
  // pruned by the same leader on an earlier pass: final too (the job may run on without stop_when_decided)
  if (lead && isDecided(previous) && previous.against === lead.name) return previous;
  const options = {
    ...decisionOptions(exp.experiment),
    minImprovement: exp.experiment.min_improvement ?? DEFAULT_MIN_IMPROVEMENT,
  };
  const decision = decideCandidate(observation.verdict, reference ? decidedAgainst(reference, c.pr) : null, {
    ...options,
    previous,
    isReference,
  });
  if (decision.state !== 'measuring' || isReference || !lead) return decision;
  // the pruner's error is split over the candidates that could lead (all but this one)
  const leaders = Math.max(1, (leader?.contenders ?? 2) - 1);
  return pruneByLeader(observation.verdict, lead, { ...options, previous, leaders }) ?? decision;
}

/**
 * A reference as the decision names it: `against` is "<role> <name>", with the leader's pull
 * request when it is another one's; the evidence reads it once ("the baseline", not "baseline
 * baseline"; "the leading candidate `a` (#12)").
 */
function decidedAgainst(r: Reference, pr: number): { name: string; verdict: VerdictLike; label: string } {
  const name = `${r.role} ${r.name}${r.pr !== undefined && r.pr !== pr ? ` (#${r.pr})` : ''}`;
  return { name, verdict: r.verdict, label: describeReference(name) };
}
