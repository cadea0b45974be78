// Entry of the submit action (self-hosted runner): builds the ports and routes the event to the
// `/topo` commands (src/commands: one registry, one parser, one file per command). Everything a
// command acts on comes from the API (pull request, candidate file at the head sha, as data) or from
// the default-branch checkout (clusters.yaml). Pull-request code is never checked out nor executed.
import { readFileSync } from 'node:fs';
import * as core from '@actions/core';
import { routeEvent } from '../../src/commands/route.js';
import { createOctokit, splitRepository } from '../../src/github/client.js';
import { presetOverrideDir } from '../../src/topology/presets.js';
import { submitPorts } from './ports.js';

async function main(): Promise<void> {
  const token = core.getInput('token', { required: true });
  core.setSecret(token);
  // The SSH key (TOPO_SSH_KEY, from a secret) is masked by the runner; mask it line by line too.
  for (const line of (process.env.TOPO_SSH_KEY ?? '').split('\n'))
    if (line.trim()) core.setSecret(line.trim());
  const botLogin = core.getInput('bot-login') || 'github-actions[bot]';
  const eventPath = process.env.GITHUB_EVENT_PATH;
  if (!eventPath) throw new Error('GITHUB_EVENT_PATH is not set: this action runs inside a workflow');
  const { owner, repo } = splitRepository(process.env.GITHUB_REPOSITORY ?? '');
  const workspace = process.env.GITHUB_WORKSPACE ?? process.cwd();
  const source = {
    workspace,
    clustersFile: core.getInput('clusters-file') || 'topologies/clusters.yaml',
    topologiesDir: core.getInput('topologies-dir') || 'topologies',
    presetsDir: presetOverrideDir(process.env, workspace),
  };
  const ports = submitPorts({ source, owner, repo, botLogin, env: process.env });
  const event = {
    name: process.env.GITHUB_EVENT_NAME ?? '',
    payload: JSON.parse(readFileSync(eventPath, 'utf8')),
    owner,
    repo,
  };
  const outcome = await routeEvent(createOctokit({ token }), event, { botLogin, ports });
  core.setOutput('command', 'command' in outcome ? (outcome.command ?? '') : '');
  core.setOutput('outcome', outcome.outcome);
  const text = outcome.outcome === 'ignored' ? outcome.why : outcome.message;
  await core.summary.addHeading('/topo', 3).addRaw(`**${outcome.outcome}**: ${text}`, true).write();
  core.info(`${outcome.outcome}: ${text}`);
  // A refusal is the system working (the reply explains it); a failed command fails the step.
  if (outcome.outcome === 'failed') core.setFailed(outcome.message);
}

main().catch((e: Error) => core.setFailed(e.message));
