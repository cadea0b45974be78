// Entry of the record action (pull_request closed): inputs → record use case → outputs.
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import * as core from '@actions/core';
import { recordedAtClose } from '../../src/commands/recorded.js';
import { createOctokit, splitRepository } from '../../src/github/client.js';
import { defaultBackoff, isTransient } from '../../src/github/commits.js';
import { codeBlock } from '../../src/github/user-text.js';
import { RunStateError } from '../../src/lifecycle/state-block.js';
import { slurmClientForCluster } from '../../src/slurm/for-cluster.js';
import { createPrometheusClient } from '../../src/telemetry/prometheus.js';
import { checkClusters } from '../../src/topology/files.js';
import type { Cluster } from '../../src/types/generated/clusters.js';
import type { Experiment } from '../../src/types/generated/experiment.js';
import {
  type ClosedPullRequest,
  observeAgain,
  type RecordDeps,
  RecordOutageError,
  recordClosedPullRequest,
} from '../../src/usecases/record.js';

function loadCluster(file: string, name: string): Cluster | undefined {
  if (!file || !existsSync(file)) return undefined;
  const checked = checkClusters(readFileSync(file, 'utf8'), file);
  if (!checked.value) {
    core.warning(
      `${file} is not valid (${checked.issues[0]?.message ?? 'schema'}): no Slurm or Prometheus access`,
    );
    return undefined;
  }
  return checked.value.clusters[name];
}

async function main(): Promise<void> {
  const token = core.getInput('token', { required: true });
  core.setSecret(token);
  const botLogin = core.getInput('bot-login') || 'github-actions[bot]';
  const eventPath = process.env.GITHUB_EVENT_PATH;
  if (!eventPath) throw new Error('GITHUB_EVENT_PATH is not set: this action runs inside a workflow');
  const payload = JSON.parse(readFileSync(eventPath, 'utf8'));
  const { owner, repo } = splitRepository(process.env.GITHUB_REPOSITORY ?? '');
  const octokit = createOctokit({ token });
  const workspace = process.env.GITHUB_WORKSPACE ?? process.cwd();
  const clustersInput = core.getInput('clusters-file');
  const clustersFile = clustersInput
    ? isAbsolute(clustersInput)
      ? clustersInput
      : join(workspace, clustersInput)
    : '';
  const promInput = core.getInput('prometheus-url');
  const timeScale = Number(core.getInput('time-scale') || '1');
  if (!(timeScale > 0))
    throw new Error(`input time-scale must be a positive number, got "${core.getInput('time-scale')}"`);
  const pull = await closedPullRequest(octokit, { owner, repo }, payload);
  if (!pull) return;
  const defaultBranch: string =
    payload.repository?.default_branch ?? (await octokit.rest.repos.get({ owner, repo })).data.default_branch;
  const clusterOf = (experiment: Experiment) =>
    experiment.cluster ? loadCluster(clustersFile, experiment.cluster) : undefined;
  const deps: RecordDeps = {
    octokit,
    owner,
    repo,
    defaultBranch,
    botLogin,
    log: (line) => core.info(line),
    closeCommands: recordedAtClose({ octokit, owner, repo, botLogin }),
    topologiesDir: core.getInput('topologies-dir') || 'topologies',
    clusterOf,
    slurmFor: async (experiment) => {
      const cluster = clusterOf(experiment);
      return cluster && experiment.cluster
        ? slurmClientForCluster(experiment.cluster, cluster, { env: process.env })
        : undefined;
    },
    observe: promInput === 'none' ? undefined : observeWith(promInput, clusterOf, timeScale),
  };
  const result = await recordWithRetries(deps, pull);
  await reportResult(result);
}

