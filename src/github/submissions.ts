// Each candidate's submission comment on a pull request (`submit-<candidate>`, the bot's, edited in
// place) and the record of the bot's Requests it ends with (src/lifecycle/submissions.ts). Every
// write of the comment keeps the record; a command reads the pull request's runs from it and from the
// state block only.
import {
  parseSubmissionsBlock,
  renderSubmissionsBlock,
  type Submission,
  withSubmission,
} from '../lifecycle/submissions.js';
import type { Octokit } from './client.js';
import type { RunStateTarget } from './run-state.js';
import { findStickyComments, stickyText, upsertStickyComment } from './sticky-comment.js';

/** The sticky comment of one candidate's submission: a pull request may carry several candidates. */
export function submitPurpose(candidate: string): string {
  return `submit-${candidate}`;
}

const SUBMIT_MARKER = /^<!-- topo:sticky:submit-[a-z0-9][a-z0-9-]{0,39} -->$/;

/**
 * Writes the candidate's submission comment: `text`, then the record of its submissions with
 * `submission` added (none: the record as it stands, e.g. under a refusal notice).
 */
export async function writeSubmitComment(
  octokit: Octokit,
  target: RunStateTarget,
  candidate: string,
  text: string,
  submission?: Submission,
): Promise<void> {
  const sticky = { ...target, purpose: submitPurpose(candidate) };
  const parts = await findStickyComments(octokit, sticky);
  const kept = parseSubmissionsBlock(stickyText(parts) ?? '').submissions;
  const list = submission ? withSubmission(kept, submission) : kept;
  const body = list.length ? `${text}\n\n${renderSubmissionsBlock(list)}` : text;
  await upsertStickyComment(octokit, { ...sticky, body }, parts);
}

/**
 * The Requests the bot recorded on this pull request (every candidate's submission comment, one
 * listing), oldest first; records naming another pull request and entries that do not check are
 * left out and said in `problems`.
 */
export async function readSubmissions(
  octokit: Octokit,
  target: RunStateTarget,
): Promise<{ submissions: Submission[]; problems: string[] }> {
  const comments = await octokit.paginate(octokit.rest.issues.listComments, {
    owner: target.owner,
    repo: target.repo,
    issue_number: target.issue_number,
    per_page: 100,
  });
  const submissions: Submission[] = [];
  const problems: string[] = [];
  for (const c of comments) {
    const body = c.body ?? '';
    if (c.user?.login !== target.botLogin || !SUBMIT_MARKER.test(body.split('\n', 1)[0] ?? '')) continue;
    const read = parseSubmissionsBlock(body);
    problems.push(...read.problems.map((p) => `comment ${c.id}: ${p}`));
    for (const s of read.submissions) {
      if (s.request.pr === target.issue_number) submissions.push(s);
      else
        problems.push(`comment ${c.id}: ${s.request.runName} is a Request of #${s.request.pr}, not this one`);
    }
  }
  return {
    submissions: submissions.sort(
      (a, b) => Date.parse(a.request.requestedAt) - Date.parse(b.request.requestedAt),
    ),
    problems,
  };
}
