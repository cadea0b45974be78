// `/topo reject <reason>`: nothing runs now; the record reads it back when the pull request closes
// (./recorded.ts) and records the candidate as rejected with the reason.
import type { PullCommand } from './command.js';

export const reject: PullCommand = {
  name: 'reject',
  where: 'pull',
  argument: { kind: 'text', hint: '<reason>' },
  permission: 'write',
  recordedAtClose: (facts, reason) => ({ ...facts, rejectReason: reason }),
  summary: 'record this candidate as rejected, with the reason, when the PR closes',
  run: async () => ({
    ok: true,
    message:
      'Noted: this candidate will be recorded as **rejected** with your reason when the pull request is closed or merged.',
  }),
};
