// `/topo submit [<candidate>]`: validates each candidate of the pull request (or the one named; its
// text from the head commit, as data) against the DEFAULT BRANCH's experiment and rules, and writes
// one Request per valid candidate (src/lifecycle) to the bot-owned run state: each its own run name,
// slot and comment. Only then is each run submitted, or queued strictly by request time. Requests that
// no longer stand (a push, a newer submit of the candidate) are superseded first, their jobs cancelled.
// The round's reference job (./round-reference.ts) is asked for first, by the bot.
import { setStateLabel } from '../github/labels.js';
import { openPullRunStates, readRunState, updateRunState } from '../github/run-state.js';
import { writeSubmitComment } from '../github/submissions.js';
import { codeBlock, inlineText } from '../github/user-text.js';
import { admitRequest, RunStateFullError } from '../lifecycle/bounds.js';
import { recordedInState } from '../lifecycle/jobs.js';
import {
  byRequestTime,
  knowsRequest,
  phaseOf,
  type RunRequest,
  type RunState,
  staleRequests,
  standingRequests,
  withOutcome,
  withRequest,
  withRun,
} from '../lifecycle/model.js';
import { referenceRequest } from '../lifecycle/reference.js';
import { CommandTimeoutError, ConnectionLostError } from '../slurm/errors.js';
import { newRunLabel, runNameFor } from '../topology/run-name.js';
import {
  candidateNameOf,
  experimentOnDefaultBranch,
  type PreparedCandidate,
  prepareCandidateAt,
  pullRequestCandidates,
  withRunName,
} from '../usecases/prepare.js';
import { cancelCandidate, type SubmitResult, submitCandidate } from '../usecases/submit.js';
import type { CommandContext, HandlerResult, PullCommand } from './command.js';
import { listed, pullLabel, target } from './pull.js';
import { roundReferences } from './round-reference.js';

export const submit: PullCommand = {
  name: 'submit',
  where: 'pull',
  argument: { kind: 'candidate' },
  permission: 'write',
  recordedAtClose: false,
  summary:
    "submit the pull request's candidates (or the one named), each its own run, to Slurm (queued when all slots are busy)",
  run: submitCandidates,
};

async function submitCandidates(ctx: CommandContext): Promise<HandlerResult> {
  const source = ctx.ports.source;
  const pr = { owner: ctx.owner, repo: ctx.repo, number: ctx.pullNumber };
  const { files, changed } = await pullRequestCandidates(ctx.octokit, pr, source);
  if (files.length === 0)
    return {
      ok: false,
      message: `This pull request adds or changes no candidate file (\`${source.topologiesDir}/<experiment>/<candidate>.yaml\`).`,
    };
  const chosen =
    ctx.argument === undefined ? files : files.filter((f) => candidateNameOf(f) === ctx.argument);
  if (chosen.length === 0)
    return {
      ok: false,
      message: `This pull request has no candidate \`${ctx.argument}\`; its candidates are ${listed(files.map(candidateNameOf))}. Comment \`/topo submit\` for all of them or \`/topo submit <candidate>\` for one.`,
    };
  const at = ctx.ports.now().toISOString();
  const state = await supersedeStale(ctx, await readRunState(ctx.octokit, target(ctx)), at);
  const lines: string[] = [];
  const valid: PreparedCandidate[] = [];
  for (const path of chosen) {
    const repo = { owner: ctx.owner, repo: ctx.repo };
    const prepared = await prepareCandidateAt(ctx.octokit, repo, ctx.headSha, path, source, changed);
    if (prepared.ok) valid.push(prepared.candidate);
    else lines.push(prepared.message);
  }
  // the round's reference job first, so it takes a slot before its candidates (`reference: beside`)
  for (const ref of await roundReferences(ctx, valid)) {
    const before = new Date(Date.parse(at) - 1).toISOString();
    lines.push(typeof ref === 'string' ? ref : (await submitOne(ctx, ref, state, before, 'reference')).line);
  }
  let requested = 0;
  for (const [i, c] of valid.entries()) {
    // Distinct request times keep the queue order of one command's candidates the file order.
    const one = await submitOne(ctx, c, state, new Date(Date.parse(at) + i).toISOString());
    lines.push(one.line);
    if (one.requested) requested++;
  }
  const fresh = await readRunState(ctx.octokit, target(ctx));
  await setStateLabel(ctx.octokit, target(ctx), await pullLabel(ctx, fresh));
  return { ok: requested > 0, message: lines.join('\n\n') };
}

