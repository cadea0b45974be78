// The monitor's check run carries the decision, so branch protection can require it: success only
// for a candidate decided at least min_improvement faster than the reference (or the reference
// itself), failure for a decided regression or a failed run, neutral for equivalent or ended
// without a decision, in progress (no conclusion) while measuring. Pure.
import { type Outcome, type Standing, standingOf } from './standing.js';

export type MonitorConclusion = 'success' | 'failure' | 'neutral';

export interface MonitorCheckRun {
  title: string;
  summary: string;
  /** Absent while measuring: the check run stays in progress. */
  conclusion?: MonitorConclusion;
}

const CONCLUSION: Record<Outcome, MonitorConclusion | undefined> = {
  better: 'success',
  reference: 'success',
  worse: 'failure',
  failed: 'failure',
  equivalent: 'neutral',
  undecided: 'neutral',
  measuring: undefined,
};

export function checkConclusion(s: Standing): MonitorConclusion | undefined {
  return CONCLUSION[s.outcome];
}

export function pct(x: number, digits = 1): string {
  const f = 10 ** digits;
  return `${Math.round(Math.abs(x) * 100 * f) / f}%`;
}

/** One plain line (no Markdown): the check run's title. */
export function standingTitle(s: Standing): string {
  const ref = (s.against ?? 'the reference').replace(/`/g, '');
  switch (s.outcome) {
    case 'better':
      return `Better than ${ref}${s.change ? ` by ${pct(s.change.value)}` : ''}`;
    case 'worse':
      return `Worse than ${ref}${s.change ? ` by ${pct(s.change.value)}` : ''}`;
    case 'equivalent':
      return `Within ±${pct(s.minImprovement)} of ${ref}`;
    case 'reference':
      return 'Reference run (baseline or current best)';
    case 'failed':
      return `Failed: ${s.reason ?? 'unknown'}`.slice(0, 200);
    case 'undecided':
      return `Ended without a decision (${s.reason ?? 'no value'})`;
    default:
      return `Measuring${s.expectedMinutes != null ? `: about ${Math.ceil(s.expectedMinutes)} min to a decision` : ''}`;
  }
}

/** The check run for a candidate; `summary` is the comment's headline (Markdown). */
export function monitorCheckRun(s: Standing, headline: string): MonitorCheckRun {
  const conclusion = checkConclusion(s);
  return { title: standingTitle(s), summary: headline, ...(conclusion ? { conclusion } : {}) };
}

export { standingOf };
