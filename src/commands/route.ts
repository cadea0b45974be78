// A pull request's `/topo` comment, answered: parse it (the one parser, over the registry), acknowledge
// it (eyes), check who asks and from where (write access, not a fork) as the command asks, run it, and
// answer (rocket + reply on success, confused + reply saying why on refusal or failure). A label a
// person adds is answered here too: labels only show the state.
import type { Octokit } from '../github/client.js';
import { STATE_LABELS } from '../github/labels.js';
import { checkCommandAllowed, pullOrigin } from '../github/permissions.js';
import { reactToComment } from '../github/reactions.js';
import { inlineText, quotedText } from '../github/user-text.js';
import type { Command, CommandContext, CommandPorts, HandlerResult, PullCommand } from './command.js';
import { helpText } from './help.js';
import { parseCommand } from './parse.js';
import { COMMANDS } from './registry.js';

export interface CommentEvent {
  owner: string;
  repo: string;
  issueNumber: number;
  /** True when the issue is a pull request (`issue.pull_request` present in the payload). */
  isPullRequest: boolean;
  comment: { id: number; body: string; user: { login: string; type: string } };
}

export type RouteOutcome =
  | { outcome: 'ignored'; why: string }
  | { outcome: 'invalid' | 'refused' | 'failed'; command?: string; message: string }
  | { outcome: 'done'; command: string; message: string };
type Answered = Exclude<RouteOutcome, { outcome: 'ignored' }>;

export interface RouteOptions {
  botLogin: string;
  ports: CommandPorts;
  /** The registry (tests give their own runners). */
  commands?: readonly Command[];
}

/**
 * A webhook event of the submit workflow: a new comment (`issue_comment` created) or a label added
 * (`pull_request` labeled); anything else is ignored.
 */
export async function routeEvent(
  octokit: Octokit,
  event: { name: string; payload: WebhookPayload; owner: string; repo: string },
  options: RouteOptions,
): Promise<RouteOutcome> {
  const { name, payload, owner, repo } = event;
  if (name === 'issue_comment' && payload.action === 'created' && payload.issue && payload.comment) {
    const { issue, comment } = payload;
    return routeComment(
      octokit,
      {
        owner,
        repo,
        issueNumber: issue.number,
        isPullRequest: Boolean(issue.pull_request),
        comment: { id: comment.id, body: comment.body ?? '', user: comment.user },
      },
      options,
    );
  }
  if (name === 'pull_request' && payload.action === 'labeled' && payload.pull_request && payload.sender)
    return routeLabel(
      octokit,
      {
        owner,
        repo,
        pullNumber: payload.pull_request.number,
        label: payload.label?.name ?? '',
        sender: payload.sender,
      },
      options,
    );
  return { outcome: 'ignored', why: `event ${name} ${payload.action ?? ''}`.trim() };
}

/** The fields of a webhook payload the router reads. */
export interface WebhookPayload {
  action?: string;
  issue?: { number: number; pull_request?: unknown };
  comment?: { id: number; body?: string | null; user: { login: string; type: string } };
  pull_request?: { number: number };
  label?: { name?: string };
  sender?: { login: string };
}

export async function routeComment(
  octokit: Octokit,
  event: CommentEvent,
  options: RouteOptions,
): Promise<RouteOutcome> {
  const commands = options.commands ?? COMMANDS;
  const parsed = parseCommand(event.comment.body, 'pull', commands);
  if (parsed.kind === 'none') return { outcome: 'ignored', why: 'not a /topo command' };
  // Bots (including this one) never drive the cluster, and this avoids reply loops.
  if (event.comment.user.type === 'Bot' || event.comment.user.login === options.botLogin)
    return { outcome: 'ignored', why: `comment by bot ${event.comment.user.login}` };
  const answer = answerer(octokit, event);
  await reactToComment(octokit, answer.commentRef, 'received');
  if (!event.isPullRequest)
    return answer({
      outcome: 'invalid',
      message: '`/topo` commands work on pull requests that add or change a candidate topology.',
    });
  if (parsed.kind === 'invalid')
    return answer({ outcome: 'invalid', message: helpText(commands, parsed.reason) });
  const command = parsed.command as PullCommand;
  const { data: pull } = await octokit.rest.pulls.get({
    owner: event.owner,
    repo: event.repo,
    pull_number: event.issueNumber,
  });
  const refusal = await refusalOf(octokit, event, command, pull);
  if (refusal) return answer({ outcome: 'refused', command: command.name, message: refusal });
  const ctx: CommandContext = {
    octokit,
    owner: event.owner,
    repo: event.repo,
    pullNumber: pull.number,
    headSha: pull.head.sha,
    headRef: pull.head.ref,
    baseRef: pull.base.ref,
    defaultBranch: pull.base.repo.default_branch,
    actor: event.comment.user.login,
    botLogin: options.botLogin,
    ...(parsed.argument !== undefined ? { argument: parsed.argument } : {}),
    ports: options.ports,
    commands,
  };
  return answer(await runCommand(command, ctx));
}

