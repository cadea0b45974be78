import type { Command } from '../command.js';

export const renderCommand: Command = {
  name: 'render',
  summary: 'Print the sbatch argv of a candidate',
  usage: 'topo render [--json] [--cluster NAME] <candidate.yaml>',
  async run(_args, io) {
    io.stderr('topo render: not implemented yet (issue 2)\n');
    return 1;
  },
};
