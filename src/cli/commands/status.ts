import type { Command } from '../command.js';

export const statusCommand: Command = {
  name: 'status',
  summary: 'Show the live candidates of an experiment',
  usage: 'topo status <experiment> [--watch]',
  async run(_args, io) {
    io.stderr('topo status: not implemented yet (issue 5)\n');
    return 1;
  },
};
