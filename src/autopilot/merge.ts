// Whether a pull request may be merged now, as branch protection judges it: each required check's
// latest run on its head passed (success, neutral or skipped, as GitHub counts them). Pure.

/** Conclusions that pass a required status check on GitHub. */
const PASSING = new Set(['success', 'neutral', 'skipped']);

export interface MergeReadiness {
  /** Required checks whose latest run concluded otherwise (failure, cancelled, timed out, …). */
  failed: string[];
  /** Required checks with no run yet, or one still in progress. */
  pending: string[];
}

/** `checks`: each check's latest conclusion by name (null while it runs). Ready when both lists are empty. */
export function mergeReadiness(
  required: readonly string[],
  checks: Readonly<Record<string, string | null>>,
): MergeReadiness {
  const failed: string[] = [];
  const pending: string[] = [];
  for (const name of required) {
    const c = checks[name];
    if (c === undefined || c === null) pending.push(name);
    else if (!PASSING.has(c)) failed.push(name);
  }
  return { failed, pending };
}