/** Replies (quoting the command) with the outcome's message, then reacts (rocket when done, else confused). */
function answerer(octokit: Octokit, event: CommentEvent) {
  const { owner, repo } = event;
  const commentRef = { owner, repo, comment_id: event.comment.id };
  const quote = quotedText(event.comment.body.trim().split('\n', 1)[0] ?? '', 1, 200);
  const answer = async (outcome: Answered): Promise<RouteOutcome> => {
    if (outcome.message)
      await octokit.rest.issues.createComment({
        owner,
        repo,
        issue_number: event.issueNumber,
        body: `${quote}\n\n${outcome.message}`,
      });
    await reactToComment(octokit, commentRef, outcome.outcome === 'done' ? 'succeeded' : 'refused');
    return outcome;
  };
  return Object.assign(answer, { commentRef });
}

/** Why this commenter may not run this command on this pull request now, or null. */
async function refusalOf(
  octokit: Octokit,
  event: CommentEvent,
  command: PullCommand,
  pull: Parameters<typeof pullOrigin>[0] & { state: string; merged_at: string | null },
): Promise<string | null> {
  if (command.permission === 'write') {
    const decision = await checkCommandAllowed(octokit, {
      owner: event.owner,
      repo: event.repo,
      username: event.comment.user.login,
      command: command.name,
      pull: pullOrigin(pull),
    });
    if (!decision.allowed) return decision.reason;
  }
  if (pull.state !== 'open' && !command.onClosed)
    return `This pull request is ${pull.merged_at ? 'merged' : 'closed'}: \`/topo ${command.name}\` only works on open pull requests.`;
  return null;
}

/** The command's runner; a refusal is `refused`, a throw is `failed`. */
async function runCommand(command: PullCommand, ctx: CommandContext): Promise<Answered> {
  let result: HandlerResult;
  try {
    result = await command.run(ctx);
  } catch (e) {
    return {
      outcome: 'failed',
      command: command.name,
      message: `\`/topo ${command.name}\` failed: ${(e as Error).message}`,
    };
  }
  return { outcome: result.ok ? 'done' : 'refused', command: command.name, message: result.message };
}

/**
 * A `pull_request` `labeled` event. Labels only DISPLAY the run state (the bot sets them from its
 * run state); a `topology:*` label added by anyone else is removed with a reply saying why, and
 * never starts, queues or changes anything.
 */
export async function routeLabel(
  octokit: Octokit,
  event: { owner: string; repo: string; pullNumber: number; label: string; sender: { login: string } },
  options: { botLogin: string },
): Promise<RouteOutcome> {
  const { owner, repo, pullNumber, label } = event;
  if (!label.startsWith('topology:'))
    return { outcome: 'ignored', why: `label ${label} is not a topology label` };
  if (event.sender.login === options.botLogin)
    return { outcome: 'ignored', why: 'the bot sets the display labels itself' };
  try {
    await octokit.rest.issues.removeLabel({ owner, repo, issue_number: pullNumber, name: label });
  } catch (e) {
    if ((e as { status?: number }).status !== 404) throw e;
  }
  const known = Object.values(STATE_LABELS).map((l) => `\`${l.name}\``);
  const message = [
    `The label \`${inlineText(label, 60)}\` added by ${inlineText(event.sender.login, 40)} was removed: \`topology:*\` labels only show the state of a run (${known.join(', ')}) and are set by the bot.`,
    'To run this candidate, someone with write access comments `/topo submit`; it is then checked against the default branch and pinned to the current head commit.',
  ].join(' ');
  await octokit.rest.issues.createComment({ owner, repo, issue_number: pullNumber, body: message });
  return { outcome: 'refused', command: 'label', message };
}
