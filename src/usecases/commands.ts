// The /topo command router: parse the comment strictly, acknowledge it (eyes), check who asks and
// from where (write access, not a fork), dispatch to the use case, and answer (rocket + reply on
// success, confused + reply saying why on refusal or failure). Use cases are injected as
// handlers so this file stays orchestration only; a command with no handler in this installation
// is answered as unavailable, never silently dropped.
import type { Octokit } from '../github/client.js';
import { type CommandName, helpText, parseCommand } from '../github/commands.js';
import { STATE_LABELS } from '../github/labels.js';
import { checkCommandAllowed, type PullRequestOrigin, pullOrigin } from '../github/permissions.js';
import { reactToComment } from '../github/reactions.js';
import { inlineText, quotedText } from '../github/user-text.js';

export interface PullRequestContext {
  octokit: Octokit;
  owner: string;
  repo: string;
  pullNumber: number;
  /** Head commit of the pull request: candidates are read there, as data, through the API. */
  headSha: string;
  headRef: string;
  baseRef: string;
  defaultBranch: string;
  /** Who asked (the commenter, or the user who added the label). */
  actor: string;
  botLogin: string;
  /** The text after `/topo reject|learn`. */
  argument?: string;
}

/**
 * What a handler reports back: a Markdown message for the reply. `ok: false` is a refusal the
 * user can act on (the candidate does not validate, nothing to cancel…): 😕 and the reason, the
 * step stays green. A thrown error is a failure of the system: 😕, the message, the step fails.
 */
export interface HandlerResult {
  ok: boolean;
  message: string;
}

export type CommandHandler = (ctx: PullRequestContext) => Promise<HandlerResult>;
export type CommandHandlers = Partial<Record<Exclude<CommandName, 'help'>, CommandHandler>>;

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
  | { outcome: 'invalid' | 'refused' | 'unavailable' | 'failed'; command?: string; message: string }
  | { outcome: 'done'; command: string; message: string };

/** Commands that only read or explain: everything else changes the experiment and needs write access. */
const NO_PERMISSION_NEEDED = new Set<string>(['help']);

/** Commands the record engineer reads back from the comments when the pull request closes. */
const RECORDED_AT_CLOSE: Record<string, string> = {
  reject:
    'Noted: this candidate will be recorded as **rejected** with your reason when the pull request is closed or merged.',
  learn:
    'Noted: this lesson will be added to the experiment record when the pull request is closed or merged.',
};

function quote(body: string): string {
  return quotedText(body.trim().split('\n', 1)[0] ?? '', 1, 200);
}

