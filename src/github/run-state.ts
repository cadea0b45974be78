// The pull request's run state (src/lifecycle) in the bot's `lifecycle` comment: a short table for
// people and the hidden, schema-checked block the products read. Only comments by the bot's login
// are read (src/github/sticky-comment.ts), so nobody else can write a Request or an Outcome.
import { mergeRunStates, type RunState } from '../lifecycle/model.js';
import { parseRunStateBlock, RunStateError, renderRunStateBlock } from '../lifecycle/state-block.js';
import type { Octokit } from './client.js';
import { type PullSnapshot, readPullSnapshots, snapshotSticky } from './pull-snapshots.js';
import { findStickyComments, type StickyComment, upsertStickyComment } from './sticky-comment.js';
import { inlineText } from './user-text.js';

export const RUN_STATE_PURPOSE = 'lifecycle';

export interface RunStateTarget {
  owner: string;
  repo: string;
  issue_number: number;
  botLogin: string;
}

/** The run state of a pull request (empty when the bot never wrote one). Throws RunStateError on a corrupt block. */
export async function readRunState(octokit: Octokit, target: RunStateTarget): Promise<RunState> {
  const [first] = await findStickyComments(octokit, { ...target, purpose: RUN_STATE_PURPOSE });
  return parseRunStateBlock(first?.body);
}

/**
 * Read, change, write. The state is read again right before the write and merged, so a
 * concurrent writer's Requests and Outcomes are kept (the first Outcome of a Request stands).
 */
export async function updateRunState(
  octokit: Octokit,
  target: RunStateTarget,
  change: (state: RunState) => RunState,
): Promise<RunState> {
  return (await updateRunStateFrom(octokit, target, undefined, change)).state;
}

/**
 * `updateRunState` starting from `known` parts (the pass's snapshot) instead of a first read: one
 * listing of the comments (the re-read before the write, which guards concurrent writers) and the
 * write to the comment ids that listing found. Returns the parts as they now stand.
 */
export async function updateRunStateFrom(
  octokit: Octokit,
  target: RunStateTarget,
  known: readonly StickyComment[] | undefined,
  change: (state: RunState) => RunState,
): Promise<{ state: RunState; parts: StickyComment[] }> {
  const sticky = { ...target, purpose: RUN_STATE_PURPOSE };
  const next = change(known ? parseRunStateBlock(known[0]?.body) : await readRunState(octokit, target));
  const fresh = await findStickyComments(octokit, sticky);
  const merged = mergeRunStates(parseRunStateBlock(fresh[0]?.body), next);
  const final = mergeRunStates(next, merged);
  const written = await upsertStickyComment(
    octokit,
    { ...sticky, body: renderRunStateComment(final) },
    fresh,
  );
  return { state: final, parts: written.parts };
}

/** The comment: who asked what, for which commit, and what became of it. */
export function renderRunStateComment(state: RunState): string {
  const rows = [...state.requests]
    .sort((a, b) => Date.parse(b.requestedAt) - Date.parse(a.requestedAt))
    .slice(0, 30)
    .map((r) => {
      const run = state.runs[r.id];
      const outcome = state.outcomes[r.id];
      const what = outcome
        ? `**${outcome.kind}**${outcome.evidence[0] ? `: ${inlineText(outcome.evidence[0], 200)}` : ''}`
        : run
          ? 'submitted'
          : 'queued';
      return `| ${r.requestedAt.slice(0, 16).replace('T', ' ')} UTC | ${inlineText(r.login, 40)} | \`${r.candidate}\` at ${r.headSha.slice(0, 7)} | \`${r.runName}\` | ${run ? run.jobId : '—'} | ${what} |`;
    });
  return [
    '#### Runs of this pull request',
    '',
    'Only a `/topo submit` by someone with write access starts a run, for the head commit at that moment; a push supersedes it (the run is cancelled) and the new head waits for a new `/topo submit`. Labels only show the state.',
    '',
    '| requested | by | candidate | run name | Slurm job | outcome |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    renderRunStateBlock(state),
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
 * never run, so their comments are not even parsed). A pull request whose block does not check is
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
    const [first] = snapshotSticky(snap, { purpose: RUN_STATE_PURPOSE, botLogin: repo.botLogin });
    try {
      out.push({
        pr: snap.number,
        headSha: snap.headSha,
        labels: snap.labels,
        state: parseRunStateBlock(first?.body),
      });
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
