// Which use case answers which /topo command. `/topo submit` validates the pull request's candidate
// (its text from the head commit, as data) against the DEFAULT BRANCH's experiment and rules, and
// writes a Request (src/lifecycle) to the bot-owned run state; only then is the run submitted, or
// queued strictly by request time. `/topo cancel|stop` end the standing Request's run and write its
// Outcome. Every Slurm client is closed before the handler returns, so the process exits.
import { setStateLabel } from '../../src/github/labels.js';
import { openPullRunStates, readRunState, updateRunState } from '../../src/github/run-state.js';
import { upsertStickyComment } from '../../src/github/sticky-comment.js';
import { codeBlock, inlineText } from '../../src/github/user-text.js';
import {
  byRequestTime,
  openRequest,
  phaseOf,
  type RunRequest,
  type RunState,
  staleRequests,
  standingRequest,
  withOutcome,
  withRequest,
  withRun,
} from '../../src/lifecycle/model.js';
import { newRunLabel, runNameFor } from '../../src/lifecycle/run-name.js';
import { CommandTimeoutError, ConnectionLostError } from '../../src/slurm/errors.js';
import { slurmClientForCluster } from '../../src/slurm/for-cluster.js';
import type { SlurmClient } from '../../src/slurm/types.js';
import type { CommandHandlers, HandlerResult, PullRequestContext } from '../../src/usecases/commands.js';
import {
  type CandidateSource,
  experimentOnDefaultBranch,
  preparePullRequestCandidate,
  withRunName,
} from '../../src/usecases/prepare.js';
import { reconcile } from '../../src/usecases/reconcile.js';
import { concludeHandler } from '../../src/usecases/report.js';
import { cancelCandidate, type SubmitResult, submitCandidate } from '../../src/usecases/submit.js';
import { buildMonitorPorts } from '../monitor/ports.js';

export type SubmitActionConfig = CandidateSource & {
  /** The environment the SSH key is read from (TOPO_SSH_KEY); never handed to a child process. */
  env?: NodeJS.ProcessEnv;
  now?: () => Date;
};

