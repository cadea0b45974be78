// The monitor's sticky comment of ONE candidate: a pull request may carry several candidates, each
// with a comment of its own (purpose `monitor-<candidate>`), read by the monitor (its memory of the
// last pass), the record (the merged candidate's observation) and a refusal. A comment written
// before candidates had comments of their own (purpose `monitor`) is still that candidate's when
// its observation block names a run of the candidate; the next write turns it into the new purpose
// in place (same comment ids), so no pull request ends up with two comments for one candidate.
import type { Octokit } from '../github/client.js';
import {
  type ListedComment,
  type StickyComment,
  stickyParts,
  stickyText,
  upsertStickyComment,
} from '../github/sticky-comment.js';
import { parseObservationBlock } from '../report/observation-block.js';
import { candidateOfRunName } from '../topology/run-name.js';

/** The purpose of candidate `candidate`'s monitor comment (as src/github/submissions.ts submitPurpose). */
export function monitorPurpose(candidate: string): string {
  return `monitor-${candidate}`;
}

/** The purpose of the one monitor comment per pull request written before multi-candidate support. */
export const LEGACY_MONITOR_PURPOSE = 'monitor';

/** Whether `runName` is a run of `candidate` (with a label, or from before labels existed). */
export function isRunOfCandidate(runName: string, candidate: string): boolean {
  return candidateOfRunName(runName) === candidate;
}

/**
 * Pure: the parts of `candidate`'s monitor comment among a pull request's comments: its own, else
 * the legacy `monitor` comment when that one shows a run of the candidate, else none.
 */
export function monitorCommentParts(
  comments: readonly ListedComment[],
  candidate: string,
  botLogin: string,
): StickyComment[] {
  const own = stickyParts(comments, { purpose: monitorPurpose(candidate), botLogin });
  if (own.length) return own;
  const legacy = stickyParts(comments, { purpose: LEGACY_MONITOR_PURPOSE, botLogin });
  const text = stickyText(legacy);
  const runName = text ? parseObservationBlock(text)?.run_name : undefined;
  return runName && isRunOfCandidate(runName, candidate) ? legacy : [];
}

export interface MonitorCommentTarget {
  owner: string;
  repo: string;
  issue_number: number;
  botLogin: string;
}

/** Candidate `candidate`'s monitor comment parts: one listing of the pull request's comments. */
export async function findMonitorComment(
  octokit: Octokit,
  target: MonitorCommentTarget,
  candidate: string,
): Promise<StickyComment[]> {
  // Listed once, filtered for both purposes (the legacy one only when the candidate has none).
  const listed = await listComments(octokit, target);
  return monitorCommentParts(listed, candidate, target.botLogin);
}

async function listComments(octokit: Octokit, target: MonitorCommentTarget): Promise<ListedComment[]> {
  const comments = await octokit.paginate(octokit.rest.issues.listComments, {
    owner: target.owner,
    repo: target.repo,
    issue_number: target.issue_number,
    per_page: 100,
  });
  return comments.map((c) => ({ id: c.id, login: c.user?.login, body: c.body, updatedAt: c.updated_at }));
}

/** The text of candidate `candidate`'s monitor comment, or undefined. */
export async function readMonitorComment(
  octokit: Octokit,
  target: MonitorCommentTarget,
  candidate: string,
): Promise<string | undefined> {
  return stickyText(await findMonitorComment(octokit, target, candidate));
}

/** Writes candidate `candidate`'s monitor comment (a legacy one is rewritten in place under the new purpose). */
export async function writeMonitorComment(
  octokit: Octokit,
  target: MonitorCommentTarget,
  candidate: string,
  body: string,
  known?: readonly StickyComment[],
): Promise<{ parts: StickyComment[] }> {
  const existing = known ?? (await findMonitorComment(octokit, target, candidate));
  return upsertStickyComment(octokit, { ...target, purpose: monitorPurpose(candidate), body }, existing);
}
