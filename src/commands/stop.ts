// `/topo stop [<candidate>]`: stop the pull request's runs (all, or the named candidate's), keeping
// their metrics; each open Request gets the Outcome `stopped` and keeps its label (./end-runs.ts).
import type { PullCommand } from './command.js';
import { endRuns } from './end-runs.js';

export const stop: PullCommand = {
  name: 'stop',
  where: 'pull',
  argument: { kind: 'candidate' },
  permission: 'write',
  recordedAtClose: false,
  summary: 'stop the runs (or the named candidate’s) once stable, keeping their metrics',
  run: endRuns('stopped'),
};
