// Which use case answers which /topo command, and the glue they share: find the pull request's
// candidate, read it (and its experiment.yaml) from the head commit through the API as DATA,
// validate and render it with the trusted presets and clusters.yaml of the default-branch
// checkout, and reach the experiment's cluster. A candidate with any validation error is never
// rendered, so it never reaches sbatch. Commands without an entry here are answered as
// unavailable by the router; reject/learn are acknowledged there (the record action reads them).
import { posix } from 'node:path';
import { changedFiles, githubFileSource } from '../../src/github/contents.js';
import { setStateLabel } from '../../src/github/labels.js';
import { upsertStickyComment } from '../../src/github/sticky-comment.js';
import { slurmClientForCluster } from '../../src/slurm/for-cluster.js';
import type { SlurmClient } from '../../src/slurm/types.js';
import { formatIssue } from '../../src/topology/issues.js';
import type { CommandHandlers, HandlerResult, PullRequestContext } from '../../src/usecases/commands.js';
import { reconcile } from '../../src/usecases/reconcile.js';
import { concludeHandler } from '../../src/usecases/report.js';
import { cancelCandidate, submitCandidate } from '../../src/usecases/submit.js';
import { fileKind, fileSystemSource, isYamlFile, renderCandidateFile } from '../../src/usecases/validate.js';
import { buildMonitorPorts } from '../monitor/ports.js';

export interface SubmitActionConfig {
  /** Default-branch checkout (trusted configuration: clusters.yaml, presets). */
  workspace: string;
  clustersFile: string;
}

interface PreparedCandidate {
  path: string;
  experimentId: string;
  clusterName: string;
  /** Experiment slots (experiment.yaml `max_parallel`). */
  maxParallel: number | undefined;
  slurm: SlurmClient;
  submission: { jobName: string; argv: string[]; shellLine: string };
}

/** The candidate of the pull request, validated and rendered; or the reason why not. */
async function prepare(
  ctx: PullRequestContext,
  config: SubmitActionConfig,
): Promise<PreparedCandidate | HandlerResult> {
  const changed = await changedFiles(ctx.octokit, {
    owner: ctx.owner,
    repo: ctx.repo,
    pull_number: ctx.pullNumber,
  });
  const candidates = changed
    .map((f) => f.path)
    .filter((p) => p.startsWith('topologies/') && isYamlFile(p) && fileKind(p) === 'candidate');
  if (candidates.length === 0) {
    return {
      ok: false,
      message:
        'This pull request adds or changes no candidate file (`topologies/<experiment>/<candidate>.yaml`).',
    };
  }
  if (candidates.length > 1) {
    return {
      ok: false,
      message: `One candidate per pull request, so that each has its own comment, check and record entry; this one changes ${candidates.map((c) => `\`${c}\``).join(', ')}.`,
    };
  }
  const path = candidates[0] as string;
  const outcome = await renderCandidateFile(path, {
    files: githubFileSource(ctx.octokit, { owner: ctx.owner, repo: ctx.repo, ref: ctx.headSha }),
    config: fileSystemSource(config.workspace),
    clustersFile: config.clustersFile,
    newFiles: changed.map((f) => f.path),
  });
  if (!outcome.submission || !outcome.report.candidate) {
    const errors = outcome.report.errors.slice(0, 10).map((i) => `- ${formatIssue(i)}`);
    return {
      ok: false,
      message: [`\`${path}\` does not pass validation, so it was not submitted:`, '', ...errors].join('\n'),
    };
  }
  const details = outcome.report.candidate;
  const clusterName = details.cluster;
  return {
    path,
    experimentId: details.experimentId,
    clusterName,
    maxParallel: details.experimentConfig.max_parallel ?? undefined,
    // The SSH key, if any, comes from TOPO_SSH_KEY (a secret) in the step's environment.
    slurm: slurmClientForCluster(clusterName, details.clusterConfig),
    submission: outcome.submission,
  };
}

const isResult = (x: PreparedCandidate | HandlerResult): x is HandlerResult => 'ok' in x;

function issue(ctx: PullRequestContext) {
  return { owner: ctx.owner, repo: ctx.repo, issue_number: ctx.pullNumber };
}

