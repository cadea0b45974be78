// The /topo comment commands, parsed strictly: the comment must start with `/topo`, the command
// word must be one of the known ones in lower case, commands without arguments take none, and
// `reject`/`learn` require their text. Anything else is `invalid` and answered with the help.
export const COMMANDS = {
  submit: { argument: false, summary: 'submit this candidate to Slurm (queued when all slots are busy)' },
  cancel: { argument: false, summary: 'cancel the queued or running job of this candidate' },
  status: { argument: false, summary: 'refresh the status comment now (otherwise every few minutes)' },
  stop: { argument: false, summary: 'stop the run once it is stable, keeping its metrics' },
  reject: {
    argument: true,
    summary: 'record this candidate as rejected, with the reason, when the PR closes',
  },
  learn: { argument: true, summary: 'add a lesson to the experiment record when the PR closes' },
  conclude: { argument: false, summary: 'post the experiment report comparing every candidate so far' },
  help: { argument: false, summary: 'show this help' },
} as const;

export type CommandName = keyof typeof COMMANDS;

export type ParsedCommand =
  | { kind: 'none' }
  | { kind: 'command'; name: CommandName; argument?: string }
  | { kind: 'invalid'; reason: string };

const MAX_ARGUMENT = 2000;

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
  if (COMMANDS[name].argument) {
    if (!argument) return { kind: 'invalid', reason: `\`/topo ${name}\` needs a text after it` };
    if (argument.length > MAX_ARGUMENT) {
      return {
        kind: 'invalid',
        reason: `the text after \`/topo ${name}\` is longer than ${MAX_ARGUMENT} characters`,
      };
    }
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
      ([name, c]) =>
        `| \`/topo ${name}${c.argument ? (name === 'reject' ? ' <reason>' : ' <text>') : ''}\` | ${c.summary} |`,
    ),
    '',
    '`submit`, `cancel` and `stop` need write access to the repository and are not available on pull requests from forks.',
  ];
  return lines.join('\n');
}
