// The pull request's run state (src/lifecycle) in the bot's `lifecycle` comment: a short table for
// people and the hidden, schema-checked block the products read. Only comments by the bot's login
// are read (src/github/sticky-comment.ts), so nobody else can write a Request or an Outcome.
//
// The state is ONE comment, never split (src/lifecycle/bounds.ts keeps it to a comment's size); a
// state in several parts (an older version split long states) or cut is "bot state unreadable: …"
// until a writer rebuilds it (`/topo state rebuild`). Writes are compare-and-swap on the comment:
// the change is computed from the state as read; right before the write the comment is read again
// and must be unchanged (body and `updated_at`), and right after it the comment must hold what was
// written; otherwise the change is applied again to the state as it now is (every change is
// idempotent: a Request, Run or Outcome already there stays as it is), after a random pause.
import { fitRunState } from '../lifecycle/bounds.js';
import type { EndedRequest, RunRequest, RunState } from '../lifecycle/model.js';
import { parseRunStateBlock, RunStateError, renderRunStateBlock } from '../lifecycle/state-block.js';
import type { Octokit } from './client.js';
import { GITHUB_COMMENT_LIMIT } from './comment-split.js';
import { type PullSnapshot, readPullSnapshots, snapshotSticky } from './pull-snapshots.js';
import { findStickyComments, type StickyComment, stickyMarker } from './sticky-comment.js';
import { inlineText } from './user-text.js';

export const RUN_STATE_PURPOSE = 'lifecycle';

/** How a writer that keeps meeting another one gives up (each attempt re-reads and re-applies). */
export const RUN_STATE_WRITE_ATTEMPTS = 8;

export interface RunStateTarget {
  owner: string;
  repo: string;
  issue_number: number;
  botLogin: string;
}

export interface RunStateWriteOptions {
  /** Pause before attempt `n` (2, 3, …) after a conflict; random by default so writers drift apart. */
  backoffMs?: (attempt: number) => number;
}

const REBUILD_HINT = 'someone with write access can rebuild it with `/topo state rebuild`';

/** The state the bot's lifecycle comment parts hold: none is an empty state; more than one part is an error. */
export function runStateOf(parts: readonly StickyComment[]): RunState {
  if (parts.length > 1)
    throw new RunStateError(
      `the state is split across ${parts.length} comments (an older version split long states); ${REBUILD_HINT}`,
    );
  try {
    return parseRunStateBlock(parts[0]?.body);
  } catch (e) {
    if (e instanceof RunStateError && !e.message.includes('/topo state rebuild'))
      e.message = `${e.message}; ${REBUILD_HINT}`;
    throw e;
  }
}

/** The run state of a pull request (empty when the bot never wrote one). Throws RunStateError when unreadable. */
export async function readRunState(octokit: Octokit, target: RunStateTarget): Promise<RunState> {
  return runStateOf(await findStickyComments(octokit, { ...target, purpose: RUN_STATE_PURPOSE }));
}

/** Read, change, compare-and-swap (see the file's opening comment). Returns the state written. */
export async function updateRunState(
  octokit: Octokit,
  target: RunStateTarget,
  change: (state: RunState) => RunState,
  options: RunStateWriteOptions = {},
): Promise<RunState> {
  return (await updateRunStateFrom(octokit, target, undefined, change, options)).state;
}

/**
 * `updateRunState` starting from `known` parts (the pass's snapshot) instead of a listing: the
 * snapshot is the version the swap expects. Returns the state and the parts as they now stand.
 */
export async function updateRunStateFrom(
  octokit: Octokit,
  target: RunStateTarget,
  known: readonly StickyComment[] | undefined,
  change: (state: RunState) => RunState,
  options: RunStateWriteOptions = {},
): Promise<{ state: RunState; parts: StickyComment[] }> {
  const sticky = { ...target, purpose: RUN_STATE_PURPOSE };
  const backoff = options.backoffMs ?? ((n: number) => 50 * n + Math.floor(Math.random() * 200));
  let parts = known ? [...known] : await findStickyComments(octokit, sticky);
  for (let attempt = 1; attempt <= RUN_STATE_WRITE_ATTEMPTS; attempt++) {
    if (attempt > 1) await new Promise((r) => setTimeout(r, backoff(attempt)));
    const state = fitRunState(change(runStateOf(parts)));
    const body = `${stickyMarker(RUN_STATE_PURPOSE)}\n${renderRunStateComment(state)}`;
    const written = await swap(octokit, sticky, parts[0], body);
    if ('written' in written) return { state, parts: [written.written] };
    parts = written.now;
  }
  throw new Error(
    `the bot state of #${target.issue_number} kept changing under ${RUN_STATE_WRITE_ATTEMPTS} attempts to write it (another writer was busy); nothing was lost: try again`,
  );
}

