// `/topo conclude` on an autopilot experiment's dashboard: conclude now with the best so far (final);
// the next pass stops the running bot runs and records the conclusion. On a pull request the final
// report is `/topo report` (./report.ts).
import type { DashboardCommand } from './command.js';

export const conclude: DashboardCommand = {
  name: 'conclude',
  where: 'dashboard',
  argument: { kind: 'none' },
  permission: 'write',
  recordedAtClose: false,
  summary: 'conclude now with the best so far (final)',
  run: (state, by) => ({
    state: { ...state, concludeBy: by },
    done: true,
    text: 'concluding with the best so far: no new runs start, running bot runs are stopped.',
  }),
};
