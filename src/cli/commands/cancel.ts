import type { Command } from '../command.js';

export const cancelCommand: Command = {
  name: 'cancel',
  summary: 'Cancel the Slurm job of a candidate',
  usage: 'topo cancel <candidate.yaml> [--cluster NAME]',
  async run(_args, io) {
    io.stderr('topo cancel: not implemented yet (issue 3)\n');
    return 1;
  },
};