type Swap = { written: StickyComment } | { now: StickyComment[] };

/** One compare-and-swap of the lifecycle comment: written, or the parts as they now are. */
async function swap(
  octokit: Octokit,
  target: RunStateTarget & { purpose: string },
  part: StickyComment | undefined,
  body: string,
): Promise<Swap> {
  const { owner, repo, issue_number } = target;
  if (part?.body === body) return { written: part };
  if (!part) {
    const { data } = await octokit.rest.issues.createComment({ owner, repo, issue_number, body });
    // Two first writers: the older comment is the state; the younger one's change goes into it.
    const listed = await findStickyComments(octokit, target);
    if (listed[0]?.id === data.id) return { written: { id: data.id, body, updatedAt: data.updated_at } };
    await octokit.rest.issues.deleteComment({ owner, repo, comment_id: data.id });
    return { now: listed.filter((p) => p.id !== data.id) };
  }
  const before = await readComment(octokit, target, part.id);
  if (!before) return { now: await findStickyComments(octokit, target) };
  if (before.body !== part.body || Date.parse(before.updatedAt) !== Date.parse(part.updatedAt))
    return { now: [before] };
  const { data } = await octokit.rest.issues.updateComment({ owner, repo, comment_id: part.id, body });
  // A writer that checked before this write and wrote after it has dropped this change: again.
  const after = await readComment(octokit, target, part.id);
  if (!after) return { now: await findStickyComments(octokit, target) };
  if (after.body !== body) return { now: [after] };
  return { written: { id: part.id, body, updatedAt: data.updated_at } };
}

async function readComment(
  octokit: Octokit,
  target: { owner: string; repo: string },
  id: number,
): Promise<StickyComment | undefined> {
  try {
    const { data } = await octokit.rest.issues.getComment({ ...target, comment_id: id });
    return { id, body: data.body ?? '', updatedAt: data.updated_at };
  } catch (e) {
    if ((e as { status?: number }).status === 404) return undefined;
    throw e;
  }
}

/**
 * The recovery path (`/topo state rebuild`): `merge` gets the state as read (null when it cannot be
 * read) and returns the state to keep. A readable state is changed by compare-and-swap like any
 * write; an unreadable one (no writer can change it) is replaced by one comment, and the parts an
 * older version split it into are deleted.
 */
export async function replaceRunState(
  octokit: Octokit,
  target: RunStateTarget,
  merge: (current: RunState | null) => RunState,
): Promise<RunState> {
  const sticky = { ...target, purpose: RUN_STATE_PURPOSE };
  const parts = await findStickyComments(octokit, sticky);
  try {
    runStateOf(parts);
    return (await updateRunStateFrom(octokit, target, parts, (s) => merge(s))).state;
  } catch (e) {
    if (!(e instanceof RunStateError)) throw e;
  }
  const state = fitRunState(merge(null));
  const body = `${stickyMarker(RUN_STATE_PURPOSE)}\n${renderRunStateComment(state)}`;
  const { owner, repo, issue_number } = target;
  const [first, ...rest] = parts;
  if (first) await octokit.rest.issues.updateComment({ owner, repo, comment_id: first.id, body });
  else await octokit.rest.issues.createComment({ owner, repo, issue_number, body });
  for (const stale of rest) await octokit.rest.issues.deleteComment({ owner, repo, comment_id: stale.id });
  return state;
}

const EXPLAIN =
  'Only a `/topo submit` by someone with write access starts a run, for the head commit at that moment; a push supersedes it (the run is cancelled) and the new head waits for a new `/topo submit`; closing the pull request ends every open run. Labels only show the state.';

