// Entry of the submit action (self-hosted runner). Event → router → use cases; everything it acts
// on comes from the API (pull request, candidate file at the head sha, as data) or from the
// default-branch checkout (clusters.yaml). Pull-request code is never checked out nor executed.
import { readFileSync } from 'node:fs';
import * as core from '@actions/core';
import { createOctokit, splitRepository } from '../../src/github/client.js';
import { presetOverrideDir } from '../../src/topology/presets.js';
import {
  type CommandHandlers,
  type RouteOutcome,
  routeComment,
  routeLabel,
} from '../../src/usecases/commands.js';
import { buildSubmitHandlers } from './handlers.js';

async function main(): Promise<void> {
  const token = core.getInput('token', { required: true });
  core.setSecret(token);
  // The SSH key (TOPO_SSH_KEY, from a secret) is masked by the runner; mask it line by line too.
  for (const line of (process.env.TOPO_SSH_KEY ?? '').split('\n'))
    if (line.trim()) core.setSecret(line.trim());
  const botLogin = core.getInput('bot-login') || 'github-actions[bot]';
  const eventName = process.env.GITHUB_EVENT_NAME ?? '';
  const eventPath = process.env.GITHUB_EVENT_PATH;
  if (!eventPath) throw new Error('GITHUB_EVENT_PATH is not set: this action runs inside a workflow');
  const payload = JSON.parse(readFileSync(eventPath, 'utf8'));
  const { owner, repo } = splitRepository(process.env.GITHUB_REPOSITORY ?? '');
  const octokit = createOctokit({ token });
  const handlers: CommandHandlers = buildSubmitHandlers({
    workspace: process.env.GITHUB_WORKSPACE ?? process.cwd(),
    clustersFile: core.getInput('clusters-file') || 'topologies/clusters.yaml',
    topologiesDir: core.getInput('topologies-dir') || 'topologies',
    presetsDir: presetOverrideDir(process.env, process.env.GITHUB_WORKSPACE ?? process.cwd()),
    env: process.env,
  });

  let outcome: RouteOutcome;
  if (eventName === 'issue_comment') {
    if (payload.action !== 'created') {
      outcome = { outcome: 'ignored', why: `issue_comment ${payload.action}` };
    } else {
      outcome = await routeComment(
        octokit,
        {
          owner,
          repo,
          issueNumber: payload.issue.number,
          isPullRequest: Boolean(payload.issue.pull_request),
          comment: { id: payload.comment.id, body: payload.comment.body ?? '', user: payload.comment.user },
        },
        handlers,
        { botLogin },
      );
    }
  } else if (eventName === 'pull_request' && payload.action === 'labeled') {
    outcome = await routeLabel(
      octokit,
      {
        owner,
        repo,
        pullNumber: payload.pull_request.number,
        label: payload.label?.name ?? '',
        sender: payload.sender,
      },
      { botLogin },
    );
  } else {
    outcome = { outcome: 'ignored', why: `event ${eventName} ${payload.action ?? ''}`.trim() };
  }

  core.setOutput('command', 'command' in outcome ? (outcome.command ?? '') : '');
  core.setOutput('outcome', outcome.outcome);
  const text = outcome.outcome === 'ignored' ? outcome.why : outcome.message;
  await core.summary.addHeading('/topo', 3).addRaw(`**${outcome.outcome}**: ${text}`, true).write();
  core.info(`${outcome.outcome}: ${text}`);
  // A refusal is the system working (the reply explains it); a failed use case fails the step.
  if (outcome.outcome === 'failed') core.setFailed(outcome.message);
}

main().catch((e: Error) => core.setFailed(e.message));
