// Which use case answers which /topo command. `/topo submit [<candidate>]` validates each candidate
// of the pull request (or the one named; its text from the head commit, as data) against the DEFAULT
// BRANCH's experiment and rules, and writes one Request per valid candidate (src/lifecycle) to the
// bot-owned run state: each its own run name, slot and comment. Only then is each run submitted,
// or queued strictly by request time. `/topo cancel|stop [<candidate>]` end the open Requests' runs
// (all, or the named candidate's) and write their Outcomes, and cancel by name any live job of the
// pull request's candidates the state does not hold (an edited state never hides a running job). Every Slurm client is closed before the
// handler returns, so the process exits.
import { existsSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { setStateLabel } from '../../src/github/labels.js';
import { openPullRunStates, readRunState, updateRunState } from '../../src/github/run-state.js';
import { readSubmissions, writeSubmitComment } from '../../src/github/submissions.js';
import { codeBlock, inlineText } from '../../src/github/user-text.js';
import { referenceModeOf } from '../../src/judge/reference.js';
import { admitRequest, RunStateFullError } from '../../src/lifecycle/bounds.js';
import {
  byRequestTime,
  knowsRequest,
  openRequests,
  phaseOf,
  type RunRequest,
  type RunState,
  staleRequests,
  standingRequests,
  withOutcome,
  withRequest,
  withRun,
} from '../../src/lifecycle/model.js';
import { type ReferenceSource, referenceRequest, standingReference } from '../../src/lifecycle/reference.js';
import { newRunLabel, runNameFor } from '../../src/lifecycle/run-name.js';
import { RunStateError } from '../../src/lifecycle/state-block.js';
import { monitorPass } from '../../src/monitor/pass.js';
import { recordPaths, referenceSourceOf } from '../../src/record/model.js';
import { parseRecord } from '../../src/record/validate.js';
import { endedCandidate, ranRequests, requestsStateLabel } from '../../src/report/state-label.js';
import { CommandTimeoutError, ConnectionLostError } from '../../src/slurm/errors.js';
import { slurmClientForCluster } from '../../src/slurm/for-cluster.js';
import type { SlurmClient } from '../../src/slurm/types.js';
import {
  type CommandHandlers,
  type HandlerResult,
  type PullRequestContext,
  statusReply,
} from '../../src/usecases/commands.js';
import { readMonitorComment } from '../../src/usecases/monitor-comment.js';
import {
  type CandidateSource,
  candidateNameOf,
  experimentOnDefaultBranch,
  type PreparedCandidate,
  prepareCandidateAt,
  prepareReferenceAt,
  pullRequestCandidates,
  withRunName,
} from '../../src/usecases/prepare.js';
import { type RebuildResult, rebuildRunState } from '../../src/usecases/rebuild.js';
import { concludeHandler } from '../../src/usecases/report.js';
import {
  cancelCandidate,
  cancelRuns,
  type SubmitResult,
  submitCandidate,
} from '../../src/usecases/submit.js';
import { buildMonitorPorts } from '../monitor/ports.js';

export type SubmitActionConfig = CandidateSource & {
  /** The environment the SSH key is read from (TOPO_SSH_KEY); never handed to a child process. */
  env?: NodeJS.ProcessEnv;
  now?: () => Date;
};

function target(ctx: PullRequestContext) {
  return { owner: ctx.owner, repo: ctx.repo, issue_number: ctx.pullNumber, botLogin: ctx.botLogin };
}

/**
 * The pull request's label by the one rule (src/report/state-label.ts): its standing Requests and
 * the candidates whose runs ended, as their final monitor comments say (whatever Slurm forgot).
 */
async function pullLabel(ctx: PullRequestContext, state: RunState) {
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

/** Runs `use` with a Slurm client of the experiment's cluster, always closed afterwards. */
async function withSlurm<T>(
  config: SubmitActionConfig,
  clusterName: string,
  cluster: Parameters<typeof slurmClientForCluster>[1],
  use: (slurm: SlurmClient) => Promise<T>,
): Promise<T> {
  const slurm = slurmClientForCluster(clusterName, cluster, { env: config.env ?? process.env });
  try {
    return await use(slurm);
  } finally {
    await slurm.close();
  }
}

/**
 * Cancels the runs of Requests that no longer stand (a push, or a newer request of the same
 * candidate) and returns the state with their `superseded` Outcomes.
 */
async function supersedeStale(
  config: SubmitActionConfig,
  state: RunState,
  headSha: string,
  at: string,
): Promise<RunState> {
  let next = state;
  for (const r of staleRequests(state, headSha)) {
    const exp = await experimentOnDefaultBranch(config, r.experiment);
    let cancelled: string[] = [];
    if (exp.ok)
      cancelled = (
        await withSlurm(config, exp.clusterName, exp.cluster, (slurm) =>
          cancelCandidate({ slurm }, { experimentId: r.experiment, jobName: r.runName }),
        )
      ).cancelled;
    const why =
      r.headSha !== headSha
        ? `the pull request moved from ${r.headSha.slice(0, 7)} to ${headSha.slice(0, 7)}; comment /topo submit to run the new head`
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

/** Earlier queued Requests of the experiment on open pull requests (this one's other candidates too), oldest first. */
async function queuedAhead(ctx: PullRequestContext, mine: RunRequest): Promise<RunRequest[]> {
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

/** The Request ids other open pull requests' states hold (their runs are never this one's to reach). */
async function otherPullsRequests(ctx: PullRequestContext): Promise<Set<string>> {
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

/** The pull request's candidate files, or only the one `/topo <command> <candidate>` names. */
function pick(files: readonly string[], name: string | undefined): string[] {
  return name === undefined ? [...files] : files.filter((f) => candidateNameOf(f) === name);
}

const listed = (names: readonly string[]) => names.map((n) => `\`${n}\``).join(', ');

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

export function buildSubmitHandlers(config: SubmitActionConfig): CommandHandlers {
  const now = () => (config.now ?? (() => new Date()))().toISOString();

  /** One candidate's Request (reused while it stands), written before sbatch, then submitted or queued. */
  const submitOne = async (
    ctx: PullRequestContext,
    c: PreparedCandidate,
    state: RunState,
    at: string,
    role?: 'reference',
  ): Promise<{ line: string; requested: boolean }> => {
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
    const ahead = await queuedAhead(ctx, request);
    const result = await withSlurm(config, c.clusterName, c.cluster, (slurm) =>
      submitCandidate(
        { slurm, log: (m) => console.log(m) },
        {
          experimentId: c.experimentId,
          cluster: c.clusterName,
          submission: withRunName(c.submission, request.runName),
          maxParallel: c.experiment.max_parallel,
          ahead: ahead.map((r) => ({ jobName: r.runName })),
        },
      ),
    ).catch((error: Error) => {
      // An outage, not a refusal: the Request stands and the monitor submits it once Slurm answers.
      if (error instanceof ConnectionLostError || error instanceof CommandTimeoutError) return error;
      throw error;
    });
    if (result instanceof Error) {
      const line = `\`${request.runName}\` is requested, but the cluster \`${c.clusterName}\` is unreachable now (${inlineText(result.message, 300)}): the monitor submits it when the cluster answers. \`/topo cancel ${c.candidate}\` withdraws the request.`;
      await writeSubmitComment(
        ctx.octokit,
        target(ctx),
        c.candidate,
        `### Submission of \`${c.candidate}\`\n\n${line}`,
        { request },
      );
      return { line, requested: true };
    }
    if (result.status === 'submitted' || result.status === 'existing') {
      const jobId = result.jobId;
      // the Request again with its Run: a write another writer dropped is restored with it
      await updateRunState(ctx.octokit, target(ctx), (s) =>
        withRun(withRequest(s, request), request.id, { jobId, submittedAt: now() }),
      );
    }
    const what = describe(result);
    const jobId = result.status === 'submitted' || result.status === 'existing' ? result.jobId : undefined;
    const text = [
      role ? `### Reference job of \`${c.candidate}\`` : `### Submission of \`${c.candidate}\``,
      '',
      `\`${result.jobName}\` on cluster \`${result.cluster}\`: ${what}.`,
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
    await writeSubmitComment(ctx.octokit, target(ctx), c.candidate, text, {
      request,
      ...(jobId ? { jobId } : {}),
    });
    return { line: `\`${result.jobName}\` ${what}.`, requested: true };
  };

  const referencesFor = (ctx: PullRequestContext, valid: readonly PreparedCandidate[]) =>
    roundReferences(config, ctx, valid);

  const submit = async (ctx: PullRequestContext): Promise<HandlerResult> => {
    const { files, changed } = await pullRequestCandidates(
      ctx.octokit,
      { owner: ctx.owner, repo: ctx.repo, number: ctx.pullNumber },
      config,
    );
    if (files.length === 0)
      return {
        ok: false,
        message: `This pull request adds or changes no candidate file (\`${config.topologiesDir}/<experiment>/<candidate>.yaml\`).`,
      };
    const chosen = pick(files, ctx.argument);
    if (chosen.length === 0)
      return {
        ok: false,
        message: `This pull request has no candidate \`${ctx.argument}\`; its candidates are ${listed(files.map(candidateNameOf))}. Comment \`/topo submit\` for all of them or \`/topo submit <candidate>\` for one.`,
      };
    const at = now();
    const state = await supersedeStale(config, await readRunState(ctx.octokit, target(ctx)), ctx.headSha, at);
    const lines: string[] = [];
    const valid: PreparedCandidate[] = [];
    for (const path of chosen) {
      const repo = { owner: ctx.owner, repo: ctx.repo };
      const prepared = await prepareCandidateAt(ctx.octokit, repo, ctx.headSha, path, config, changed);
      if (prepared.ok) valid.push(prepared.candidate);
      else lines.push(prepared.message);
    }
    // the round's reference job first, so it takes a slot before its candidates (`reference: beside`)
    for (const ref of await referencesFor(ctx, valid)) {
      if (typeof ref === 'string') lines.push(ref);
      else
        lines.push(
          (await submitOne(ctx, ref, state, new Date(Date.parse(at) - 1).toISOString(), 'reference')).line,
        );
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
  };

  const rebuildFor = (ctx: PullRequestContext) =>
    rebuildRunState(
      {
        octokit: ctx.octokit,
        owner: ctx.owner,
        repo: ctx.repo,
        botLogin: ctx.botLogin,
        source: config,
        withSlurm: (exp, use) => withSlurm(config, exp.clusterName, exp.cluster, use),
        now: config.now,
      },
      { number: ctx.pullNumber, headSha: ctx.headSha, actor: ctx.actor },
    );

  /** `/topo state rebuild`: the state again from Slurm's jobs and the bot's own records on the pull request. */
  const stateCommand = async (ctx: PullRequestContext): Promise<HandlerResult> => {
    const rebuilt = await rebuildFor(ctx);
    const open = openRequests(rebuilt.state);
    return { ok: true, message: rebuildReply(rebuilt, open) };
  };

  /**
   * The state for a cancel: at any size every job of the pull request can be cancelled, so an
   * unreadable state is rebuilt first (and the reply says so).
   */
  const readOrRebuild = async (ctx: PullRequestContext): Promise<{ state: RunState; note: string }> => {
    try {
      return { state: await readRunState(ctx.octokit, target(ctx)), note: '' };
    } catch (error) {
      if (!(error instanceof RunStateError)) throw error;
      const rebuilt = await rebuildFor(ctx);
      return {
        state: rebuilt.state,
        note: `${inlineText(error.message, 400)}. It was rebuilt from Slurm's jobs and the bot's own records on this pull request first (${rebuilt.found} runs named, ${rebuilt.known} known to Slurm${rebuilt.cancelled.length ? `; job ${rebuilt.cancelled.join(', ')} of runs that no longer stand cancelled` : ''}).\n\n`,
      };
    }
  };

  const cancel =
    (verb: 'cancelled' | 'stopped') =>
    async (ctx: PullRequestContext): Promise<HandlerResult> => {
      const { state, note } = await readOrRebuild(ctx);
      const open = openRequests(state);
      const nothing = verb === 'cancelled' ? 'cancel' : 'stop';
      const chosen = ctx.argument ? open.filter((r) => r.candidate === ctx.argument) : open;
      const lines: string[] = note ? [note.trim()] : [];
      for (const request of chosen) lines.push(await endRequest(ctx, request, verb));
      // the bot's own records too: a state edited into a valid but empty one must not leave a job running
      const byRecord = await endByRecord(ctx, new Set(chosen.map((r) => r.runName)), verb);
      if (chosen.length === 0 && byRecord.length === 0)
        return {
          ok: true,
          message: ctx.argument
            ? `No run of \`${ctx.argument}\` is queued or running on this pull request: nothing to ${nothing}.${open.length ? ` Open: ${listed([...new Set(open.map((r) => r.candidate))])}.` : ''}`
            : `No run of this pull request is queued or running: nothing to ${nothing}.`,
        };
      lines.push(...byRecord);
      // A stopped run keeps its label (the monitor shows its verdict); a cancelled one leaves the rest's.
      if (verb === 'cancelled')
        await setStateLabel(
          ctx.octokit,
          target(ctx),
          await pullLabel(ctx, await readRunState(ctx.octokit, target(ctx))),
        );
      return { ok: true, message: lines.join('\n\n') };
    };

  /**
   * Cancels the live jobs of runs the bot's own submission records on this pull request name and the
   * state's open Requests did not cover (a state edited into a valid but empty one must not leave a
   * job running): exact run names, never one derived from a file name or quoted text, never a run
   * another open pull request's state holds. One reply line per job.
   */
  const endByRecord = async (
    ctx: PullRequestContext,
    handled: ReadonlySet<string>,
    verb: 'cancelled' | 'stopped',
  ): Promise<string[]> => {
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
      const exp = await experimentOnDefaultBranch(config, experimentId);
      if (!exp.ok) continue;
      const found = await withSlurm(config, exp.clusterName, exp.cluster, (slurm) =>
        cancelRuns({ slurm }, { experimentId, runNames }),
      );
      for (const j of found)
        lines.push(
          `\`${j.name}\`: ${verb} job ${j.id}, found by the bot's submission record on this pull request (the bot state does not hold its run: \`/topo state rebuild\` records it).`,
        );
    }
    return lines;
  };

  /** Cancels one Request's live job and writes its Outcome; the reply's line. */
  const endRequest = async (
    ctx: PullRequestContext,
    request: RunRequest,
    verb: 'cancelled' | 'stopped',
  ): Promise<string> => {
    const nothing = verb === 'cancelled' ? 'cancel' : 'stop';
    const exp = await experimentOnDefaultBranch(config, request.experiment);
    if (!exp.ok) return `\`${request.runName}\`: cannot reach the experiment's cluster: ${exp.message}.`;
    const result = await withSlurm(config, exp.clusterName, exp.cluster, (slurm) =>
      cancelCandidate({ slurm }, { experimentId: request.experiment, jobName: request.runName }),
    );
    await updateRunState(ctx.octokit, target(ctx), (s) =>
      withOutcome(s, request.id, {
        kind: verb,
        at: now(),
        ...(result.cancelled[0] ? { jobId: result.cancelled[0] } : {}),
        evidence: [`/topo ${nothing} by ${ctx.actor}`],
      }),
    );
    if (result.cancelled.length === 0)
      return `\`${request.runName}\` had no queued or running job${result.job ? ` (its last job ${result.job.id} is ${result.job.state})` : ''}: its request is withdrawn, nothing runs for it.`;
    const kept = verb === 'stopped' ? ' Its metrics stay in Prometheus; the monitor keeps the verdict.' : '';
    return `\`${request.runName}\`: ${verb} job ${result.cancelled.join(', ')}.${kept}`;
  };

  /**
   * One monitor pass for this pull request, now: the monitor's own ports, limited to this pull
   * request, every candidate's comment refreshed. It never submits: the queue is served by the
   * scheduled pass, by request time.
   */
  const status = async (ctx: PullRequestContext): Promise<HandlerResult> => {
    const ports = buildMonitorPorts(ctx.octokit, {
      workspace: config.workspace,
      topologiesDir: config.topologiesDir,
      clustersFile: config.clustersFile,
      owner: ctx.owner,
      repo: ctx.repo,
      botLogin: ctx.botLogin,
      env: config.env ?? process.env,
      log: (line) => console.log(line),
      onlyPull: ctx.pullNumber,
    });
    try {
      // refresh: the comments are written now whatever comment_interval_minutes says, so the reply is true
      const report = await monitorPass({ ...ports, submit: async () => undefined }, { refresh: true });
      if (report.errors.length) throw new Error(report.errors.join('; '));
      return statusReply(report.candidates);
    } finally {
      await ports.close();
    }
  };

  return {
    submit,
    status,
    cancel: cancel('cancelled'),
    stop: cancel('stopped'),
    conclude: concludeHandler,
    state: stateCommand,
  };
}

/** The reply to `/topo state rebuild`. */
function rebuildReply(r: RebuildResult, open: readonly RunRequest[]): string {
  return [
    `Rebuilt this pull request's bot state from Slurm's jobs and the bot's own records: ${r.found} run${r.found === 1 ? '' : 's'} named in its state and submission records, ${r.known} known to Slurm.`,
    r.wasReadable
      ? `The state was readable and is kept; ${r.added} run${r.added === 1 ? '' : 's'} it did not hold ${r.added === 1 ? 'was' : 'were'} added.`
      : `The state could not be read and was replaced (${r.added} run${r.added === 1 ? '' : 's'}).`,
    open.length
      ? `Open now: ${open.map((o) => `\`${o.runName}\``).join(', ')}; the monitor goes on with them.`
      : 'No run is open now: comment `/topo submit` to run a candidate.',
    ...(r.cancelled.length
      ? [`Cancelled Slurm job ${r.cancelled.join(', ')} of runs that no longer stand.`]
      : []),
    ...(r.problems.length
      ? [
          `${r.problems.length} submission record${r.problems.length === 1 ? '' : 's'} did not check and ${r.problems.length === 1 ? 'was' : 'were'} left out: ${inlineText(r.problems.slice(0, 3).join('; '), 600)}.`,
        ]
      : []),
    ...(r.unreachable.length
      ? [
          `Not on the default branch (their jobs were not read): ${r.unreachable.map((u) => `\`${u}\``).join(', ')}.`,
        ]
      : []),
  ].join(' ');
}

/**
 * A new Request of a candidate at the pull request's head, with a label (and run name) of its own;
 * the round's reference job is the bot's (src/lifecycle/reference.ts).
 */
function newRequest(
  ctx: PullRequestContext,
  c: PreparedCandidate,
  at: string,
  role?: 'reference',
): RunRequest {
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

/**
 * The reference job each experiment of this `/topo submit` needs (`reference: beside`, the default):
 * one job of the default branch's best (the record's, else its baseline), prepared from the default
 * branch and pinned to its topology; or a line saying why none is asked for (another pull request's
 * stands for the round, the best changed on the default branch). None under `reference: recorded`,
 * with max_parallel 1, before the record has a best or a baseline, or for a round that runs the best itself.
 */
async function roundReferences(
  config: SubmitActionConfig,
  ctx: PullRequestContext,
  valid: readonly PreparedCandidate[],
): Promise<Array<PreparedCandidate | string>> {
  const out: Array<PreparedCandidate | string> = [];
  for (const id of new Set(valid.map((c) => c.experimentId))) {
    const mine = valid.filter((c) => c.experimentId === id);
    const experiment = (mine[0] as PreparedCandidate).experiment;
    if (referenceModeOf(experiment).mode !== 'beside') continue;
    const source = recordedReferenceSource(config, id);
    if (!source || mine.some((c) => c.candidate === source.name)) continue;
    const { pulls } = await openPullRunStates(ctx.octokit, {
      owner: ctx.owner,
      repo: ctx.repo,
      botLogin: ctx.botLogin,
    });
    const held = pulls.flatMap((p) =>
      p.state.requests.map((request) => ({
        request,
        headSha: p.headSha,
        ...(p.state.outcomes[request.id] ? { outcome: p.state.outcomes[request.id] } : {}),
      })),
    );
    const standing = standingReference(held, id, source);
    if (standing) {
      out.push(
        `The reference job \`${standing.request.runName}\` of #${standing.request.pr} runs beside this round's candidates too (rounds of one experiment share it).`,
      );
      continue;
    }
    const prepared = await prepareReferenceAt(config, source.path, source.topologyHash);
    out.push(
      prepared.ok
        ? prepared.candidate
        : `No reference job beside the candidates (they are decided against the recorded best): ${prepared.message}.`,
    );
  }
  return out;
}

/** The record's best (else baseline) on the default branch, as a reference job runs it; null without one. */
function recordedReferenceSource(config: SubmitActionConfig, experimentId: string): ReferenceSource | null {
  const file = posix.join(config.workspace, recordPaths(experimentId).json);
  if (!existsSync(file)) return null;
  try {
    return referenceSourceOf(parseRecord(readFileSync(file, 'utf8'), recordPaths(experimentId).json));
  } catch {
    return null; // a corrupt record is the record action's to report
  }
}

/** Keeps what `local` added (superseded Outcomes) on top of a fresh read (of Requests it still holds). */
function mergeInto(fresh: RunState, local: RunState): RunState {
  let out = fresh;
  for (const [id, o] of Object.entries(local.outcomes))
    if (knowsRequest(out, id)) out = withOutcome(out, id, o);
  return out;
}
