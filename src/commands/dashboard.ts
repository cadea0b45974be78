// An autopilot experiment's dashboard comments, folded into the bot's own state (src/autopilot/state.ts)
// by the registry's dashboard commands: the `/topo` comments newer than the last one answered, in
// order; a writer's valid command changes the state; each is answered (applied, refused, mistyped,
// or moot once concluded). One commenter's replies are limited per pass: the first few one by one,
// the rest in one reply that sums them up (300 comments of one reader make 4 replies, not 300,
// within GitHub's secondary rate limit). Pure.
import type { CommandReply, DashboardComment, PilotState } from '../autopilot/state.js';
import { inlineText } from '../github/user-text.js';
import type { Command, DashboardCommand } from './command.js';
import { dashboardHelp } from './help.js';
import { parseCommand } from './parse.js';
import { COMMANDS } from './registry.js';

/** The replies one commenter gets one by one in a pass; the rest are summed up in one more. */
export const REPLIES_PER_COMMENTER = 3;

type Answer = { kind: 'applied' | 'refused' | 'not done'; text: string };

export function applyCommands(
  state: PilotState,
  comments: readonly DashboardComment[],
  commands: readonly Command[] = COMMANDS,
): { state: PilotState; replies: CommandReply[] } {
  let next = state;
  const answered: Array<{ c: DashboardComment; answer: Answer }> = [];
  for (const c of [...comments].sort((a, b) => a.id - b.id)) {
    if (c.id <= next.lastComment) continue;
    next = { ...next, lastComment: c.id };
    const parsed = parseCommand(c.body, 'dashboard', commands);
    if (parsed.kind === 'none') continue;
    const one = answerOne(next, c, parsed, commands);
    next = one.state;
    answered.push({ c, answer: one.answer });
  }
  return { state: next, replies: limited(answered) };
}

function answerOne(
  state: PilotState,
  c: DashboardComment,
  parsed: Exclude<ReturnType<typeof parseCommand<Command>>, { kind: 'none' }>,
  commands: readonly Command[],
): { state: PilotState; answer: Answer } {
  const refuse = (kind: Answer['kind'], text: string) => ({ state, answer: { kind, text } });
  if (!c.allowed)
    return refuse(
      'refused',
      'refused: dashboard commands need write access to the repository; nothing changed.',
    );
  if (parsed.kind === 'invalid')
    return refuse(
      'not done',
      `not done: ${parsed.reason}; the dashboard takes: ${dashboardHelp(commands).join('; ')}.`,
    );
  if (state.concluded || state.concludeBy)
    return refuse('not done', 'not done: the experiment has concluded; a conclusion is final.');
  const done = (parsed.command as DashboardCommand).run(state, c.login, parsed.argument);
  return { state: done.state, answer: { kind: done.done ? 'applied' : 'not done', text: done.text } };
}

/** Each commenter's first replies one by one; the rest summed up in one reply to their last comment. */
function limited(answered: ReadonlyArray<{ c: DashboardComment; answer: Answer }>): CommandReply[] {
  const byLogin = new Map<string, Array<{ c: DashboardComment; answer: Answer }>>();
  for (const a of answered) byLogin.set(a.c.login, [...(byLogin.get(a.c.login) ?? []), a]);
  const replies: CommandReply[] = [];
  for (const [login, all] of byLogin) {
    const who = `@${inlineText(login, 40)}`;
    for (const { c, answer } of all.slice(0, REPLIES_PER_COMMENTER))
      replies.push({ id: c.id, text: `${who}: ${answer.text}` });
    const rest = all.slice(REPLIES_PER_COMMENTER);
    const last = rest.at(-1);
    if (last) replies.push({ id: last.c.id, text: `${who}: ${summary(rest.map((r) => r.answer))}` });
  }
  return replies.sort((a, b) => a.id - b.id);
}

function summary(rest: readonly Answer[]): string {
  const count = (kind: Answer['kind']) => rest.filter((a) => a.kind === kind).length;
  const parts = [
    count('applied')
      ? `${count('applied')} applied (the last: ${rest.filter((a) => a.kind === 'applied').at(-1)?.text})`
      : '',
    count('refused')
      ? `${count('refused')} refused (dashboard commands need write access; nothing changed)`
      : '',
    count('not done') ? `${count('not done')} not done (mistyped, or moot once concluded)` : '',
  ].filter(Boolean);
  return `${rest.length} more \`/topo\` comments in this pass, answered together to keep within GitHub's limits: ${parts.join('; ')}.`;
}
