// `/topo state rebuild`: a writer's recovery when the pull request's bot state cannot be read, or lost
// runs: rebuilt from Slurm's jobs and the bot's own records on the pull request (src/usecases/rebuild.ts).
// Also on a closed pull request, before the record is run again.
import { inlineText } from '../github/user-text.js';
import { openRequests, type RunRequest } from '../lifecycle/model.js';
import type { RebuildResult } from '../usecases/rebuild.js';
import type { PullCommand } from './command.js';
import { rebuildFor } from './pull.js';

export const state: PullCommand = {
  name: 'state',
  where: 'pull',
  argument: { kind: 'word', word: 'rebuild', optional: false },
  permission: 'write',
  recordedAtClose: false,
  onClosed: true,
  summary:
    "rebuild the pull request's bot state from Slurm's jobs and the bot's own records (when it is unreadable)",
  run: async (ctx) => {
    const rebuilt = await rebuildFor(ctx);
    return { ok: true, message: rebuildReply(rebuilt, openRequests(rebuilt.state)) };
  },
};

const runs = (n: number) => `${n} run${n === 1 ? '' : 's'}`;

/** The reply to `/topo state rebuild`. */
function rebuildReply(r: RebuildResult, open: readonly RunRequest[]): string {
  const p = r.problems.length;
  return [
    `Rebuilt this pull request's bot state from Slurm's jobs and the bot's own records: ${runs(r.found)} named in its state and submission records, ${r.known} known to Slurm.`,
    r.wasReadable
      ? `The state was readable and is kept; ${runs(r.added)} it did not hold ${r.added === 1 ? 'was' : 'were'} added.`
      : `The state could not be read and was replaced (${runs(r.added)}).`,
    open.length
      ? `Open now: ${open.map((o) => `\`${o.runName}\``).join(', ')}; the monitor goes on with them.`
      : 'No run is open now: comment `/topo submit` to run a candidate.',
    ...(r.cancelled.length
      ? [`Cancelled Slurm job ${r.cancelled.join(', ')} of runs that no longer stand.`]
      : []),
    ...(p
      ? [
          `${p} submission record${p === 1 ? '' : 's'} did not check and ${p === 1 ? 'was' : 'were'} left out: ${inlineText(r.problems.slice(0, 3).join('; '), 600)}.`,
        ]
      : []),
    ...(r.unreachable.length
      ? [
          `Not on the default branch (their jobs were not read): ${r.unreachable.map((u) => `\`${u}\``).join(', ')}.`,
        ]
      : []),
  ].join(' ');
}