/** The pull request to record: the `pr` input's, or the closed one of the event; undefined when there is none to record. */
async function closedPullRequest(
  octokit: ReturnType<typeof createOctokit>,
  { owner, repo }: { owner: string; repo: string },
  payload: { action?: string; pull_request?: ClosedPullRequest },
): Promise<ClosedPullRequest | undefined> {
  const eventName = process.env.GITHUB_EVENT_NAME ?? '';
  const pullInput = core.getInput('pr');
  let pull: ClosedPullRequest;
  if (pullInput) {
    if (!/^[1-9][0-9]{0,9}$/.test(pullInput))
      throw new Error(`input pr must be a number, got "${pullInput}"`);
    pull = (await octokit.rest.pulls.get({ owner, repo, pull_number: Number(pullInput) })).data;
  } else if (eventName === 'pull_request' || eventName === 'pull_request_target') {
    if (payload.action !== 'closed') {
      core.info(`ignored: ${eventName} ${payload.action} (the record is written when a pull request closes)`);
      core.setOutput('recorded', '[]');
      core.setOutput('committed', 'false');
      return undefined;
    }
    pull = payload.pull_request as ClosedPullRequest;
  } else {
    throw new Error(`the record action runs on pull_request closed (or with the pr input); got ${eventName}`);
  }
  if (pull.state !== 'closed')
    throw new Error(`pull request #${pull.number} is still open: nothing to record yet`);
  return pull;
}

/** Reads a run again from the `prometheus-url` input's Prometheus, else from its cluster's. */
function observeWith(
  promInput: string,
  clusterOf: (experiment: Experiment) => Cluster | undefined,
  timeScale: number,
): NonNullable<RecordDeps['observe']> {
  return async (runName, experiment, topology, job) => {
    const url = promInput || clusterOf(experiment)?.prometheus_url;
    if (!url) return undefined;
    const prometheus = createPrometheusClient({ baseUrl: url, timeoutMs: 15_000, retries: 1 });
    return observeAgain(prometheus, runName, experiment, {
      timeScale: clusterOf(experiment)?.time_scale ?? timeScale,
      topology,
      ...(job ? { job } : {}),
    });
  };
}

type RecordResult = Awaited<ReturnType<typeof recordClosedPullRequest>>;

/**
 * Every step re-reads GitHub and the commit is compare-and-swap, so a dropped connection is
 * answered by running the whole pass again; what still fails is told on the pull request.
 */
async function recordWithRetries(deps: RecordDeps, pull: ClosedPullRequest): Promise<RecordResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await recordClosedPullRequest(deps, pull);
    } catch (error) {
      if (attempt >= 3 || !isTransient(error)) {
        await tellThePullRequest(
          deps.octokit,
          { owner: deps.owner, repo: deps.repo },
          pull.number,
          error as Error,
        );
        throw error;
      }
      core.warning(`attempt ${attempt} failed (${(error as Error).message}); running the record pass again`);
      await new Promise((r) => setTimeout(r, defaultBackoff(attempt)));
    }
  }
}

/** The step's outputs and job summary. */
async function reportResult(result: RecordResult): Promise<void> {
  const recorded = result.recorded.map((r) => ({
    experiment_id: r.experimentId,
    candidate: r.candidate,
    kind: r.kind,
    run_name: r.runName,
    committed: r.commit.committed,
    commit_sha: r.commit.sha,
    cancelled_jobs: r.cancelledJobs,
    telemetry_gaps: r.telemetryGaps,
  }));
  core.setOutput('recorded', JSON.stringify(recorded));
  core.setOutput(
    'not-recorded',
    JSON.stringify(
      result.notRecorded.map((n) => ({
        experiment_id: n.experimentId,
        candidate: n.candidate,
        file: n.file,
        refused: n.refused,
        why: n.why,
      })),
    ),
  );
  const references = (result.references ?? []).map((r) => ({
    experiment_id: r.experimentId,
    run_name: r.runName,
    gpu_minutes: r.gpuMinutes,
    committed: r.commit.committed,
  }));
  core.setOutput('reference-runs', JSON.stringify(references));
  core.setOutput('closed-requests', JSON.stringify(result.closed.requests));
  core.setOutput('cancelled-jobs', JSON.stringify(result.closed.cancelledJobs));
  core.setOutput('committed', String(recorded.some((r) => r.committed)));
  core.setOutput('commit-sha', recorded.at(-1)?.commit_sha ?? '');
  await writeSummary(result, recorded, references);
}

