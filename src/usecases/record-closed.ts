// The record action's pass over one closed pull request: which pull request to record (the `pr`
// input's, else the event's closed one), the record use case (src/usecases/record.ts) run again on
// a dropped connection, and what the pull request is told when nothing could be recorded.
import type { Octokit } from '../github/client.js';
import { defaultBackoff, isTransient } from '../github/commits.js';
import { codeBlock } from '../github/user-text.js';
import { RunStateError } from '../lifecycle/state-block.js';
import {
  type ClosedPullRequest,
  type RecordDeps,
  RecordOutageError,
  type RecordResult,
  recordClosedPullRequest,
} from './record.js';

/** The workflow's event, and the `pr` input (empty: the event's pull request). */
export interface RecordEvent {
  name: string;
  payload: { action?: string; pull_request?: ClosedPullRequest };
  pr: string;
}

/**
 * The pull request to record, or why the event is ignored (a pull_request event other than
 * closed). Throws on a malformed `pr` input, another event, or a pull request still open.
 */
export async function pullToRecord(
  octokit: Octokit,
  { owner, repo }: { owner: string; repo: string },
  event: RecordEvent,
): Promise<{ pull: ClosedPullRequest } | { ignored: string }> {
  let pull: ClosedPullRequest;
  if (event.pr) {
    if (!/^[1-9][0-9]{0,9}$/.test(event.pr)) throw new Error(`input pr must be a number, got "${event.pr}"`);
    pull = (await octokit.rest.pulls.get({ owner, repo, pull_number: Number(event.pr) })).data;
  } else if (event.name === 'pull_request' || event.name === 'pull_request_target') {
    if (event.payload.action !== 'closed')
      return {
        ignored: `ignored: ${event.name} ${event.payload.action} (the record is written when a pull request closes)`,
      };
    pull = event.payload.pull_request as ClosedPullRequest;
  } else {
    throw new Error(
      `the record action runs on pull_request closed (or with the pr input); got ${event.name}`,
    );
  }
  if (pull.state !== 'closed')
    throw new Error(`pull request #${pull.number} is still open: nothing to record yet`);
  return { pull };
}

/**
 * Every step re-reads GitHub and the commit is compare-and-swap, so a dropped connection is
 * answered by running the whole pass again; what still fails is told on the pull request.
 */
export async function recordWithRetries(
  deps: RecordDeps,
  pull: ClosedPullRequest,
  warn: (line: string) => void,
): Promise<RecordResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await recordClosedPullRequest(deps, pull);
    } catch (error) {
      if (attempt >= 3 || !isTransient(error)) {
        const body = recordFailureComment(error as Error, pull.number);
        try {
          await deps.octokit.rest.issues.createComment({
            owner: deps.owner,
            repo: deps.repo,
            issue_number: pull.number,
            body,
          });
        } catch (e) {
          warn(`could not comment on #${pull.number}: ${(e as Error).message}`);
        }
        throw error;
      }
      warn(`attempt ${attempt} failed (${(error as Error).message}); running the record pass again`);
      await new Promise((r) => setTimeout(r, defaultBackoff(attempt)));
    }
  }
}

/**
 * Nothing was recorded: what the pull request is told, with what to fix (a corrupt record names its
 * file and line) and how to record it again (the workflow by hand, with this pull request's number).
 */
export function recordFailureComment(error: Error, pr: number): string {
  const outage = error instanceof RecordOutageError;
  const unreadable = error instanceof RunStateError;
  return [
    outage
      ? '**The experiment record was not written**: a service it needs could not be reached (an outage, not a result of this candidate):'
      : '**The experiment record could not be written** for this pull request:',
    '',
    codeBlock(error.message),
    '',
    outage
      ? `Once it is back, run the record workflow by hand (Actions → record → Run workflow) with pull request number \`${pr}\`.`
      : unreadable
        ? `Rebuild the state first (\`/topo state rebuild\`, by someone with write access), then run the record workflow by hand (Actions → record → Run workflow) with pull request number \`${pr}\`.`
        : `Fix what the message names on the default branch, then run the record workflow by hand (Actions → record → Run workflow) with pull request number \`${pr}\`.`,
  ].join('\n');
}
