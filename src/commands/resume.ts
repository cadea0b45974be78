// `/topo resume` on an autopilot experiment's dashboard: the autopilot goes on with its round.
import type { DashboardCommand } from './command.js';

export const resume: DashboardCommand = {
  name: 'resume',
  where: 'dashboard',
  argument: { kind: 'none' },
  permission: 'write',
  recordedAtClose: false,
  summary: 'go on',
  run: (state) => ({
    state: { ...state, paused: null },
    done: true,
    text: 'resumed: the autopilot goes on with its round.',
  }),
};
