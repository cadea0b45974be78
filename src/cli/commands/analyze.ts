import type { Command } from '../command.js';

export const analyzeCommand: Command = {
  name: 'analyze',
  summary: 'Analyse one run from Prometheus',
  usage: 'topo analyze <run_name> [--json]',
  async run(_args, io) {
    io.stderr('topo analyze: not implemented yet (issue 5)\n');
    return 1;
  },
};