export function buildSubmitHandlers(config: SubmitActionConfig): CommandHandlers {
  const submit = async (ctx: PullRequestContext): Promise<HandlerResult> => {
    const prepared = await prepare(ctx, config);
    if (isResult(prepared)) return prepared;
    const result = await submitCandidate(
      { slurm: prepared.slurm, log: (m) => console.log(m) },
      {
        experimentId: prepared.experimentId,
        cluster: prepared.clusterName,
        submission: prepared.submission,
        maxParallel: prepared.maxParallel,
      },
    );
    const what =
      result.status === 'submitted'
        ? `submitted as Slurm job **${result.jobId}**`
        : result.status === 'existing'
          ? `already known to Slurm as job **${result.jobId}** (${result.state}): not submitted again`
          : result.status === 'queued'
            ? `queued at position ${result.position}: ${result.live} of ${result.maxParallel} experiment slots are busy; the monitor submits it when one frees`
            : 'checked (dry run)';
    await setStateLabel(ctx.octokit, issue(ctx), result.status === 'queued' ? 'queued' : 'running');
    const body = [
      `### Submission of \`${posix.basename(prepared.path, '.yaml')}\``,
      '',
      `\`${result.jobName}\` on cluster \`${result.cluster}\`: ${what}.`,
      '',
      '<details><summary>sbatch command</summary>',
      '',
      '```sh',
      result.command,
      '```',
      '',
      '</details>',
      '',
      `Requested by @${ctx.actor} at commit ${ctx.headSha.slice(0, 7)}. Progress and metrics appear in the monitor comment.`,
    ].join('\n');
    await upsertStickyComment(ctx.octokit, {
      ...issue(ctx),
      purpose: 'submit',
      botLogin: ctx.botLogin,
      body,
    });
    return { ok: true, message: `\`${result.jobName}\` ${what}.` };
  };

  const cancel =
    (verb: 'cancelled' | 'stopped') =>
    async (ctx: PullRequestContext): Promise<HandlerResult> => {
      const prepared = await prepare(ctx, config);
      if (isResult(prepared)) return prepared;
      const result = await cancelCandidate(
        { slurm: prepared.slurm, log: (m) => console.log(m) },
        { experimentId: prepared.experimentId, jobName: prepared.submission.jobName },
      );
      if (result.cancelled.length === 0) {
        const known = result.job ? ` (its last job ${result.job.id} is ${result.job.state})` : '';
        return {
          ok: true,
          message: `\`${result.jobName}\` has no queued or running job${known}: nothing to ${verb === 'cancelled' ? 'cancel' : 'stop'}.`,
        };
      }
      if (verb === 'cancelled') await setStateLabel(ctx.octokit, issue(ctx), null);
      const kept =
        verb === 'stopped' ? ' Its metrics stay in Prometheus; the monitor keeps the verdict.' : '';
      return {
        ok: true,
        message: `\`${result.jobName}\`: ${verb} job ${result.cancelled.join(', ')}.${kept}`,
      };
    };

  /**
   * One reconcile pass for this pull request's candidate, now: the monitor's own ports (same
   * discovery, comparison and comment), limited to this pull request. It never submits: a queued
   * candidate waits for the scheduled pass, which serves the queue first come, first served.
   */
  const status = async (ctx: PullRequestContext): Promise<HandlerResult> => {
    const ports = buildMonitorPorts(ctx.octokit, {
      workspace: config.workspace,
      topologiesDir: posix.dirname(config.clustersFile),
      clustersFile: config.clustersFile,
      owner: ctx.owner,
      repo: ctx.repo,
      botLogin: ctx.botLogin,
      env: process.env,
      log: (line) => console.log(line),
    });
    try {
      const report = await reconcile({
        ...ports,
        experiments: async () =>
          (await ports.experiments())
            .map((e) => ({ ...e, candidates: e.candidates.filter((c) => c.pr === ctx.pullNumber) }))
            .filter((e) => e.candidates.length > 0),
        submit: async () => undefined,
      });
      if (report.errors.length) throw new Error(report.errors.join('; '));
      const outcome = report.candidates[0];
      if (!outcome) {
        return {
          ok: false,
          message:
            'No candidate of this pull request belongs to an experiment on the default branch (its `experiment.yaml` must be merged first).',
        };
      }
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
