// The one parser of `/topo` comments, for pull requests and dashboards alike, over the registry's
// rules: the comment must start with `/topo`, the command word must be one of the known ones in
// lower case and given where it is taken, and what follows must be what its rule takes. Anything
// else is `invalid`, with a reason the reply gives. Pure.
import type { ArgumentRule, Command, Where } from './command.js';

export type Parsed<C extends Command = Command> =
  | { kind: 'none' }
  | { kind: 'command'; command: C; argument?: string }
  | { kind: 'invalid'; reason: string };

const MAX_TEXT = 2000;
/** A candidate's name (its file name without .yaml), as the candidate schema allows it. */
const CANDIDATE_NAME = /^[a-z0-9][a-z0-9-]{0,39}$/;
const PLACE: Record<Where, string> = {
  pull: 'a pull request',
  dashboard: "an autopilot experiment's dashboard issue",
};

/** `body` as a command given at `where`, read against `commands` (the registry). */
export function parseCommand<C extends Command>(
  body: string,
  where: Where,
  commands: readonly C[],
): Parsed<C> {
  const text = body.replace(/\r\n?/g, '\n').trim();
  const m = /^\/topo(?=\s|$)/.exec(text);
  if (!m) return { kind: 'none' };
  const rest = text.slice(m[0].length);
  const word = ((rest.split('\n', 1)[0] as string).trim().split(/\s+/, 1)[0] ?? '').trim();
  if (!word) return { kind: 'invalid', reason: 'no command given after /topo' };
  const named = commands.filter((c) => c.name === word);
  const command = named.find((c) => c.where === where);
  if (!command) {
    const elsewhere = named[0];
    return {
      kind: 'invalid',
      reason: elsewhere
        ? `\`/topo ${word}\` is taken on ${PLACE[elsewhere.where]}, not here${movedHint(word, where, commands)}`
        : `unknown command \`${word.slice(0, 40)}\``,
    };
  }
  const argument = rest.trim().slice(word.length).trim();
  const why = argumentProblem(command.name, command.argument, argument);
  if (why) return { kind: 'invalid', reason: why };
  return argument ? { kind: 'command', command, argument } : { kind: 'command', command };
}

/** On a pull request, the dashboard's `conclude` points at the report, its old meaning there. */
function movedHint(word: string, where: Where, commands: readonly Command[]): string {
  if (word !== 'conclude' || where !== 'pull' || !commands.some((c) => c.name === 'report')) return '';
  return ': `/topo report` posts the experiment’s final report here';
}

function argumentProblem(name: string, rule: ArgumentRule, argument: string): string | null {
  switch (rule.kind) {
    case 'none':
      return argument ? `\`/topo ${name}\` takes no arguments` : null;
    case 'candidate':
      return argument && !CANDIDATE_NAME.test(argument)
        ? `\`/topo ${name}\` takes at most one candidate name (lower-case letters, digits and dashes, as in its file name)`
        : null;
    case 'text':
      if (!argument) return `\`/topo ${name}\` needs a text after it`;
      return argument.length > MAX_TEXT
        ? `the text after \`/topo ${name}\` is longer than ${MAX_TEXT} characters`
        : null;
    case 'word':
      if (argument === rule.word || (!argument && rule.optional)) return null;
      return rule.optional
        ? `\`/topo ${name}\` takes nothing or \`${rule.word}\``
        : `\`/topo ${name}\` takes one word: \`/topo ${name} ${rule.word}\``;
  }
}

/** The argument's hint in the help: ` [<candidate>]`, ` <reason>`, ` rebuild`, ` [--now]`. */
export function argumentHint(rule: ArgumentRule): string {
  switch (rule.kind) {
    case 'none':
      return '';
    case 'candidate':
      return ' [<candidate>]';
    case 'text':
      return ` ${rule.hint}`;
    case 'word':
      return rule.optional ? ` [${rule.word}]` : ` ${rule.word}`;
  }
}
