// The monitor's check run carries the decision, so branch protection can require it: success only
// for a candidate decided at least min_improvement faster than the reference (or the reference
// itself), failure for a decided regression, a candidate that cannot be min_improvement faster and
// is not shown equivalent (not-better: nothing supports merging it) or a failed run, neutral for
// equivalent or ended without a decision, in progress (no conclusion) while measuring. Pure.
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
  'not-better': 'failure',
  // the provisional winner keeps measuring (the full-run guard is open); closed with the guard open, nothing decided it
  'better-at-equal-age': undefined,
  'faster-drift-not-ruled-out': 'neutral',
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
    case 'not-better':
      return `Not ${pct(s.minImprovement)} faster than ${ref}${s.change ? ` (${s.change.value > 0 ? '+' : '−'}${pct(s.change.value)})` : ''}`;
    case 'better-at-equal-age':
      return `Better than ${ref} at equal run age${s.change ? ` by ${pct(s.change.value)}` : ''}; a drift over the full run not ruled out yet`;
    case 'faster-drift-not-ruled-out':
      return `Faster than ${ref} at equal run age${s.change ? ` by ${pct(s.change.value)}` : ''}; drift not ruled out`;
    case 'reference':
      return 'Reference run (baseline or current best)';
    case 'failed':
      return `Failed: ${s.reason ?? 'unknown'}`.slice(0, 200);
    case 'undecided':
      return `Ended without a decision (${s.reason ?? 'no value'})`;
    default:
      return `Measuring${s.expectedMinutes != null ? `: about ${Math.ceil(s.expectedMinutes)} more run-minutes to a decision` : ''}`;
  }
}

/** The check run for a candidate; `summary` is the comment's headline (Markdown). */
export function monitorCheckRun(s: Standing, headline: string): MonitorCheckRun {
  const conclusion = checkConclusion(s);
  return { title: standingTitle(s), summary: headline, ...(conclusion ? { conclusion } : {}) };
}

export { standingOf };

/** How bad a conclusion is for the pull request: the worst candidate decides (in progress is between). */
const SEVERITY = (c: MonitorConclusion | undefined): number =>
  c === 'failure' ? 3 : c === undefined ? 2 : c === 'neutral' ? 1 : 0;

/**
 * The ONE check run of a pull request's head (`topo/monitor`, the name branch protection can
 * require) over all its candidates: merging records every candidate of the pull request, so it is
 * `failure` when any candidate failed or is decided worse, in progress while any is still measuring,
 * `neutral` when any is equivalent or undecided, `success` only when every candidate is better (or a
 * reference). One candidate: its own check run unchanged. Each candidate's headline in the summary.
 */
export function pullRequestCheckRun(
  checks: ReadonlyArray<{ candidate: string; check: MonitorCheckRun }>,
): MonitorCheckRun {
  const [only] = checks;
  if (checks.length === 1 && only) return only.check;
  const ordered = [...checks].sort(
    (a, b) =>
      SEVERITY(b.check.conclusion) - SEVERITY(a.check.conclusion) || a.candidate.localeCompare(b.candidate),
  );
  const worst = ordered[0]?.check.conclusion;
  const title = `${checks.length} candidates: ${ordered.map((c) => `${c.candidate}: ${c.check.title}`).join('; ')}`;
  const summary = ordered
    .map((c) => `### \`${c.candidate}\`: ${c.check.conclusion ?? 'measuring'}\n\n${c.check.summary}`)
    .join('\n\n');
  return {
    title: title.length > 200 ? `${title.slice(0, 199)}…` : title,
    summary,
    ...(worst ? { conclusion: worst } : {}),
  };
}
