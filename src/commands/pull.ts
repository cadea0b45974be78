// What the pull request's commands share: the pull request as a state target, its label by the one
// rule, a Slurm client of an experiment's cluster, and the state read (or rebuilt when it cannot be
// read, so a cancel still reaches every run).
import { type RunStateTarget, readRunState } from '../github/run-state.js';
import { inlineText } from '../github/user-text.js';
import type { RunState } from '../lifecycle/model.js';
import { RunStateError } from '../lifecycle/state-block.js';
import { endedCandidate, ranRequests, requestsStateLabel } from '../report/state-label.js';
import type { SlurmClient } from '../slurm/types.js';
import { readMonitorComment } from '../usecases/monitor-comment.js';
import type { ExperimentOnDefaultBranch } from '../usecases/prepare.js';
import { type RebuildResult, rebuildRunState } from '../usecases/rebuild.js';
import type { CommandContext } from './command.js';

export function target(ctx: CommandContext): RunStateTarget {
  return { owner: ctx.owner, repo: ctx.repo, issue_number: ctx.pullNumber, botLogin: ctx.botLogin };
}

/** `a`, `b`: names for a reply. */
export const listed = (names: readonly string[]) => names.map((n) => `\`${n}\``).join(', ');

/** Runs `use` with a Slurm client of the experiment's cluster, closed afterwards. */
export function withSlurmOf<T>(
  ctx: CommandContext,
  exp: Extract<ExperimentOnDefaultBranch, { ok: true }>,
  use: (slurm: SlurmClient) => Promise<T>,
): Promise<T> {
  return ctx.ports.withSlurm(exp.clusterName, exp.cluster, use);
}

/**
 * The pull request's label by the one rule (src/report/state-label.ts): its standing Requests and
 * the candidates whose runs ended, as their final monitor comments say (whatever Slurm forgot).
 */
export async function pullLabel(ctx: CommandContext, state: RunState) {
  const ended = await Promise.all(
    ranRequests(state).map(async (r) =>
      endedCandidate(r.candidate, await readMonitorComment(ctx.octokit, target(ctx), r.candidate)),
    ),
  );
  return requestsStateLabel(
    state,
    ctx.headSha,
    ended.filter((c) => c !== null),
  );
}

/** The state again from Slurm's jobs and the bot's own records on the pull request. */
export function rebuildFor(ctx: CommandContext): Promise<RebuildResult> {
  return rebuildRunState(
    {
      octokit: ctx.octokit,
      owner: ctx.owner,
      repo: ctx.repo,
      botLogin: ctx.botLogin,
      source: ctx.ports.source,
      withSlurm: (exp, use) => withSlurmOf(ctx, exp, use),
      now: ctx.ports.now,
    },
    { number: ctx.pullNumber, headSha: ctx.headSha, actor: ctx.actor },
  );
}

/**
 * The state for a cancel: at any size every job of the pull request can be cancelled, so an
 * unreadable state is rebuilt first (and the reply says so).
 */
export async function readOrRebuild(ctx: CommandContext): Promise<{ state: RunState; note: string }> {
  try {
    return { state: await readRunState(ctx.octokit, target(ctx)), note: '' };
  } catch (error) {
    if (!(error instanceof RunStateError)) throw error;
    const rebuilt = await rebuildFor(ctx);
    const cancelled = rebuilt.cancelled.length
      ? `; job ${rebuilt.cancelled.join(', ')} of runs that no longer stand cancelled`
      : '';
    return {
      state: rebuilt.state,
      note: `${inlineText(error.message, 400)}. It was rebuilt from Slurm's jobs and the bot's own records on this pull request first (${rebuilt.found} runs named, ${rebuilt.known} known to Slurm${cancelled}).`,
    };
  }
}
