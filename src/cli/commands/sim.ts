import type { Command } from '../command.js';

export const simCommand: Command = {
  name: 'sim',
  summary: 'Run or export the AlpaSim twin',
  usage: 'topo sim run <hydra overrides…> | topo sim --export-openmetrics <file> [options]',
  async run(_args, io) {
    io.stderr('topo sim: not implemented yet (issue 4)\n');
    return 1;
  },
};
