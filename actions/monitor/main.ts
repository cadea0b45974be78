// Entry of the monitor action (self-hosted runner, schedule or by hand): one monitor pass over
// every experiment (src/monitor). Runs only default-branch code and configuration; pull requests are data.
import * as core from '@actions/core';
import { countRequests, createOctokit, splitRepository } from '../../src/github/client.js';
import { DEFAULT_YIELD_TO, queuedWorkflowRuns } from '../../src/github/workflow-runs.js';
import { autopilot } from '../../src/monitor/autopilot.js';
import { type WatchOptions, watchPass } from '../../src/monitor/loop.js';
import { STAGES, withStage } from '../../src/monitor/pass.js';
import type { MonitorExperiment } from '../../src/monitor/ports.js';
import { renderMonitorSummary } from '../../src/report/monitor-summary.js';
import { buildMonitorPorts } from './ports.js';
import { monitorSummaryInput } from './summary.js';

async function main(): Promise<void> {
  const token = core.getInput('token', { required: true });
  core.setSecret(token);
  const sshKey = core.getInput('ssh-private-key');
  if (sshKey) for (const line of sshKey.split('\n')) if (line.trim()) core.setSecret(line.trim());
  const { owner, repo } = splitRepository(process.env.GITHUB_REPOSITORY ?? '');
  const octokit = createOctokit({ token, baseUrl: process.env.GITHUB_API_URL });
  const api = countRequests(octokit);
  const inputs = passInputs();
  const ports = buildMonitorPorts(octokit, {
    workspace: process.env.GITHUB_WORKSPACE ?? process.cwd(),
    topologiesDir: core.getInput('topologies-dir') || 'topologies',
    clustersFile: core.getInput('clusters-file') || 'topologies/clusters.yaml',
    owner,
    repo,
    botLogin: core.getInput('bot-login') || 'github-actions[bot]',
    env: sshKey ? { ...process.env, TOPO_SSH_KEY: sshKey } : process.env,
    log: (line) => core.info(line),
  });
  try {
    const { seen, watched } = await runPass(ports, octokit, { owner, repo }, inputs);
    await reportPass(seen, watched, { owner, repo }, api);
  } finally {
    await ports.close();
  }
}

interface PassInputs {
  tick: number;
  watch: WatchOptions;
  /** Workflows whose queued runs the watch yields to. */
  yieldTo: string[];
}

function passInputs(): PassInputs {
  return {
    tick: positiveInput('tick-seconds', '60'),
    watch: watchInputs(),
    yieldTo: (core.getInput('yield-to') || DEFAULT_YIELD_TO.join(',')).split(/[\s,]+/).filter(Boolean),
  };
}

/** The watched pass, with the autopilot between decide and act, and the experiments it read. */
async function runPass(
  ports: ReturnType<typeof buildMonitorPorts>,
  octokit: ReturnType<typeof createOctokit>,
  target: { owner: string; repo: string },
  { tick, watch, yieldTo }: PassInputs,
): Promise<{ seen: MonitorExperiment[]; watched: Awaited<ReturnType<typeof watchPass>> }> {
  // The pass's experiments, kept for the job summary (slots, queue order).
  let seen: MonitorExperiment[] = [];
  const experiments = async () => {
    seen = await ports.experiments();
    return seen;
  };
  // The autopilot runs between decide and act of the full pass: its stops go through act, its
  // Requests are submitted by the next pass's queue like a person's; the looks leave it out.
  const stages = withStage(STAGES, { name: 'autopilot', run: autopilot }, { after: 'decide' });
  const watched = await watchPass(
    { ...ports, experiments },
    { tickSeconds: tick },
    { ...watch, stages },
    {
      queued: () => queuedWorkflowRuns(octokit, target, yieldTo),
      log: (line) => core.info(line),
    },
  );
  if (watch.minutes > 0) core.info(watchLine(watched));
  return { seen, watched };
}

/** The action's outputs, job summary, log line, warnings and failure for one watched pass. */
async function reportPass(
  seen: readonly MonitorExperiment[],
  watched: Awaited<ReturnType<typeof watchPass>>,
  { owner, repo }: { owner: string; repo: string },
  api: ReturnType<typeof countRequests>,
): Promise<void> {
  const report = { ...watched.pass, errors: watched.errors };
  const changed = report.candidates.filter((c) => c.changed).length;
  core.setOutput('candidates', String(report.candidates.length));
  core.setOutput('changed', String(changed));
  core.setOutput(
    'states',
    JSON.stringify(Object.fromEntries(report.candidates.map((c) => [c.runName, c.state]))),
  );
  const server = (process.env.GITHUB_SERVER_URL ?? 'https://github.com').replace(/\/+$/, '');
  const summary = monitorSummaryInput(seen, report, {
    repositoryUrl: `${server}/${owner}/${repo}`,
    api: { ...api },
  });
  await core.summary.addRaw(renderMonitorSummary(summary), true).write();
  core.info(
    `${report.candidates.length} candidate(s), ${changed} pull request(s) updated; GitHub API: ${api.reads} read(s), ${api.writes} write(s)`,
  );
  for (const warning of report.warnings) core.warning(warning);
  if (report.errors.length) core.setFailed(report.errors.join('\n'));
}

function positiveInput(name: string, fallback: string): number {
  const value = Number(core.getInput(name) || fallback);
  if (!(value > 0)) throw new Error(`input ${name} must be a positive number, got "${core.getInput(name)}"`);
  return value;
}

/** watch-minutes (0: one pass) and the seconds between looks. */
function watchInputs(): WatchOptions {
  const minutes = Number(core.getInput('watch-minutes') || '0');
  if (!(minutes >= 0 && minutes <= 60))
    throw new Error(`input watch-minutes must be between 0 and 60, got "${core.getInput('watch-minutes')}"`);
  return { minutes, lookSeconds: positiveInput('watch-look-seconds', '60') };
}

function watchLine(w: Awaited<ReturnType<typeof watchPass>>): string {
  const stopped = w.looks.flatMap((l) => l.stopped);
  const why = w.ended === 'yielded' ? `yielded to ${w.yieldedTo.join(', ')}` : w.ended;
  return `watch: ${w.looks.length} look(s), ${stopped.length} stopped${stopped.length ? ` (${stopped.join(', ')})` : ''}; ended: ${why}`;
}

main().catch((e: Error) => core.setFailed(e.message));