async function writeSummary(
  result: RecordResult,
  recorded: readonly {
    candidate: string;
    kind: string;
    experiment_id: string;
    committed: boolean;
    commit_sha: string;
    telemetry_gaps: readonly string[];
  }[],
  references: readonly { run_name: string; experiment_id: string; gpu_minutes?: number | null }[],
): Promise<void> {
  const summary = core.summary.addHeading('Experiment record', 3);
  if (result.skipped) summary.addRaw(`Nothing recorded: ${result.skipped}.`, true);
  for (const r of recorded) {
    summary.addRaw(
      `- \`${r.candidate}\` recorded as **${r.kind}** in \`experiments/${r.experiment_id}.json\` (${r.committed ? `commit ${r.commit_sha.slice(0, 7)}` : 'already up to date'})${r.telemetry_gaps.length ? `; gaps: ${r.telemetry_gaps.join('; ')}` : ''}`,
      true,
    );
    for (const gap of r.telemetry_gaps) core.warning(`${r.candidate}: ${gap}`);
  }
  for (const n of result.notRecorded) {
    summary.addRaw(`- \`${n.candidate}\` (\`${n.file}\`) not recorded: ${n.why}`, true);
    // a refusal is the record working (the pull request is told why); it is not a failed step
    if (n.refused) core.warning(`${n.candidate}: refused: ${n.why}`);
  }
  for (const r of references)
    summary.addRaw(
      `- reference job \`${r.run_name}\` recorded in \`experiments/${r.experiment_id}.json\`: ${r.gpu_minutes ?? 'unknown'} GPU-minutes, charged to the experiment`,
      true,
    );
  if (result.closed.requests.length)
    summary.addRaw(
      `The pull request's ${result.closed.requests.length} open run request(s) ended with it (Outcome \`closed\`)${result.closed.cancelledJobs.length ? `; Slurm job(s) ${result.closed.cancelledJobs.join(', ')} cancelled` : ''}. Reopening it needs a new \`/topo submit\`.`,
      true,
    );
  await summary.write();
}

/**
 * Nothing was recorded: say so on the pull request, with what to fix (a corrupt record names its
 * file and line) and how to record it again (the workflow by hand, with this pull request's number).
 */
async function tellThePullRequest(
  octokit: ReturnType<typeof createOctokit>,
  repo: { owner: string; repo: string },
  pr: number,
  error: Error,
): Promise<void> {
  const outage = error instanceof RecordOutageError;
  const unreadable = error instanceof RunStateError;
  const body = [
    outage
      ? '**The experiment record was not written**: a service it needs could not be reached (an outage, not a result of this candidate):'
      : '**The experiment record could not be written** for this pull request:',
    '',
    codeBlock(error.message),
    '',
    outage
      ? `Once it is back, run the record workflow by hand (Actions → record → Run workflow) with pull request number \`${pr}\`.`
      : unreadable
        ? `Rebuild the state first (\`/topo state rebuild\`, by someone with write access), then run the record workflow by hand (Actions → record → Run workflow) with pull request number \`${pr}\`.`
        : `Fix what the message names on the default branch, then run the record workflow by hand (Actions → record → Run workflow) with pull request number \`${pr}\`.`,
  ].join('\n');
  try {
    await octokit.rest.issues.createComment({ ...repo, issue_number: pr, body });
  } catch (e) {
    core.warning(`could not comment on #${pr}: ${(e as Error).message}`);
  }
}

main().catch((e: Error) => core.setFailed(e.message));
