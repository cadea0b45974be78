// The /topo command router: parse the comment strictly, acknowledge it (eyes), check who asks and
// from where (write access, not a fork), dispatch to the use case, and answer (rocket + reply on
// success, confused + reply saying why on refusal or failure). Use cases are injected as
// handlers so this file stays orchestration only; a command with no handler in this installation
// is answered as unavailable, never silently dropped.
import type { Octokit } from '../github/client.js';
import { type CommandName, helpText, parseCommand } from '../github/commands.js';
import { STATE_LABELS } from '../github/labels.js';
import { checkCommandAllowed, pullOrigin } from '../github/permissions.js';
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
  const answer = answerer(octokit, event);
  await reactToComment(octokit, answer.commentRef, 'received');
  if (!event.isPullRequest)
    return answer(
      {
        outcome: 'invalid',
        message: '`/topo` commands work on pull requests that add or change a candidate topology.',
      },
      'refused',
    );
  if (parsed.kind === 'invalid')
    return answer({ outcome: 'invalid', message: helpText(parsed.reason) }, 'refused');
  const command = parsed.name;
  if (command === 'help') return answer({ outcome: 'done', command, message: helpText() }, 'succeeded');

  const { owner, repo } = event;
  const { data: pull } = await octokit.rest.pulls.get({ owner, repo, pull_number: event.issueNumber });
  const refusal = await refusalOf(octokit, event, command, pull);
  if (refusal) return answer({ outcome: 'refused', command, message: refusal }, 'refused');
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
  return answer(...(await runHandler(handlers, command, ctx)));
}

type Reaction = Parameters<typeof reactToComment>[2];
type Answer = ((
  outcome: Exclude<RouteOutcome, { outcome: 'ignored' }>,
  reaction: Reaction,
) => Promise<RouteOutcome>) & {
  commentRef: { owner: string; repo: string; comment_id: number };
};

/** Replies (quoting the command) with the outcome's message when it has one, then reacts. */
function answerer(octokit: Octokit, event: CommentEvent): Answer {
  const { owner, repo } = event;
  const commentRef = { owner, repo, comment_id: event.comment.id };
  const answer = async (outcome: Exclude<RouteOutcome, { outcome: 'ignored' }>, reaction: Reaction) => {
    if (outcome.message)
      await octokit.rest.issues.createComment({
        owner,
        repo,
        issue_number: event.issueNumber,
        body: `${quote(event.comment.body)}\n\n${outcome.message}`,
      });
    await reactToComment(octokit, commentRef, reaction);
    return outcome;
  };
  return Object.assign(answer, { commentRef });
}

/** Why this commenter may not run this command on this pull request now, or null. */
async function refusalOf(
  octokit: Octokit,
  event: CommentEvent,
  command: string,
  pull: Parameters<typeof pullOrigin>[0] & { state: string; merged_at: string | null },
): Promise<string | null> {
  if (!NO_PERMISSION_NEEDED.has(command)) {
    const decision = await checkCommandAllowed(octokit, {
      owner: event.owner,
      repo: event.repo,
      username: event.comment.user.login,
      command,
      pull: pullOrigin(pull),
    });
    if (!decision.allowed) return decision.reason;
  }
  // the report, and the state's rebuild (the record of a closed pull request needs a readable state)
  if (pull.state !== 'open' && command !== 'conclude' && command !== 'state')
    return `This pull request is ${pull.merged_at ? 'merged' : 'closed'}: \`/topo ${command}\` only works on open pull requests.`;
  return null;
}

/** The command's handler, a note for the commands read back at close, or unavailable; a throw is a failure. */
async function runHandler(
  handlers: CommandHandlers,
  command: Exclude<CommandName, 'help'>,
  ctx: PullRequestContext,
): Promise<[Exclude<RouteOutcome, { outcome: 'ignored' }>, Reaction]> {
  const handler = handlers[command];
  const noted = RECORDED_AT_CLOSE[command];
  if (!handler && noted) return [{ outcome: 'done', command, message: noted }, 'succeeded'];
  if (!handler)
    return [
      {
        outcome: 'unavailable',
        command,
        message: `\`/topo ${command}\` is not available in this installation.`,
      },
      'refused',
    ];
  let result: HandlerResult;
  try {
    result = await handler(ctx);
  } catch (e) {
    return [
      { outcome: 'failed', command, message: `\`/topo ${command}\` failed: ${(e as Error).message}` },
      'refused',
    ];
  }
  return result.ok
    ? [{ outcome: 'done', command, message: result.message }, 'succeeded']
    : [{ outcome: 'refused', command, message: result.message }, 'refused'];
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
