// What each run of an experiment is decided against: the reference (the record's current best,
// else its baseline, else a baseline running now) and the leading candidate for the pruner. The
// comparison and decision against them are in ./decide.ts. Pure.
import { leadingCandidate } from '../analysis/decision.js';
import { decisionFigure, ownFigureOf, steadyAnchor } from '../analysis/figure.js';
import type { RunAnalysis } from '../analysis/observe.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { Decision } from '../types/generated/metrics.js';
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
  /** Its job was submitted (it runs, or ran). */
  started?: boolean;
  /** Its job ended (its data end there). */
  ended?: boolean;
  /** The decision its last look kept (its memory), when of this run: a settled one carries its figure. */
  decision?: Decision | null;
}

/**
 * The start of the reason a reference job is stopped with (src/monitor/reference-job.ts): its comment
 * keeps it in the reference's evidence, so a later look knows who cancelled the job (./judge.ts).
 */
export const REFERENCE_STOP = 'reference no longer needed';

/** experiment.yaml `reference`: a job of the current best beside the candidates, or its recorded run. */
export type ReferenceMode = NonNullable<Experiment['reference']>;

/** The default of experiment.yaml `reference` (the schema says the same). */
export const DEFAULT_REFERENCE_MODE: ReferenceMode = 'beside';

/**
 * How an experiment's candidates are decided: `beside` unless it says `recorded`, or its max_parallel
 * of 1 leaves no slot for a reference job beside a candidate (then `recorded`, and the note says why).
 */
export function referenceModeOf(x: Pick<Experiment, 'reference' | 'max_parallel'>): {
  mode: ReferenceMode;
  note: string | null;
} {
  const asked = x.reference ?? DEFAULT_REFERENCE_MODE;
  if (asked === 'beside' && x.max_parallel === 1)
    return {
      mode: 'recorded',
      note: 'max_parallel 1 leaves no slot for a reference job beside a candidate: decided against the recorded run',
    };
  return { mode: asked, note: null };
}

/**
 * What the candidates are decided against: the record's current best, else its baseline, and, when
 * a job of it runs (or ran) beside them (`reference: beside`), that job's own verdict at equal run
 * age; else a baseline running now (its live projection).
 */
export function referenceOf(exp: JudgeStanding, observed: readonly Judged[]): Reference | null {
  const recorded = exp.best
    ? measuredReference('current best', exp.best)
    : exp.baseline
      ? measuredReference('baseline', exp.baseline)
      : null;
  if (recorded) return besideOf(recorded, observed) ?? recorded;
  const base = observed.find((o) => o.c.candidate === baselineName(exp) && o.analysis);
  const verdict = base?.analysis?.observation.verdict;
  if (!base || !verdict || base.analysis?.observation.failure) return null;
  return {
    role: 'baseline',
    name: base.c.candidate,
    verdict,
    value: verdict.value ?? null,
    figure:
      ownFigureOf(verdict, base.analysis?.observation.stable_metrics.seconds_per_rollout_full_run)?.value ??
      null,
    live: true,
  };
}

/**
 * The reference job of `recorded` beside the candidates: the one that runs, else the last that ran.
 * One not started yet (queued for a slot) is not one: the candidates are decided against the recorded
 * run meanwhile. One that started without data yet is read as `no-data` (the candidates wait for it);
 * one that ended is read as it was at its end (its `ended` says so); one that failed before any
 * projection leaves the recorded run.
 */
function besideOf(recorded: Reference, observed: readonly Judged[]): Reference | null {
  const jobs = observed.filter(
    (o) => o.c.role === 'reference' && o.c.candidate === recorded.name && o.started,
  );
  const pick = jobs.find((o) => !o.ended) ?? jobs.at(-1);
  if (!pick) return null;
  const beside = { runName: pick.c.runName ?? pick.c.candidate, pr: pick.c.pr, ended: !!pick.ended };
  const observation = pick.analysis?.observation;
  if (!observation?.verdict.projected_full_run) {
    if (pick.ended) return null;
    return { ...recorded, verdict: { state: 'no-data' }, value: null, live: true, beside };
  }
  const verdict = observation.verdict;
  return { ...recorded, verdict, value: verdict.value ?? null, live: true, beside };
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
      ? [
          {
            name: o.c.candidate,
            verdict: o.analysis.observation.verdict,
            pr: o.c.pr,
            reading: o.analysis.observation.stable_metrics.seconds_per_rollout_full_run,
            decision: o.decision,
          },
        ]
      : [],
  );
  const lead = leadingCandidate(runs, reference?.verdict ?? null);
  return lead
    ? {
        role: 'leading candidate',
        name: lead.name,
        verdict: lead.verdict,
        value: null,
        figure: leaderFigure(lead),
        live: true,
        pr: lead.pr,
        contenders: runs.length,
      }
    : null;
}

/**
 * The leader's steady figure, what a loser's change (measured at equal run age) is anchored on: its
 * settled decision's figure once it has one, else its steady estimate, never its full-run reading
 * (start-up included: a leader read at 14.23 s early settled at 8.28 s). src/analysis/figure.ts.
 */
function leaderFigure(lead: {
  verdict: Reference['verdict'];
  reading?: number | null;
  decision?: Decision | null;
}): number | null {
  return decisionFigure(lead.decision)?.value ?? steadyAnchor(ownFigureOf(lead.verdict, lead.reading));
}
