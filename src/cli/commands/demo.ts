import type { Command } from '../command.js';

export const demoCommand: Command = {
  name: 'demo',
  summary: 'Run the whole loop on a local Slurm with the AlpaSim twin',
  usage: 'topo demo [--quick] [--out DIR]',
  async run(_args, io) {
    io.stderr('topo demo: not implemented yet (issue 9)\n');
    return 1;
  },
};
