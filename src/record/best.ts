// The record's best (current_best), by one rule that reads what the decisions read. Pure.
//
// Accepted runs are taken in the order they were recorded (recorded_at, then name: a function of the
// runs, not of the order outcomes were applied, so outcomes still commute). Each one displaces the
// best so far when:
//   1. it was decided against that best (its one decision names it): when
//      the decision is `better` (at least min_improvement faster, as its comment, check and label say);
//   2. else, that best was decided against it: when that decision is not `better`;
//   3. else (both were decided against an older reference, or not at all): when its figure
//      (./figure.ts: what its decision says, the value every surface shows) is lower.
// A run decided worse, equivalent or not-better than another accepted run never becomes the best.
import type { RecordRun } from '../types/generated/record.js';
import { decidedAgainst, figureOf } from './figure.js';
import { seconds } from './format.js';

/** How the best was chosen over the one before it. */
export type BestHow = 'first' | 'decided' | 'reverse' | 'estimate';

export interface BestStep {
  run: RecordRun;
  /** The best it displaced (none for the first accepted run). */
  over: RecordRun | null;
  how: BestHow;
  /** Its figure (./figure.ts), and the displaced best's. */
  value: number;
  overValue: number | null;
}

function recordedOrder(a: RecordRun, b: RecordRun): number {
  const t = (r: RecordRun) => {
    const ms = r.recorded_at ? Date.parse(r.recorded_at) : Number.NaN;
    return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms;
  };
  return t(a) - t(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/** Whether `run` displaces `best`, and by which of the three rules; null when it does not. */
function displaces(run: RecordRun, best: RecordRun): BestHow | null {
  const mine = decidedAgainst(run);
  if (mine?.reference === best.name) return mine.better ? 'decided' : null;
  const theirs = decidedAgainst(best);
  if (theirs?.reference === run.name) return theirs.better ? null : 'reverse';
  return (figureOf(run)?.value as number) < (figureOf(best)?.value as number) ? 'estimate' : null;
}

/**
 * The succession of bests over the accepted runs with a value, in recorded order: the last step is
 * the best. Empty when no run is accepted.
 */
export function bestSteps(runs: readonly RecordRun[]): BestStep[] {
  const accepted = runs.filter((r) => r.status === 'accepted' && figureOf(r) !== null);
  const names = new Set(accepted.map((r) => r.name));
  // decided not min_improvement faster than another accepted run: never the best (while one is left)
  const beaten = (r: RecordRun) => {
    const d = decidedAgainst(r);
    return !!d && !d.better && d.reference !== r.name && names.has(d.reference);
  };
  const eligible = accepted.some((r) => !beaten(r)) ? accepted.filter((r) => !beaten(r)) : accepted;
  const steps: BestStep[] = [];
  for (const run of [...eligible].sort(recordedOrder)) {
    const last = steps.at(-1);
    const value = figureOf(run)?.value as number;
    if (!last) {
      steps.push({ run, over: null, how: 'first', value, overValue: null });
      continue;
    }
    const how = displaces(run, last.run);
    if (how) steps.push({ run, over: last.run, how, value, overValue: last.value });
  }
  return steps;
}

/** Why the step's run is the best, in one sentence (current_best.decision_reasoning). */
export function bestReasoning(step: BestStep): string {
  const { run, over, how } = step;
  const pr = run.pull_request ? ` (pull request #${run.pull_request.number})` : '';
  const head = `${run.name} accepted${pr}: ${seconds(step.value)} s/rollout`;
  const claim = decidedAgainst(run)?.text;
  if (!over) return `${head} (first accepted candidate)${claim ? `; ${claim}` : ''}`;
  const vs = `${head} vs ${seconds(step.overValue)} s/rollout of ${over.name}`;
  if (how === 'decided') return `${vs}; ${claim}`;
  if (how === 'reverse') return `${vs}; ${over.name} was ${decidedAgainst(over)?.text}`;
  return `${vs}; not decided against each other, so chosen by their decided figures${claim ? `; ${claim}` : ''}`;
}
