// `/topo pause [--now]` on an autopilot experiment's dashboard: no new runs start, queued Requests
// included; running ones go on to their decision, or with `--now` are stopped too (`stopped`, not failed).
import type { DashboardCommand } from './command.js';

export const pause: DashboardCommand = {
  name: 'pause',
  where: 'dashboard',
  argument: { kind: 'word', word: '--now', optional: true },
  permission: 'write',
  recordedAtClose: false,
  summary: 'no new runs; running ones go on to their decision (`--now`: running ones stop too)',
  run: (state, by, argument) => {
    const now = argument === '--now';
    return {
      state: { ...state, paused: { by, now } },
      done: true,
      text: now
        ? 'paused now: no new runs start, and running ones are stopped (`stopped`, not failed); `/topo resume` runs them again.'
        : 'paused: no new runs start, queued ones included; running ones go on to their decision. `/topo resume` goes on.',
    };
  },
};
