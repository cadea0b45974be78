import type { Command } from '../command.js';

export const reportCommand: Command = {
  name: 'report',
  summary: 'Render the final report of an experiment',
  usage: 'topo report <experiment> [--out FILE]',
  async run(_args, io) {
    io.stderr('topo report: not implemented yet (issue 6)\n');
    return 1;
  },
};