/**
 * Cancels the runs of Requests that no longer stand (a push, or a newer request of the same
 * candidate) and returns the state with their `superseded` Outcomes.
 */
async function supersedeStale(ctx: CommandContext, state: RunState, at: string): Promise<RunState> {
  let next = state;
  for (const r of staleRequests(state, ctx.headSha)) {
    const exp = await experimentOnDefaultBranch(ctx.ports.source, r.experiment);
    let cancelled: string[] = [];
    if (exp.ok)
      cancelled = (
        await ctx.ports.withSlurm(exp.clusterName, exp.cluster, (slurm) =>
          cancelCandidate(
            { slurm },
            { experimentId: r.experiment, jobName: r.runName, recorded: recordedInState(state) },
          ),
        )
      ).cancelled;
    const why =
      r.headSha !== ctx.headSha
        ? `the pull request moved from ${r.headSha.slice(0, 7)} to ${ctx.headSha.slice(0, 7)}; comment /topo submit to run the new head`
        : 'a newer /topo submit of the same candidate replaced it';
    next = withOutcome(next, r.id, {
      kind: 'superseded',
      at,
      ...(cancelled[0] ? { jobId: cancelled[0] } : {}),
      evidence: [why, ...(cancelled.length ? [`cancelled Slurm job ${cancelled.join(', ')}`] : [])],
    });
  }
  return next;
}

/** One candidate's Request (reused while it stands), written before sbatch, then submitted or queued. */
async function submitOne(
  ctx: CommandContext,
  c: PreparedCandidate,
  state: RunState,
  at: string,
  role?: 'reference',
): Promise<{ line: string; requested: boolean }> {
  const standing = standingRequests(state, ctx.headSha).find(
    (r) => r.candidate === c.candidate && r.experiment === c.experimentId && r.role === role,
  );
  const request: RunRequest = standing ?? newRequest(ctx, c, at, role);
  // The Request is written BEFORE sbatch: a crash after it leaves a Request the monitor finds
  // the job of by its exact name (submission is idempotent by name), never a forgotten run. One
  // the bounded state cannot hold (with room for every open Request to end) is refused.
  try {
    await updateRunState(ctx.octokit, target(ctx), (s) => admitRequest(mergeInto(s, state), request));
  } catch (error) {
    if (!(error instanceof RunStateFullError)) throw error;
    return { line: `\`${c.candidate}\` was not requested: ${error.message}.`, requested: false };
  }
  const result = await sbatchOrQueue(ctx, c, request, recordedInState(state));
  if (result instanceof Error) {
    const line = `\`${request.runName}\` is requested, but the cluster \`${c.clusterName}\` is unreachable now (${inlineText(result.message, 300)}): the monitor submits it when the cluster answers. \`/topo cancel ${c.candidate}\` withdraws the request.`;
    const text = `### Submission of \`${c.candidate}\`\n\n${line}`;
    await writeSubmitComment(ctx.octokit, target(ctx), c.candidate, text, { request });
    return { line, requested: true };
  }
  const jobId = result.status === 'submitted' || result.status === 'existing' ? result.jobId : undefined;
  if (jobId) {
    const submittedAt = ctx.ports.now().toISOString();
    // the Request again with its Run: a write another writer dropped is restored with it
    await updateRunState(ctx.octokit, target(ctx), (s) =>
      withRun(withRequest(s, request), request.id, { jobId, submittedAt }),
    );
  }
  const text = submissionText(ctx, c.candidate, result, role);
  await writeSubmitComment(ctx.octokit, target(ctx), c.candidate, text, {
    request,
    ...(jobId ? { jobId } : {}),
  });
  return { line: `\`${result.jobName}\` ${describe(result)}.`, requested: true };
}

