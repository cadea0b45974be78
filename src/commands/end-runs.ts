// What `/topo cancel` and `/topo stop` share: they end the pull request's open Requests (all, or the
// named candidate's), cancel their live jobs and write their Outcomes, and reach only what the pull
// request started (invariant 22): the Requests in its state and the runs the bot's own submission
// records on it name. Never a name derived from a file name or read from quoted text, never a run
// another open pull request's state holds.
import { setStateLabel } from '../github/labels.js';
import { openPullRunStates, readRunState, updateRunState } from '../github/run-state.js';
import { readSubmissions } from '../github/submissions.js';
import { recordedInState, recordedJobIds } from '../lifecycle/jobs.js';
import { openRequests, type RunRequest, withOutcome } from '../lifecycle/model.js';
import { experimentOnDefaultBranch } from '../usecases/prepare.js';
import { cancelCandidate, cancelRuns } from '../usecases/submit.js';
import type { CommandContext, HandlerResult } from './command.js';
import { listed, pullLabel, readOrRebuild, target, withSlurmOf } from './pull.js';

export type Ending = 'cancelled' | 'stopped';

const VERB: Record<Ending, string> = { cancelled: 'cancel', stopped: 'stop' };

/** The runner of `/topo cancel` (`cancelled`) or `/topo stop` (`stopped`). */
export function endRuns(ending: Ending): (ctx: CommandContext) => Promise<HandlerResult> {
  return async (ctx) => {
    const { state, note } = await readOrRebuild(ctx);
    const open = openRequests(state);
    const chosen = ctx.argument ? open.filter((r) => r.candidate === ctx.argument) : open;
    const lines: string[] = note ? [note] : [];
    const recorded = recordedInState(state); // a job that names no Request is ended only when recorded
    for (const request of chosen) lines.push(await endRequest(ctx, request, ending, recorded));
    // the bot's own records too: a state edited into a valid but empty one must not leave a job running
    const byRecord = await endByRecord(ctx, new Set(chosen.map((r) => r.runName)), ending);
    if (chosen.length === 0 && byRecord.length === 0)
      return { ok: true, message: nothingTo(ctx, open, ending) };
    lines.push(...byRecord);
    // A stopped run keeps its label (the monitor shows its verdict); a cancelled one leaves the rest's.
    if (ending === 'cancelled')
      await setStateLabel(
        ctx.octokit,
        target(ctx),
        await pullLabel(ctx, await readRunState(ctx.octokit, target(ctx))),
      );
    return { ok: true, message: lines.join('\n\n') };
  };
}

function nothingTo(ctx: CommandContext, open: readonly RunRequest[], ending: Ending): string {
  const verb = VERB[ending];
  if (!ctx.argument) return `No run of this pull request is queued or running: nothing to ${verb}.`;
  const others = open.length ? ` Open: ${listed([...new Set(open.map((r) => r.candidate))])}.` : '';
  return `No run of \`${ctx.argument}\` is queued or running on this pull request: nothing to ${verb}.${others}`;
}

/** Cancels one Request's live job and writes its Outcome; the reply's line. */
async function endRequest(
  ctx: CommandContext,
  request: RunRequest,
  ending: Ending,
  recorded: ReadonlySet<string>,
): Promise<string> {
  const exp = await experimentOnDefaultBranch(ctx.ports.source, request.experiment);
  if (!exp.ok) return `\`${request.runName}\`: cannot reach the experiment's cluster: ${exp.message}.`;
  const result = await withSlurmOf(ctx, exp, (slurm) =>
    cancelCandidate({ slurm }, { experimentId: request.experiment, jobName: request.runName, recorded }),
  );
  await updateRunState(ctx.octokit, target(ctx), (s) =>
    withOutcome(s, request.id, {
      kind: ending,
      at: ctx.ports.now().toISOString(),
      ...(result.cancelled[0] ? { jobId: result.cancelled[0] } : {}),
      evidence: [`/topo ${VERB[ending]} by ${ctx.actor}`],
    }),
  );
  if (result.cancelled.length === 0)
    return `\`${request.runName}\` had no queued or running job${result.job ? ` (its last job ${result.job.id} is ${result.job.state})` : ''}: its request is withdrawn, nothing runs for it.`;
  const kept = ending === 'stopped' ? ' Its metrics stay in Prometheus; the monitor keeps the verdict.' : '';
  return `\`${request.runName}\`: ${ending} job ${result.cancelled.join(', ')}.${kept}`;
}

/**
 * Cancels the live jobs of runs the bot's own submission records on this pull request name that the
 * state's open Requests did not cover (`handled`): exact run names, one reply line per job.
 */
async function endByRecord(
  ctx: CommandContext,
  handled: ReadonlySet<string>,
  ending: Ending,
): Promise<string[]> {
  const { submissions } = await readSubmissions(ctx.octokit, target(ctx));
  const others = await otherPullsRequests(ctx);
  const byExperiment = new Map<string, Set<string>>();
  for (const { request: r } of submissions) {
    if (handled.has(r.runName) || others.has(r.id) || (ctx.argument && r.candidate !== ctx.argument))
      continue;
    byExperiment.set(r.experiment, (byExperiment.get(r.experiment) ?? new Set()).add(r.runName));
  }
  const lines: string[] = [];
  for (const [experimentId, runNames] of byExperiment) {
    const exp = await experimentOnDefaultBranch(ctx.ports.source, experimentId);
    if (!exp.ok) continue;
    const recorded = recordedJobIds(submissions);
    const found = await withSlurmOf(ctx, exp, (slurm) =>
      cancelRuns({ slurm }, { experimentId, runNames, recorded }),
    );
    for (const j of found)
      lines.push(
        `\`${j.name}\`: ${ending} job ${j.id}, found by the bot's submission record on this pull request (the bot state does not hold its run: \`/topo state rebuild\` records it).`,
      );
  }
  return lines;
}

/** The Request ids other open pull requests' states hold (their runs are never this one's to reach). */
async function otherPullsRequests(ctx: CommandContext): Promise<Set<string>> {
  const { pulls } = await openPullRunStates(ctx.octokit, {
    owner: ctx.owner,
    repo: ctx.repo,
    botLogin: ctx.botLogin,
  });
  const ids = new Set<string>();
  for (const p of pulls)
    if (p.pr !== ctx.pullNumber) for (const r of [...p.state.requests, ...p.state.ended]) ids.add(r.id);
  return ids;
}
