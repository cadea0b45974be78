// The validate action's edges: the pull request of the workflow's event, and the reporter that turns
// findings into annotations and the report into the job summary (@actions/core).
import { readFileSync } from 'node:fs';
import * as core from '@actions/core';
import type { validatePullRequest } from '../../src/usecases/validate.js';

/** The pull request of the workflow's event (the action validates pull requests only). */
export function pullRequestOfEvent(): { number: number; head: { sha: string } } {
  const eventPath = process.env.GITHUB_EVENT_PATH;
  if (!eventPath) throw new Error('GITHUB_EVENT_PATH is not set: this action runs inside a workflow');
  const payload = JSON.parse(readFileSync(eventPath, 'utf8'));
  const pull = payload.pull_request;
  if (!pull?.number || !pull?.head?.sha) {
    throw new Error(
      `this action validates pull requests; event ${process.env.GITHUB_EVENT_NAME} has no pull_request`,
    );
  }
  return pull;
}

/** Findings as annotations on the files, the report in the job summary (kept in `summary.text` for the check run). */
export function actionsReporter(summary: { text: string }): Parameters<typeof validatePullRequest>[2] {
  return {
    annotate(issue) {
      const props = {
        title: `${issue.rule}${issue.keyPath ? ` (${issue.keyPath})` : ''}`,
        file: issue.file,
        startLine: issue.line,
        startColumn: issue.column,
      };
      if (issue.severity === 'error') core.error(issue.message, props);
      else core.warning(issue.message, props);
    },
    async summary(markdown) {
      summary.text += markdown;
      await core.summary.addRaw(markdown).write();
    },
    info: (message) => core.info(message),
  };
}