function target(ctx: PullRequestContext) {
  return { owner: ctx.owner, repo: ctx.repo, issue_number: ctx.pullNumber, botLogin: ctx.botLogin };
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

/** Earlier queued Requests of the experiment on other open pull requests, oldest first. */
async function queuedAhead(ctx: PullRequestContext, mine: RunRequest): Promise<RunRequest[]> {
  const { pulls } = await openPullRunStates(ctx.octokit, {
    owner: ctx.owner,
    repo: ctx.repo,
    botLogin: ctx.botLogin,
  });
  const ahead: RunRequest[] = [];
  for (const p of pulls) {
    if (p.pr === ctx.pullNumber) continue;
    const r = standingRequest(p.state, p.headSha);
    if (!r || r.experiment !== mine.experiment || byRequestTime(r, mine) >= 0) continue;
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

export function buildSubmitHandlers(config: SubmitActionConfig): CommandHandlers {
  const now = () => (config.now ?? (() => new Date()))().toISOString();

  const submit = async (ctx: PullRequestContext): Promise<HandlerResult> => {
    const prepared = await preparePullRequestCandidate(
      ctx.octokit,
      { owner: ctx.owner, repo: ctx.repo, number: ctx.pullNumber, headSha: ctx.headSha },
      config,
    );
    if (!prepared.ok) return { ok: false, message: prepared.message };
    const c = prepared.candidate;
    const at = now();
    let state = await supersedeStale(config, await readRunState(ctx.octokit, target(ctx)), ctx.headSha, at);
    const standing = standingRequest(state, ctx.headSha);
    const request: RunRequest =
      standing && standing.candidate === c.candidate && standing.experiment === c.experimentId
        ? standing
        : (() => {
            const id = newRunLabel();
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
          })();
    // The Request is written BEFORE sbatch: a crash after it leaves a Request the monitor finds
    // the job of by its exact name (submission is idempotent by name), never a forgotten run.
    state = await updateRunState(ctx.octokit, target(ctx), (s) => withRequest(mergeInto(s, state), request));
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
      await setStateLabel(ctx.octokit, target(ctx), 'queued');
      return {
        ok: true,
        message: `\`${request.runName}\` is requested, but the cluster \`${c.clusterName}\` is unreachable now (${inlineText(result.message, 300)}): the monitor submits it when the cluster answers. \`/topo cancel\` withdraws the request.`,
      };
    }
    if (result.status === 'submitted' || result.status === 'existing') {
      const jobId = result.jobId;
      await updateRunState(ctx.octokit, target(ctx), (s) =>
        withRun(s, request.id, { jobId, submittedAt: now() }),
      );
    }
    const what = describe(result);
    await setStateLabel(ctx.octokit, target(ctx), result.status === 'queued' ? 'queued' : 'running');
    await upsertStickyComment(ctx.octokit, {
      ...target(ctx),
      purpose: 'submit',
      body: [
        `### Submission of \`${c.candidate}\``,
        '',
        `\`${result.jobName}\` on cluster \`${result.cluster}\`: ${what}.`,
        '',
        '<details><summary>sbatch command</summary>',
        '',
        codeBlock(result.command, 'sh'),
        '',
        '</details>',
        '',
        `Requested by ${inlineText(ctx.actor, 40)} at commit ${ctx.headSha.slice(0, 7)}, checked against the default branch's experiment. A push supersedes this run; the new head then waits for a new \`/topo submit\`.`,
      ].join('\n'),
    });
    return { ok: true, message: `\`${result.jobName}\` ${what}.` };
  };

  const cancel =
    (verb: 'cancelled' | 'stopped') =>
    async (ctx: PullRequestContext): Promise<HandlerResult> => {
      const state = await readRunState(ctx.octokit, target(ctx));
      const request = openRequest(state);
      const nothing = verb === 'cancelled' ? 'cancel' : 'stop';
      if (!request)
        return {
          ok: true,
          message: `No run of this pull request is queued or running: nothing to ${nothing}.`,
        };
      const exp = await experimentOnDefaultBranch(config, request.experiment);
      if (!exp.ok) return { ok: false, message: `Cannot reach the experiment's cluster: ${exp.message}.` };
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
      if (verb === 'cancelled') await setStateLabel(ctx.octokit, target(ctx), null);
      if (result.cancelled.length === 0)
        return {
          ok: true,
          message: `\`${request.runName}\` had no queued or running job${result.job ? ` (its last job ${result.job.id} is ${result.job.state})` : ''}: its request is withdrawn, nothing runs for it.`,
        };
      const kept =
        verb === 'stopped' ? ' Its metrics stay in Prometheus; the monitor keeps the verdict.' : '';
      return {
        ok: true,
        message: `\`${request.runName}\`: ${verb} job ${result.cancelled.join(', ')}.${kept}`,
      };
    };

  /**
   * One reconcile pass for this pull request, now: the monitor's own ports, limited to this pull
   * request. It never submits: the queue is served by the scheduled pass, by request time.
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
      const report = await reconcile({ ...ports, submit: async () => undefined });
      if (report.errors.length) throw new Error(report.errors.join('; '));
      const outcome = report.candidates[0];
      if (!outcome)
        return {
          ok: false,
          message:
            'No run of this pull request is requested: comment `/topo submit` (the experiment must be on the default branch).',
        };
      return {
        ok: true,
        message: `\`${outcome.runName}\` is **${outcome.state}**: the monitor comment is up to date.`,
      };
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
  };
}

/** Keeps what `local` added (superseded Outcomes) on top of a fresh read. */
function mergeInto(fresh: RunState, local: RunState): RunState {
  let out = fresh;
  for (const [id, o] of Object.entries(local.outcomes)) out = withOutcome(out, id, o);
  return out;
}
