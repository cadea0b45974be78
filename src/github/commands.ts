// The /topo comment commands, parsed strictly: the comment must start with `/topo`, the command
// word must be one of the known ones in lower case, commands without arguments take none, and
// `reject`/`learn` require their text. Anything else is `invalid` and answered with the help.
export const COMMANDS = {
  submit: {
    argument: 'candidate',
    summary:
      "submit the pull request's candidates (or the one named), each its own run, to Slurm (queued when all slots are busy)",
  },
  cancel: {
    argument: 'candidate',
    summary: 'cancel the queued or running jobs of the candidates (or the one named)',
  },
  status: { argument: false, summary: 'refresh the status comment now (otherwise every few minutes)' },
  stop: {
    argument: 'candidate',
    summary: 'stop the runs (or the named candidate’s) once stable, keeping their metrics',
  },
  reject: {
    argument: true,
    summary: 'record this candidate as rejected, with the reason, when the PR closes',
  },
  learn: { argument: true, summary: 'add a lesson to the experiment record when the PR closes' },
  conclude: { argument: false, summary: 'post the experiment report comparing every candidate so far' },
  state: {
    argument: 'rebuild',
    summary:
      "rebuild the pull request's bot state from Slurm's jobs and the bot's own records (when it is unreadable)",
  },
  help: { argument: false, summary: 'show this help' },
} as const;

export type CommandName = keyof typeof COMMANDS;

export type ParsedCommand =
  | { kind: 'none' }
  | { kind: 'command'; name: CommandName; argument?: string }
  | { kind: 'invalid'; reason: string };

const MAX_ARGUMENT = 2000;
/** A candidate's name (its file name without .yaml), as the candidate schema allows it. */
const CANDIDATE_NAME = /^[a-z0-9][a-z0-9-]{0,39}$/;

export function parseCommand(body: string): ParsedCommand {
  const text = body.replace(/\r\n?/g, '\n').trim();
  const m = /^\/topo(?=\s|$)/.exec(text);
  if (!m) return { kind: 'none' };
  const rest = text.slice(m[0].length);
  const firstLine = rest.split('\n', 1)[0] as string;
  const word = firstLine.trim().split(/\s+/, 1)[0] ?? '';
  if (!word) return { kind: 'invalid', reason: 'no command given after /topo' };
  if (!Object.hasOwn(COMMANDS, word)) {
    return { kind: 'invalid', reason: `unknown command \`${word.slice(0, 40)}\`` };
  }
  const name = word as CommandName;
  const argument = rest.trim().slice(word.length).trim();
  if (COMMANDS[name].argument === true) {
    if (!argument) return { kind: 'invalid', reason: `\`/topo ${name}\` needs a text after it` };
    if (argument.length > MAX_ARGUMENT) {
      return {
        kind: 'invalid',
        reason: `the text after \`/topo ${name}\` is longer than ${MAX_ARGUMENT} characters`,
      };
    }
    return { kind: 'command', name, argument };
  }
  if (COMMANDS[name].argument === 'rebuild') {
    if (argument !== 'rebuild')
      return { kind: 'invalid', reason: `\`/topo ${name}\` takes one word: \`/topo ${name} rebuild\`` };
    return { kind: 'command', name, argument };
  }
  if (COMMANDS[name].argument === 'candidate') {
    if (!argument) return { kind: 'command', name };
    if (!CANDIDATE_NAME.test(argument))
      return {
        kind: 'invalid',
        reason: `\`/topo ${name}\` takes at most one candidate name (lower-case letters, digits and dashes, as in its file name)`,
      };
    return { kind: 'command', name, argument };
  }
  if (argument) return { kind: 'invalid', reason: `\`/topo ${name}\` takes no arguments` };
  return { kind: 'command', name };
}

export function helpText(reason?: string): string {
  const lines = [
    ...(reason ? [`I did not understand that: ${reason}.`, ''] : []),
    'Commands (comment on the pull request; the comment must start with the command):',
    '',
    '| Command | What it does |',
    '| --- | --- |',
    ...Object.entries(COMMANDS).map(
      ([name, c]) => `| \`/topo ${name}${argumentHint(name, c.argument)}\` | ${c.summary} |`,
    ),
    '',
    '`submit`, `cancel` and `stop` need write access to the repository and are not available on pull requests from forks.',
  ];
  return lines.join('\n');
}

function argumentHint(name: string, argument: boolean | 'candidate' | 'rebuild'): string {
  if (argument === 'candidate') return ' [<candidate>]';
  if (argument === 'rebuild') return ' rebuild';
  if (argument) return name === 'reject' ? ' <reason>' : ' <text>';
  return '';
}
