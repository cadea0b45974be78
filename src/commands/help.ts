// `/topo help`: the commands of the registry it was routed by, with their arguments and who may give them.
import type { Command, PullCommand } from './command.js';
import { argumentHint } from './parse.js';

export const help: PullCommand = {
  name: 'help',
  where: 'pull',
  argument: { kind: 'none' },
  permission: 'anyone',
  recordedAtClose: false,
  onClosed: true,
  summary: 'show this help',
  run: async (ctx) => ({ ok: true, message: helpText(ctx.commands) }),
};

/** The pull request's commands as a table, after the reason a comment was not understood. */
export function helpText(commands: readonly Command[], reason?: string): string {
  const here = commands.filter((c) => c.where === 'pull');
  const writers = here.filter((c) => c.permission === 'write').map((c) => `\`${c.name}\``);
  return [
    ...(reason ? [`I did not understand that: ${reason}.`, ''] : []),
    'Commands (comment on the pull request; the comment must start with the command):',
    '',
    '| Command | What it does |',
    '| --- | --- |',
    ...here.map((c) => `| \`/topo ${c.name}${argumentHint(c.argument)}\` | ${c.summary} |`),
    '',
    `${writers.join(', ')} need write access to the repository and are not available on pull requests from forks.`,
  ].join('\n');
}

/** The dashboard's controls, one line each (the dashboard's text and its refusals list them). */
export function dashboardHelp(commands: readonly Command[]): string[] {
  return commands
    .filter((c) => c.where === 'dashboard')
    .map((c) => `\`/topo ${c.name}${argumentHint(c.argument)}\`: ${c.summary}`);
}
