// Entry of the monitor action (self-hosted runner, schedule or by hand): one watched monitor pass
// over every experiment (src/monitor/scheduled.ts) on the ports of ./ports.ts. Runs only
// default-branch code and configuration; pull requests are data.
import * as core from '@actions/core';
import { countRequests, createOctokit, splitRepository } from '../../src/github/client.js';
import { queuedWorkflowRuns } from '../../src/github/workflow-runs.js';
import { runScheduledPass, scheduledInputs, scheduledReport } from '../../src/monitor/scheduled.js';
import { buildMonitorPorts } from './ports.js';

async function main(): Promise<void> {
  const token = core.getInput('token', { required: true });
  core.setSecret(token);
  const sshKey = core.getInput('ssh-private-key');
  if (sshKey) for (const line of sshKey.split('\n')) if (line.trim()) core.setSecret(line.trim());
  const { owner, repo } = splitRepository(process.env.GITHUB_REPOSITORY ?? '');
  const octokit = createOctokit({ token, baseUrl: process.env.GITHUB_API_URL });
  const api = countRequests(octokit);
  const inputs = scheduledInputs((name) => core.getInput(name));
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
    const { seen, watched } = await runScheduledPass(ports, inputs, {
      queued: () => queuedWorkflowRuns(octokit, { owner, repo }, inputs.yieldTo),
      log: (line) => core.info(line),
    });
    const server = (process.env.GITHUB_SERVER_URL ?? 'https://github.com').replace(/\/+$/, '');
    const report = scheduledReport(seen, watched, { repositoryUrl: `${server}/${owner}/${repo}`, api });
    for (const [name, value] of Object.entries(report.outputs)) core.setOutput(name, value);
    await core.summary.addRaw(report.summary, true).write();
    core.info(report.line);
    for (const warning of report.warnings) core.warning(warning);
    if (report.failure) core.setFailed(report.failure);
  } finally {
    await ports.close();
  }
}

main().catch((e: Error) => core.setFailed(e.message));
