import type { Command } from '../command.js';

export const jobsCommand: Command = {
  name: 'jobs',
  summary: 'List the Slurm jobs of an experiment',
  usage: 'topo jobs <experiment> [--cluster NAME] [--json]',
  async run(_args, io) {
    io.stderr('topo jobs: not implemented yet (issue 3)\n');
    return 1;
  },
};
