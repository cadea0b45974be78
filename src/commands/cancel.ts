// `/topo cancel [<candidate>]`: cancel the pull request's queued or running runs (all, or the named
// candidate's); each open Request gets the Outcome `cancelled` (./end-runs.ts).
import type { PullCommand } from './command.js';
import { endRuns } from './end-runs.js';

export const cancel: PullCommand = {
  name: 'cancel',
  where: 'pull',
  argument: { kind: 'candidate' },
  permission: 'write',
  recordedAtClose: false,
  summary: 'cancel the queued or running jobs of the candidates (or the one named)',
  run: endRuns('cancelled'),
};
