// What each run of an experiment is decided against: the reference (the record's current best,
// else its baseline, else a baseline running now) and the leading candidate for the pruner. The
// comparison and decision against them are in ./decide.ts. Pure.
import { leadingCandidate } from '../analysis/decision.js';
import type { RunAnalysis } from '../analysis/observe.js';
import {
  baselineName,
  type JudgedCandidate,
  type JudgeStanding,
  measuredReference,
  type Reference,
} from './decide.js';

/** A candidate as the reference and the leader are chosen from (its run's analysis, if any). */
export interface Judged {
  c: JudgedCandidate;
  analysis?: RunAnalysis;
}

export function referenceOf(exp: JudgeStanding, observed: readonly Judged[]): Reference | null {
  if (exp.best) return measuredReference('current best', exp.best);
  if (exp.baseline) return measuredReference('baseline', exp.baseline);
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
  exp: JudgeStanding,
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
