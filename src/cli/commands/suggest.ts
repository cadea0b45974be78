import type { Command } from '../command.js';

export const suggestCommand: Command = {
  name: 'suggest',
  summary: 'Propose the next candidates',
  usage: 'topo suggest <experiment> [--count N] [--open-prs] [--json]',
  async run(_args, io) {
    io.stderr('topo suggest: not implemented yet (issue 8)\n');
    return 1;
  },
};
