// The decision half of the judge: THE sequential Decision of a run against its reference and the
// leading candidate, by the one decision path (src/analysis/decide-look.ts decideLook), with the
// figure it implies. Pure: it returns the decision and writes nothing into what it reads. Which
// reference a pass uses is chosen by ./reference.ts.
import { decideLook } from '../analysis/decide-look.js';
import {
  ASSUMED_BETWEEN_RUN,
  type BetweenRun,
  type DecisionAgainst,
  decisionOptions,
  type VerdictLike,
} from '../analysis/decision.js';
import { againstLiveRun, anchoredDecision, isDecided } from '../analysis/figure.js';
import { decisionReference, describeReference, sameReference } from '../analysis/reference.js';
import type { SettingsSource } from '../topology/settings.js';
import type { CandidateObservation, Decision, Interval } from '../types/generated/metrics.js';

export { isDecided };

/** A reference as the record keeps it: its value, and its verdict when the record carries it. */
export interface RecordedReference {
  name: string;
  value: Interval;
  /** The recorded run's verdict (its decision estimate and trajectory), when known. */
  verdict?: VerdictLike;
  /** What every surface shows it at (its figure in the record), when not `value`. */
  figure?: Interval;
}

/** The experiment's settings the judge reads (a whole experiment.yaml, or `topo analyze`'s flags). */
export type JudgedExperiment = SettingsSource;

/** What a run is judged within: the experiment and the record's references. */
export interface JudgeStanding {
  experiment: JudgedExperiment;
  baseline?: RecordedReference | null;
  best?: RecordedReference | null;
  /**
   * The spread between runs of one topology at different times, for a recorded reference (no job
   * beside the candidates): the record's estimate (src/record/reference-runs.ts betweenRunOf), else assumed.
   */
  betweenRun?: BetweenRun | null;
  /** GPUs a job of the experiment holds (the cluster's gpus_per_node). */
  gpusPerNode?: number;
}

/** The candidate a run stands for. */
export interface JudgedCandidate {
  candidate: string;
  /** Its pull request (0 when none: a run judged from the CLI). */
  pr: number;
  /** `reference`: the round's reference job, a run of the current best beside the candidates. */
  role?: 'reference';
  /** Its run's name (the reference job is told apart from the best's recorded run by it). */
  runName?: string;
}

/**
 * What a run is decided against: the current best, else the baseline (both measured, from the
 * record), else a baseline running now (its live projection); the leading candidate for the
 * pruner; any run a person names (`topo analyze --against`).
 */
export interface Reference {
  /** "current best" or "baseline"; "leading candidate" for the pruner's; "run" for a named run. */
  role: 'current best' | 'baseline' | 'leading candidate' | 'run';
  name: string;
  /** Its verdict: the decision reads its estimate (and, when there, its trajectory). */
  verdict: VerdictLike;
  /** Its value (the record's, or a live run's stable value). */
  value: Interval | null;
  /**
   * Its steady figure, what a decision against it is anchored at: its figure on every surface (for a
   * live leader, its settled decision's figure, else its steady estimate; never a start-up reading).
   */
  figure: number | null;
  /** A run judged now, not a measured one. */
  live: boolean;
  /** The leading candidate's pull request (named when it is another one's). */
  pr?: number;
  /** For the leading candidate: how many candidates it was picked among (the pruner splits its error). */
  contenders?: number;
  /**
   * The reference job running beside the candidates (experiment.yaml `reference: beside`): its run,
   * its pull request and whether its data have ended (stopped, failed or lost). Absent: recorded.
   */
  beside?: { runName: string; pr: number; ended: boolean };
}

/** The baseline's candidate name: the experiment's baseline, else `topo init`'s `baseline`. */
export function baselineName(standing: Pick<JudgeStanding, 'baseline'>): string {
  return standing.baseline?.name ?? 'baseline';
}

/** A reference measured in the record: its recorded verdict when there is one, else its value as stable. */
export function measuredReference(role: 'current best' | 'baseline', r: RecordedReference): Reference {
  return {
    role,
    name: r.name,
    verdict: r.verdict ?? { state: 'stable', projected_full_run: r.value },
    value: r.value,
    figure: (r.figure ?? r.value).value,
    live: false,
  };
}