/** sbatch (idempotent by name) or a place in the queue; an outage is returned, not thrown. */
async function sbatchOrQueue(
  ctx: CommandContext,
  c: PreparedCandidate,
  request: RunRequest,
  recorded: ReadonlySet<string>,
): Promise<SubmitResult | Error> {
  const ahead = await queuedAhead(ctx, request);
  return ctx.ports
    .withSlurm(c.clusterName, c.cluster, (slurm) =>
      submitCandidate(
        { slurm, log: ctx.ports.log },
        {
          experimentId: c.experimentId,
          cluster: c.clusterName,
          submission: withRunName(c.submission, request.runName),
          maxParallel: c.experiment.max_parallel,
          ahead: ahead.map((r) => ({ jobName: r.runName })),
          // a job that names no Request stands or holds a slot only when a Run record names it
          recorded,
        },
      ),
    )
    .catch((error: Error) => {
      // An outage, not a refusal: the Request stands and the monitor submits it once Slurm answers.
      if (error instanceof ConnectionLostError || error instanceof CommandTimeoutError) return error;
      throw error;
    });
}

/** Earlier queued Requests of the experiment on open pull requests (this one's other candidates too), oldest first. */
async function queuedAhead(ctx: CommandContext, mine: RunRequest): Promise<RunRequest[]> {
  const { pulls } = await openPullRunStates(ctx.octokit, {
    owner: ctx.owner,
    repo: ctx.repo,
    botLogin: ctx.botLogin,
  });
  const ahead: RunRequest[] = [];
  for (const p of pulls)
    for (const r of standingRequests(p.state, p.headSha)) {
      if (r.id === mine.id || r.experiment !== mine.experiment || byRequestTime(r, mine) >= 0) continue;
      const phase = phaseOf({ request: r, run: p.state.runs[r.id], job: null, headSha: p.headSha });
      if (phase.phase === 'queued') ahead.push(r);
    }
  return ahead.sort(byRequestTime);
}

function describe(result: SubmitResult): string {
  switch (result.status) {
    case 'submitted':
      return `submitted as Slurm job **${result.jobId}**`;
    case 'existing':
      return `already running as Slurm job **${result.jobId}** (${result.state}): not submitted again`;
    case 'queued':
      return `queued at position ${result.position} (by request time): ${result.live} of ${result.maxParallel} experiment slots are busy; the monitor submits it when one frees`;
    default:
      return 'checked (dry run)';
  }
}

/** The candidate's submission comment (the record of its Requests follows it). */
function submissionText(
  ctx: CommandContext,
  candidate: string,
  result: SubmitResult,
  role?: 'reference',
): string {
  return [
    role ? `### Reference job of \`${candidate}\`` : `### Submission of \`${candidate}\``,
    '',
    `\`${result.jobName}\` on cluster \`${result.cluster}\`: ${describe(result)}.`,
    '',
    '<details><summary>sbatch command</summary>',
    '',
    codeBlock(result.command, 'sh'),
    '',
    '</details>',
    '',
    role
      ? `The experiment's current best, from the default branch, run beside this round's candidates so each is decided against it at equal run age (\`reference: beside\`). Asked for by the bot with ${inlineText(ctx.actor, 40)}'s \`/topo submit\`; it ends with the candidates (a push, \`/topo cancel\`, the close) and once no open decision needs it.`
      : `Requested by ${inlineText(ctx.actor, 40)} at commit ${ctx.headSha.slice(0, 7)}, checked against the default branch's experiment. A push supersedes this run; the new head then waits for a new \`/topo submit\`.`,
  ].join('\n');
}

/**
 * A new Request of a candidate at the pull request's head, with a label (and run name) of its own;
 * the round's reference job is the bot's (src/lifecycle/reference.ts).
 */
function newRequest(ctx: CommandContext, c: PreparedCandidate, at: string, role?: 'reference'): RunRequest {
  const id = newRunLabel();
  if (role)
    return referenceRequest({
      experiment: c.experimentId,
      source: { name: c.candidate, path: c.path, topologyHash: c.topologyHash },
      pr: ctx.pullNumber,
      headSha: ctx.headSha,
      login: ctx.botLogin,
      requestedAt: at,
      label: id,
    });
  return {
    id,
    experiment: c.experimentId,
    candidate: c.candidate,
    path: c.path,
    pr: ctx.pullNumber,
    headSha: ctx.headSha,
    topologyHash: c.topologyHash,
    runName: runNameFor(c.submission.jobName, id),
    login: ctx.actor,
    requestedAt: at,
  };
}

/** Keeps what `local` added (superseded Outcomes) on top of a fresh read (of Requests it still holds). */
function mergeInto(fresh: RunState, local: RunState): RunState {
  let out = fresh;
  for (const [id, o] of Object.entries(local.outcomes))
    if (knowsRequest(out, id)) out = withOutcome(out, id, o);
  return out;
}
