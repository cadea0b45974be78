// One truth for "the best": the record's current_best against the decisions its pull requests
// showed, read through the monitor's own model (src/report/standing.ts, what the comment's
// headline, the check run and the label show), not through the record's rule it checks.
import { standingOf } from '../../src/report/standing.js';
import type { ExperimentRecord, RecordRun } from '../../src/types/generated/record.js';

/** What a run's pull request showed: its standing, and the name of the reference it was decided against. */
export function shown(run: RecordRun): { outcome: string; reference: string | null } {
  const standing = standingOf({
    state: 'finished',
    decision: run.monitor_decision ?? null,
    comparisons: run.comparison ? [run.comparison] : [],
    hasValue: !!run.verdict?.value,
  });
  const against = run.monitor_decision?.against ?? run.comparison?.against ?? null;
  const reference = against
    ? against.replace(/^(baseline|current best|leading candidate)\s+/, '').replace(/ \(#\d+\)$/, '')
    : null;
  return { outcome: standing.outcome, reference };
}

/**
 * Where current_best contradicts the decisions: an accepted run shown better than the current best
 * (the reference it was decided against is still the best), an accepted run shown not better than
 * another accepted run yet the best, a best that is not an accepted run. Empty when they agree.
 */
export function bestProblems(record: ExperimentRecord): string[] {
  const best = record.current_best.topology;
  const accepted = new Set(record.runs.filter((r) => r.status === 'accepted').map((r) => r.name));
  const problems: string[] = [];
  if (best !== null && !accepted.has(best)) problems.push(`current_best ${best} is not an accepted run`);
  for (const run of record.runs) {
    if (run.status !== 'accepted') continue;
    const { outcome, reference } = shown(run);
    if (!reference || reference === run.name || !accepted.has(reference)) continue;
    if (outcome === 'better' && best === reference)
      problems.push(`${run.name} was accepted as better than ${reference}, yet ${reference} is current_best`);
    if (['worse', 'equivalent', 'not-better'].includes(outcome) && best === run.name)
      problems.push(`${run.name} was shown ${outcome} against ${reference}, yet it is current_best`);
  }
  return problems;
}
