// `/topo learn <text>`: nothing runs now; the record reads it back when the pull request closes
// (./recorded.ts) and adds the lesson to the experiment's learnings.
import { learningFromText } from '../record/learnings.js';
import type { PullCommand } from './command.js';

export const learn: PullCommand = {
  name: 'learn',
  where: 'pull',
  argument: { kind: 'text', hint: '<text>' },
  permission: 'write',
  recordedAtClose: (facts, text, comment) => {
    const learning = learningFromText(text, comment.url, comment.login);
    return learning ? { ...facts, learnings: [...facts.learnings, learning] } : facts;
  },
  summary: 'add a lesson to the experiment record when the PR closes',
  run: async () => ({
    ok: true,
    message:
      'Noted: this lesson will be added to the experiment record when the pull request is closed or merged.',
  }),
};
