import type { Command } from '../command.js';

export const initCommand: Command = {
  name: 'init',
  summary: 'Create an experiment from a full AlpaSim run command',
  usage: 'topo init --command "<full run command>" [--dir topologies] [--date YYYYMMDD]',
  async run(_args, io) {
    io.stderr('topo init: not implemented yet (issue 2)\n');
    return 1;
  },
};