/** What the sequential decision of a run reads besides its observation. */
export interface DecisionContext {
  reference?: Reference | null;
  /** The leading candidate: one that cannot beat it by min_improvement is not-better (pruned). */
  leader?: Reference | null;
  /** The decision of the last look (its comment's observation block): decisions are final. */
  previous?: Decision | null;
  /** The job ended: a decision it reached is kept as it was. */
  ended?: boolean;
}

/**
 * THE Decision of a run (the one place): against the current best, else the baseline, with the
 * experiment's min_improvement, else pruned against the leading candidate; a failed run gets none.
 * A decision that settles the run carries its figure (its reference's steady figure × (1 + the change)).
 */
export function decisionOf(
  standing: JudgeStanding,
  c: JudgedCandidate,
  observation: Pick<CandidateObservation, 'verdict' | 'failure'>,
  context: DecisionContext,
): Decision | null {
  const d = sequentialDecision(standing, c, observation, context);
  if (!d) return d;
  // anchored on the reference's steady figure (src/analysis/figure.ts anchoredDecision): a decision
  // kept against a leader that settled since follows its settled figure, also once that leader is
  // the record's current best (then the pass's reference, no longer its leader)
  const anchor = [context.reference, context.leader].find(
    (r) =>
      r &&
      (sameReference(asDecided(r, c.pr).reference, d.reference) ||
        (againstLiveRun(d) && r.name === d.reference.name)),
  )?.figure;
  return anchoredDecision(d, anchor ?? null);
}

function sequentialDecision(
  standing: JudgeStanding,
  c: JudgedCandidate,
  observation: Pick<CandidateObservation, 'verdict' | 'failure'>,
  { reference, leader, previous, ended }: DecisionContext,
): Decision | null {
  if (observation.failure) return null;
  const isReference = c.candidate === reference?.name || c.candidate === baselineName(standing);
  // a decision once reached stays, also when the job ended or the reference's run is gone; an ended
  // reference job keeps its last one (its evidence says why it was stopped)
  if ((ended || !reference) && isDecided(previous)) return previous;
  if (ended && c.role === 'reference' && previous?.state === 'reference') return previous;
  if (!reference && !isReference) return null;
  const lead = leader && leader.name !== c.candidate ? asDecided(leader, c.pr) : null;
  // the one decision path (src/analysis/decide-look.ts): the reference, the full-run guard, the
  // closings (horizon, reference ended, futility by forecast), and the pruner against the leader
  // while the reference's decision is open
  return decideLook(
    {
      candidate: observation.verdict,
      reference: reference ? asDecided(reference, c.pr, standing) : itself(c),
      leader: lead ? { ...lead, contenders: leader?.contenders ?? 2 } : null,
      previous,
      isReference,
    },
    decisionOptions(standing.experiment),
  ).decision;
}

/**
 * A reference as the decision names it (a structured reference: its role, its name, the leader's
 * pull request when it is another one's) and as its evidence reads it ("the baseline", not
 * "baseline baseline"; "the leading candidate `a` (#12)").
 */
function asDecided(
  r: Reference,
  pr: number,
  standing?: JudgeStanding,
): DecisionAgainst & { reference: Decision['reference'] } {
  const reference = decisionReference(r.role, r.name, r.pr !== undefined && r.pr !== pr ? r.pr : null);
  const against = { name: r.name, verdict: r.verdict, label: describeReference(reference), reference };
  // a job beside the candidates ends when it stops; a recorded run has ended, and ran at another time
  if (r.beside) return { ...against, ended: r.beside.ended };
  if (r.live || r.role === 'leading candidate' || !standing) return against;
  return { ...against, ended: true, betweenRun: standing.betweenRun ?? assumedBetweenRun() };
}

/** The between-run term while the record holds no repeated runs of one topology to estimate it. */
function assumedBetweenRun(): BetweenRun {
  return {
    logSd: ASSUMED_BETWEEN_RUN,
    text: `assumed (${Math.round(ASSUMED_BETWEEN_RUN * 1000) / 10}%): the record holds no repeated runs of one topology to estimate it`,
  };
}

/** The reference itself, with nothing to be decided against: its decision names itself. */
function itself(c: JudgedCandidate): DecisionAgainst {
  const reference = decisionReference('baseline', c.candidate);
  return { name: c.candidate, verdict: { state: 'no-data' }, reference };
}
