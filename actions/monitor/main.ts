// Entry of the monitor action (self-hosted runner, schedule or by hand): one monitor pass over
// every experiment (src/monitor). Runs only default-branch code and configuration; pull requests are data.
import * as core from '@actions/core';
import { countRequests, createOctokit, splitRepository } from '../../src/github/client.js';
import { monitorPass } from '../../src/monitor/pass.js';
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
  const tick = Number(core.getInput('tick-seconds') || '60');
  if (!(tick > 0))
    throw new Error(`input tick-seconds must be a positive number, got "${core.getInput('tick-seconds')}"`);
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
  // The pass's experiments, kept for the job summary (slots, queue order).
  let seen: MonitorExperiment[] = [];
  const experiments = async () => {
    seen = await ports.experiments();
    return seen;
  };
  try {
    const report = await monitorPass({ ...ports, experiments }, { tickSeconds: tick });
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
    if (report.errors.length) core.setFailed(report.errors.join('\n'));
  } finally {
    await ports.close();
  }
}

main().catch((e: Error) => core.setFailed(e.message));