/** A table row of a Request kept whole. */
function requestRow(state: RunState, r: RunRequest): string {
  const run = state.runs[r.id];
  const outcome = state.outcomes[r.id];
  const what = outcome
    ? `**${outcome.kind}**${outcome.evidence[0] ? `: ${inlineText(outcome.evidence[0], 200)}` : ''}`
    : run
      ? 'submitted'
      : 'queued';
  return `| ${r.requestedAt.slice(0, 16).replace('T', ' ')} UTC | ${inlineText(r.login, 40)} | \`${r.candidate}\` at ${r.headSha.slice(0, 7)} | \`${r.runName}\` | ${run ? run.jobId : '—'} | ${what} |`;
}

/** A table row of an ended Request the state keeps as a summary. */
function endedRow(e: EndedRequest): string {
  return `| — | — | \`${e.candidate}\` | \`${e.runName}\` | ${e.jobId ?? '—'} | **${e.kind}** at ${e.at.slice(0, 16).replace('T', ' ')} UTC |`;
}

/** "12 earlier runs ended (…)": what the summary no longer lists. */
function forgottenLine(state: RunState): string[] {
  const counts = Object.entries(state.forgotten).filter(([, n]) => (n ?? 0) > 0);
  const total = counts.reduce((n, [, c]) => n + (c ?? 0), 0);
  if (!total) return [];
  return [
    '',
    `${total} earlier run${total === 1 ? '' : 's'} ended (${counts.map(([k, n]) => `${n} ${k}`).join(', ')}) and ${total === 1 ? 'is' : 'are'} no longer listed: see the check runs, and the experiment record once this pull request closes.`,
  ];
}

/**
 * The comment: who asked what, for which commit, and what became of it, newest first, with as many
 * rows as fit beside the state block in one comment.
 */
export function renderRunStateComment(state: RunState): string {
  const rows = [
    ...[...state.requests]
      .sort((a, b) => Date.parse(b.requestedAt) - Date.parse(a.requestedAt))
      .map((r) => requestRow(state, r)),
    ...[...state.ended].reverse().map(endedRow),
  ];
  const head = [
    '#### Runs of this pull request',
    '',
    EXPLAIN,
    '',
    '| requested | by | candidate | run name | Slurm job | outcome |',
    '|---|---|---|---|---|---|',
  ];
  const tail = [...forgottenLine(state), '', renderRunStateBlock(state)];
  const room = GITHUB_COMMENT_LIMIT - stickyMarker(RUN_STATE_PURPOSE, 99).length - 200;
  let size = [...head, ...tail].join('\n').length;
  const shown: string[] = [];
  for (const row of rows.slice(0, 30)) {
    if (size + row.length + 1 > room) break;
    shown.push(row);
    size += row.length + 1;
  }
  const more = rows.length - shown.length;
  return [
    ...head,
    ...shown,
    ...(more > 0 ? ['', `_${more} more row${more === 1 ? '' : 's'} in the state below._`] : []),
    ...tail,
  ].join('\n');
}

export interface PullRunState {
  pr: number;
  headSha: string;
  labels: string[];
  state: RunState;
}

/**
 * Pure: the run state of each snapshot whose branch lives in the repository (fork pull requests
 * never run, so their comments are not even parsed). A pull request whose state cannot be read is
 * reported in `corrupt`, never guessed at.
 */
export function pullRunStates(
  snapshots: readonly PullSnapshot[],
  repo: { owner: string; repo: string; botLogin: string },
): { pulls: PullRunState[]; corrupt: Array<{ pr: number; message: string }> } {
  const out: PullRunState[] = [];
  const corrupt: Array<{ pr: number; message: string }> = [];
  for (const snap of snapshots) {
    if (snap.headRepository !== `${repo.owner}/${repo.repo}`) continue;
    const parts = snapshotSticky(snap, { purpose: RUN_STATE_PURPOSE, botLogin: repo.botLogin });
    try {
      out.push({ pr: snap.number, headSha: snap.headSha, labels: snap.labels, state: runStateOf(parts) });
    } catch (e) {
      if (!(e instanceof RunStateError)) throw e;
      corrupt.push({ pr: snap.number, message: e.message });
    }
  }
  return { pulls: out, corrupt };
}

/** The run state of every open pull request of the repository, in one paginated GraphQL query. */
export async function openPullRunStates(
  octokit: Octokit,
  repo: { owner: string; repo: string; botLogin: string },
): Promise<{ pulls: PullRunState[]; corrupt: Array<{ pr: number; message: string }> }> {
  return pullRunStates((await readPullSnapshots(octokit, repo)).pulls, repo);
}
