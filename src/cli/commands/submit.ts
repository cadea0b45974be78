import type { Command } from '../command.js';

export const submitCommand: Command = {
  name: 'submit',
  summary: 'Submit a candidate to Slurm (idempotent)',
  usage: 'topo submit <candidate.yaml> [--cluster NAME] [--dry-run]',
  async run(_args, io) {
    io.stderr('topo submit: not implemented yet (issue 3)\n');
    return 1;
  },
};
