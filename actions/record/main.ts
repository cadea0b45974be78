// Entry of the record action (pull_request closed): inputs → ports (./ports.ts) → the record pass
// (src/usecases/record-closed.ts) → outputs and job summary (src/usecases/record-summary.ts).
import { readFileSync } from 'node:fs';
import * as core from '@actions/core';
import { createOctokit, splitRepository } from '../../src/github/client.js';
import { pullToRecord, recordWithRetries } from '../../src/usecases/record-closed.js';
import { recordOutputs, recordSummary } from '../../src/usecases/record-summary.js';
import { clustersFileOf, recordPorts } from './ports.js';

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
  const timeScale = Number(core.getInput('time-scale') || '1');
  if (!(timeScale > 0))
    throw new Error(`input time-scale must be a positive number, got "${core.getInput('time-scale')}"`);
  const event = { name: process.env.GITHUB_EVENT_NAME ?? '', payload, pr: core.getInput('pr') };
  const chosen = await pullToRecord(octokit, { owner, repo }, event);
  if ('ignored' in chosen) {
    core.info(chosen.ignored);
    core.setOutput('recorded', '[]');
    core.setOutput('committed', 'false');
    return;
  }
  const defaultBranch: string =
    payload.repository?.default_branch ?? (await octokit.rest.repos.get({ owner, repo })).data.default_branch;
  const deps = recordPorts(octokit, {
    owner,
    repo,
    defaultBranch,
    botLogin,
    topologiesDir: core.getInput('topologies-dir') || 'topologies',
    clustersFile: clustersFileOf(core.getInput('clusters-file'), workspace),
    prometheusUrl: core.getInput('prometheus-url'),
    timeScale,
    log: (line) => core.info(line),
    warn: (line) => core.warning(line),
  });
  const result = await recordWithRetries(deps, chosen.pull, (line) => core.warning(line));
  for (const [name, value] of Object.entries(recordOutputs(result))) core.setOutput(name, value);
  const { lines, warnings } = recordSummary(result);
  for (const warning of warnings) core.warning(warning);
  const summary = core.summary.addHeading('Experiment record', 3);
  for (const line of lines) summary.addRaw(line, true);
  await summary.write();
}

main().catch((e: Error) => core.setFailed(e.message));