export async function routeComment(
  octokit: Octokit,
  event: CommentEvent,
  handlers: CommandHandlers,
  options: { botLogin: string },
): Promise<RouteOutcome> {
  const parsed = parseCommand(event.comment.body);
  if (parsed.kind === 'none') return { outcome: 'ignored', why: 'not a /topo command' };
  // Bots (including this one) never drive the cluster, and this avoids reply loops.
  if (event.comment.user.type === 'Bot' || event.comment.user.login === options.botLogin) {
    return { outcome: 'ignored', why: `comment by bot ${event.comment.user.login}` };
  }
  const { owner, repo } = event;
  const commentRef = { owner, repo, comment_id: event.comment.id };
  const reply = (text: string) =>
    octokit.rest.issues.createComment({
      owner,
      repo,
      issue_number: event.issueNumber,
      body: `${quote(event.comment.body)}\n\n${text}`,
    });
  await reactToComment(octokit, commentRef, 'received');

  if (!event.isPullRequest) {
    const message = '`/topo` commands work on pull requests that add or change a candidate topology.';
    await reply(message);
    await reactToComment(octokit, commentRef, 'refused');
    return { outcome: 'invalid', message };
  }
  if (parsed.kind === 'invalid') {
    const message = helpText(parsed.reason);
    await reply(message);
    await reactToComment(octokit, commentRef, 'refused');
    return { outcome: 'invalid', message };
  }
  const command = parsed.name;
  if (command === 'help') {
    const message = helpText();
    await reply(message);
    await reactToComment(octokit, commentRef, 'succeeded');
    return { outcome: 'done', command, message };
  }

  const { data: pull } = await octokit.rest.pulls.get({ owner, repo, pull_number: event.issueNumber });
  const origin: PullRequestOrigin = pullOrigin(pull);
  if (!NO_PERMISSION_NEEDED.has(command)) {
    const decision = await checkCommandAllowed(octokit, {
      owner,
      repo,
      username: event.comment.user.login,
      command,
      pull: origin,
    });
    if (!decision.allowed) {
      await reply(decision.reason);
      await reactToComment(octokit, commentRef, 'refused');
      return { outcome: 'refused', command, message: decision.reason };
    }
  }
  // the report, and the state's rebuild (the record of a closed pull request needs a readable state)
  if (pull.state !== 'open' && command !== 'conclude' && command !== 'state') {
    const message = `This pull request is ${pull.merged_at ? 'merged' : 'closed'}: \`/topo ${command}\` only works on open pull requests.`;
    await reply(message);
    await reactToComment(octokit, commentRef, 'refused');
    return { outcome: 'refused', command, message };
  }

  const ctx: PullRequestContext = {
    octokit,
    owner,
    repo,
    pullNumber: pull.number,
    headSha: pull.head.sha,
    headRef: pull.head.ref,
    baseRef: pull.base.ref,
    defaultBranch: pull.base.repo.default_branch,
    actor: event.comment.user.login,
    botLogin: options.botLogin,
    argument: parsed.argument,
  };

  const handler = handlers[command];
  if (!handler && RECORDED_AT_CLOSE[command]) {
    const message = RECORDED_AT_CLOSE[command] as string;
    await reply(message);
    await reactToComment(octokit, commentRef, 'succeeded');
    return { outcome: 'done', command, message };
  }
  if (!handler) {
    const message = `\`/topo ${command}\` is not available in this installation.`;
    await reply(message);
    await reactToComment(octokit, commentRef, 'refused');
    return { outcome: 'unavailable', command, message };
  }
  let result: HandlerResult;
  try {
    result = await handler(ctx);
  } catch (e) {
    const message = `\`/topo ${command}\` failed: ${(e as Error).message}`;
    await reply(message);
    await reactToComment(octokit, commentRef, 'refused');
    return { outcome: 'failed', command, message };
  }
  if (result.message) await reply(result.message);
  await reactToComment(octokit, commentRef, result.ok ? 'succeeded' : 'refused');
  return result.ok
    ? { outcome: 'done', command, message: result.message }
    : { outcome: 'refused', command, message: result.message };
}

/**
 * A `pull_request` `labeled` event. Labels only DISPLAY the run state (the bot sets them from its
 * run state); a `topology:*` label added by anyone else is removed with a reply saying why, and
 * never starts, queues or changes anything.
 */
export async function routeLabel(
  octokit: Octokit,
  event: {
    owner: string;
    repo: string;
    pullNumber: number;
    label: string;
    sender: { login: string; type?: string };
  },
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

/** What `/topo status` reports of one candidate (src/monitor/report.ts CandidateReport). */
export interface StatusOfCandidate {
  candidate: string;
  runName: string;
  state: string;
}

/**
 * The reply to `/topo status` after its refresh pass: every candidate of the pull request (each has
 * its own monitor comment), or a refusal when none is requested. Run names are generated, never
 * user text.
 */
export function statusReply(outcomes: readonly StatusOfCandidate[]): HandlerResult {
  const [only] = outcomes;
  if (!only)
    return {
      ok: false,
      message:
        'No run of this pull request is requested: comment `/topo submit` (the experiment must be on the default branch).',
    };
  if (outcomes.length === 1)
    return {
      ok: true,
      message: `\`${only.runName}\` is **${only.state}**: the monitor comment is up to date.`,
    };
  return {
    ok: true,
    message: [
      `${outcomes.length} candidates; each one's monitor comment is up to date:`,
      ...[...outcomes]
        .sort((a, b) => a.candidate.localeCompare(b.candidate))
        .map((o) => `- \`${o.candidate}\`: \`${o.runName}\` is **${o.state}**`),
    ].join('\n'),
  };
}
