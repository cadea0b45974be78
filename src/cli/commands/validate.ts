import type { Command } from '../command.js';

export const validateCommand: Command = {
  name: 'validate',
  summary: 'Validate candidate, experiment and cluster files',
  usage: 'topo validate [--json] <paths…>',
  async run(_args, io) {
    io.stderr('topo validate: not implemented yet (issue 2)\n');
    return 1;
  },
};
