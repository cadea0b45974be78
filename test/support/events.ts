// Webhook payloads for GITHUB_EVENT_PATH, built from @octokit/webhooks-examples (GitHub's own
// examples) with the local GitHub's state written over them, so an action reads the same shape
// it reads on a runner and the ids/numbers/shas it finds are real in the local API.
import { createRequire } from 'node:module';
import type { GitHubServer, Pull, Repo } from '../../src/github-local/index.js';
import { openApi } from '../../src/github-local/openapi.js';
import type { Comment } from '../../src/github-local/state.js';

type Json = Record<string, unknown>;

interface ExampleGroup {
  name: string;
  examples: Json[];
}

const require = createRequire(import.meta.url);
const examples = require('@octokit/webhooks-examples') as ExampleGroup[];

function example(event: string, action?: string): Json {
  const group = examples.find((g) => g.name === event);
  const found = group?.examples.find((e) => action === undefined || e.action === action);
  if (!found) throw new Error(`no webhook example for ${event}${action ? `.${action}` : ''}`);
  const copy = structuredClone(found);
  // The local repositories belong to users, not organisations or enterprises.
  delete copy.organization;
  delete copy.enterprise;
  delete copy.installation;
  return copy;
}

/** A payload GitHub would not send is a bug in the test, reported here rather than in the action. */
function checked(hook: string, event: EventFile): EventFile {
  const problems = openApi().validateWebhook(hook, event.payload);
  if (problems.length)
    throw new Error(`test event ${hook} does not match GitHub's webhook schema: ${problems.join('; ')}`);
  return event;
}

export interface EventFile {
  eventName: string;
  payload: Json;
}

/** `pull_request` with `opened`, `synchronize`, `labeled`, `closed`, … */
export function pullRequestEvent(
  gh: GitHubServer,
  pull: Pull,
  action: string,
  options: { sender?: string; label?: string } = {},
): EventFile {
  const payload = example('pull_request', action);
  payload.action = action;
  payload.number = pull.number;
  payload.pull_request = gh.render.pull(pull);
  payload.repository = gh.render.repository(pull.base.repo);
  payload.sender = gh.render.user(gh.state.user(options.sender ?? pull.user.login));
  if (options.label !== undefined) {
    payload.label = gh.render.label(pull.base.repo, gh.state.ensureLabel(pull.base.repo, options.label));
  } else {
    delete payload.label;
  }
  return checked(`pull-request-${action}`, { eventName: 'pull_request', payload });
}

/** `issue_comment` `created` for a comment already in the local state. */
export function issueCommentEvent(gh: GitHubServer, comment: Comment, action = 'created'): EventFile {
  const pull = gh.state.item(comment.repo, comment.issueNumber);
  if (!pull) throw new Error(`comment ${comment.id} is not on an issue or a pull request`);
  const payload = example('issue_comment', action);
  payload.action = action;
  payload.issue = gh.render.issue(pull);
  payload.comment = gh.render.comment(comment);
  payload.repository = gh.render.repository(comment.repo);
  payload.sender = gh.render.user(comment.user);
  return checked(`issue-comment-${action}`, { eventName: 'issue_comment', payload });
}

/** `schedule`: GitHub sends only the cron line (plus repository fields the runner adds). */
export function scheduleEvent(gh: GitHubServer, repo: Repo, cron = '*/5 * * * *'): EventFile {
  return { eventName: 'schedule', payload: { schedule: cron, repository: gh.render.repository(repo) } };
}

export function workflowDispatchEvent(gh: GitHubServer, repo: Repo, inputs: Json = {}): EventFile {
  const payload = example('workflow_dispatch');
  payload.inputs = inputs;
  payload.ref = `refs/heads/${repo.defaultBranch}`;
  payload.repository = gh.render.repository(repo);
  payload.sender = gh.render.user(repo.owner);
  return checked('workflow-dispatch', { eventName: 'workflow_dispatch', payload });
}
