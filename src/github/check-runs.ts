// Check runs with annotations. GitHub takes at most 50 annotations per request and appends them
// across updates, so they go in batches of 50; the conclusion is sent with the last batch. An
// existing run of the same name on the same commit is reused when it has no annotations yet
// (re-runs of a pass that only reports a summary); otherwise a fresh run is created so
// annotations never duplicate.
import type { Octokit } from './client.js';
import { truncateComment } from './comment-split.js';

/** The check runs this project posts, by one fixed name each, so branch protection can require them. */
export const VALIDATE_CHECK_NAME = 'topo/validate';
/** The monitor's decision on a pull request's candidates (whatever the candidates are called). */
export const MONITOR_CHECK_NAME = 'topo/monitor';

export const ANNOTATIONS_PER_REQUEST = 50;
const TEXT_LIMIT = 65_535;

export interface CheckAnnotation {
  path: string;
  start_line: number;
  end_line: number;
  start_column?: number;
  end_column?: number;
  annotation_level: 'notice' | 'warning' | 'failure';
  message: string;
  title?: string;
  raw_details?: string;
}

export type CheckConclusion =
  | 'success'
  | 'failure'
  | 'neutral'
  | 'cancelled'
  | 'skipped'
  | 'timed_out'
  | 'action_required';

export interface CheckRunInput {
  owner: string;
  repo: string;
  name: string;
  head_sha: string;
  /** Omit for a run still in progress. */
  conclusion?: CheckConclusion;
  title: string;
  summary: string;
  text?: string;
  annotations?: CheckAnnotation[];
  details_url?: string;
  external_id?: string;
}

/** The latest run of the name on the commit, if it has no annotations yet (one listing). */
async function reusableRun(octokit: Octokit, input: CheckRunInput): Promise<{ id: number } | undefined> {
  const existing = await octokit.rest.checks.listForRef({
    owner: input.owner,
    repo: input.repo,
    ref: input.head_sha,
    check_name: input.name,
    filter: 'latest',
  });
  return existing.data.check_runs.find(
    (r) => r.head_sha === input.head_sha && r.output.annotations_count === 0,
  );
}

/** Pure: annotations in request-sized batches (at least one batch, possibly empty). */
export function annotationBatches(annotations: CheckAnnotation[]): CheckAnnotation[][] {
  const batches: CheckAnnotation[][] = [];
  for (let i = 0; i < annotations.length; i += ANNOTATIONS_PER_REQUEST) {
    batches.push(annotations.slice(i, i + ANNOTATIONS_PER_REQUEST));
  }
  return batches.length ? batches : [[]];
}

/** Columns are only allowed on single-line annotations (GitHub rejects them otherwise). */
function clean(a: CheckAnnotation): CheckAnnotation {
  if (a.start_line === a.end_line) return a;
  const { start_column: _s, end_column: _e, ...rest } = a;
  return rest;
}

/** One request's output: the title, the summary and text cut to GitHub's limit, one batch of annotations. */
function batchOutput(input: CheckRunInput, batch: CheckAnnotation[]) {
  return {
    title: input.title,
    summary: truncateComment(input.summary, TEXT_LIMIT),
    ...(input.text !== undefined ? { text: truncateComment(input.text, TEXT_LIMIT) } : {}),
    ...(batch.length ? { annotations: batch } : {}),
  };
}

/** The last request completes the run with its conclusion (when it has one); the ones before keep it in progress. */
function batchStatus(input: CheckRunInput, last: boolean) {
  return last && input.conclusion
    ? { status: 'completed' as const, conclusion: input.conclusion }
    : { status: 'in_progress' as const };
}

/**
 * `known`: the run of this name on this commit when the caller already read it (an id to update,
 * null for none: create), which saves the listing; only for runs that never carry annotations.
 */
export async function upsertCheckRun(
  octokit: Octokit,
  input: CheckRunInput,
  known?: number | null,
): Promise<{ id: number; created: boolean }> {
  const { owner, repo, name, head_sha } = input;
  const annotations = (input.annotations ?? []).map(clean);
  const reusable =
    known === undefined ? await reusableRun(octokit, input) : known ? { id: known } : undefined;
  const batches = annotationBatches(annotations);
  const output = (batch: CheckAnnotation[]) => batchOutput(input, batch);
  const common = {
    ...(input.details_url ? { details_url: input.details_url } : {}),
    ...(input.external_id ? { external_id: input.external_id } : {}),
  };
  const finish = (i: number) => batchStatus(input, i === batches.length - 1);
  let id: number;
  let created = false;
  if (reusable) {
    id = reusable.id;
    await octokit.rest.checks.update({
      owner,
      repo,
      check_run_id: id,
      ...common,
      ...finish(0),
      output: output(batches[0] ?? []),
    });
  } else {
    const run = await octokit.rest.checks.create({
      owner,
      repo,
      name,
      head_sha,
      ...common,
      ...finish(0),
      output: output(batches[0] ?? []),
    });
    id = run.data.id;
    created = true;
  }
  for (let i = 1; i < batches.length; i++) {
    await octokit.rest.checks.update({
      owner,
      repo,
      check_run_id: id,
      ...finish(i),
      output: output(batches[i] ?? []),
    });
  }
  return { id, created };
}

export type SummaryPlace = 'check-run' | 'job-summary';

/**
 * Posts a summary as a check run on the head commit when the token may (`checks: write`), so it
 * shows in the pull request's Checks tab; a token without it (a fork's pull request, a workflow
 * with read-only permissions) gets 403 and the caller keeps the job summary. Other errors throw.
 */
export async function postSummaryCheckRun(
  octokit: Octokit,
  input: CheckRunInput,
): Promise<{ place: SummaryPlace; reason?: string }> {
  try {
    await upsertCheckRun(octokit, input);
    return { place: 'check-run' };
  } catch (e) {
    const status = (e as { status?: number }).status;
    if (status === 403 || status === 404)
      return {
        place: 'job-summary',
        reason: `the token may not write check runs (HTTP ${status}: ${(e as Error).message}); give the job \`checks: write\` to see the summary in the pull request`,
      };
    throw e;
  }
}
