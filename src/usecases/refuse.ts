// A Request is checked again when its turn comes (the monitor submits a queued Request when a slot
// frees): its candidate at the Request's head against the default branch's experiment, presets,
// clusters and rules AS THEY ARE NOW. One that no longer passes is never submitted: it gets the
// Outcome `refused` with the errors as evidence, its label goes, and the pull request is told in the
// candidate's submit comment (the errors in a code block: they quote user text).
import type { Octokit } from '../github/client.js';
import { setStateLabel } from '../github/labels.js';
import { updateRunState } from '../github/run-state.js';
import { stickyText } from '../github/sticky-comment.js';
import { writeSubmitComment } from '../github/submissions.js';
import { codeBlock } from '../github/user-text.js';
import { type Outcome, type RunRequest, type RunState, withOutcome } from '../lifecycle/model.js';
import { findMonitorComment, writeMonitorComment } from './monitor-comment.js';
import { type CandidateSource, type Prepared, prepareCandidateAt } from './prepare.js';

export interface PullTarget {
  owner: string;
  repo: string;
  botLogin: string;
}

/** The Request's candidate, validated and rendered at its head against the default branch now. */
export function recheckRequest(
  octokit: Octokit,
  repo: PullTarget,
  request: RunRequest,
  source: CandidateSource,
): Promise<Prepared> {
  return prepareCandidateAt(
    octokit,
    { owner: repo.owner, repo: repo.repo },
    request.headSha,
    request.path,
    source,
  );
}

/** The Outcome of a Request refused at its turn (pure). */
export function refusedOutcome(request: RunRequest, errors: readonly string[], at: string): Outcome {
  return {
    kind: 'refused',
    at,
    evidence: [
      `${request.path} at ${request.headSha.slice(0, 7)} no longer passes validation against the default branch: not submitted`,
      ...errors.slice(0, 10).map((e) => (e.length > 1900 ? `${e.slice(0, 1900)}…` : e)),
    ],
  };
}

/** The pull request's notice of a refused Request (Markdown; the errors fenced). */
export function refusalNotice(request: RunRequest, errors: readonly string[]): string {
  return [
    `### Request of \`${request.candidate}\` refused`,
    '',
    `\`${request.runName}\` was waiting for a free slot, but its candidate (\`${request.path}\` at ${request.headSha.slice(0, 7)}) no longer passes validation against the default branch's experiment and rules, which changed since \`/topo submit\`. It was not submitted and will not be:`,
    '',
    codeBlock(errors.slice(0, 10).join('\n')),
    '',
    'Fix the candidate (or the default branch), then comment `/topo submit` again.',
  ].join('\n');
}

/**
 * Writes the `refused` Outcome (first Outcome stands), removes the state label (unless
 * `keepLabel`: the monitor's pass recomputes it from the pull request's other candidates), and
 * tells the pull request in the candidate's submit comment, and in the candidate's monitor comment
 * (src/usecases/monitor-comment.ts) when that one shows this run.
 */
export async function refuseRequest(
  octokit: Octokit,
  repo: PullTarget,
  request: RunRequest,
  errors: readonly string[],
  at: string,
  options: { keepLabel?: boolean } = {},
): Promise<void> {
  const target = { ...repo, issue_number: request.pr };
  await updateRunState(octokit, target, (s) =>
    withOutcome(s, request.id, refusedOutcome(request, errors, at)),
  );
  if (!options.keepLabel)
    await setStateLabel(octokit, { owner: repo.owner, repo: repo.repo, issue_number: request.pr }, null);
  const body = refusalNotice(request, errors);
  await writeSubmitComment(octokit, target, request.candidate, body);
  const monitor = await findMonitorComment(octokit, target, request.candidate);
  if (stickyText(monitor)?.includes(request.runName))
    await writeMonitorComment(octokit, target, request.candidate, body, monitor);
}

/**
 * A queued Request of an experiment the monitor could not load from the default branch (removed,
 * invalid, its cluster or preset gone) never gets a turn: it is checked now and refused with the
 * errors. A Request that was submitted, has an Outcome, or is for an older head is left alone.
 */
export async function refuseOrphanedRequest(
  octokit: Octokit,
  repo: PullTarget,
  source: CandidateSource,
  pull: { headSha: string; state: RunState },
  request: RunRequest,
  log: (line: string) => void,
  options: { keepLabel?: boolean } = {},
): Promise<void> {
  const queued =
    request.headSha === pull.headSha && !pull.state.runs[request.id] && !pull.state.outcomes[request.id];
  if (!queued) return;
  const prepared = await recheckRequest(octokit, repo, request, source);
  // Valid, yet not loaded: the monitor needs the base preset in the checkout (validation would also
  // take the installed copy).
  const errors = prepared.ok
    ? [
        `the monitor cannot load experiment ${request.experiment} from the default branch: its base preset is not in ${source.topologiesDir}/presets`,
      ]
    : prepared.errors;
  log(`${request.runName}: refused: ${errors.join('; ')}`);
  await refuseRequest(octokit, repo, request, errors, new Date().toISOString(), options);
}
