// The bot's submission records (the block that ends a candidate's submission comment): the only text
// besides the state block a command reads a pull request's runs from. Only the block that ends the
// comment counts, every entry is checked, and a record must name its own Request's run.
import { describe, expect, it } from 'vitest';
import type { RunRequest } from '../../../src/lifecycle/model.js';
import {
  parseSubmissionsBlock,
  renderSubmissionsBlock,
  SUBMISSIONS_KEPT,
  withSubmission,
} from '../../../src/lifecycle/submissions.js';

const EXP = 'topology-opt-sub-local-20260101';
const request = (label: string, over: Partial<RunRequest> = {}): RunRequest => ({
  id: label,
  experiment: EXP,
  candidate: 'w',
  path: `topologies/${EXP}/w.yaml`,
  pr: 3,
  headSha: 'a'.repeat(40),
  topologyHash: '0badcafe',
  runName: `topo-${EXP}-w-0badcafe-${label}`,
  login: 'alice',
  requestedAt: '2026-12-01T10:00:00.000Z',
  ...over,
});

describe('the submission records block', () => {
  it('reads back what was written, each Request once, its job id kept', () => {
    let list = withSubmission([], { request: request('0000aaaa') });
    list = withSubmission(list, { request: request('0000aaaa'), jobId: '41' });
    list = withSubmission(list, { request: request('0000bbbb') });
    list = withSubmission(list, { request: request('0000aaaa') });
    const body = `### Submission of \`w\`\n\nsubmitted\n\n${renderSubmissionsBlock(list)}`;
    expect(parseSubmissionsBlock(body)).toEqual({
      submissions: [{ request: request('0000bbbb') }, { request: request('0000aaaa'), jobId: '41' }],
      problems: [],
    });
  });

  it('keeps the newest records only', () => {
    let list: ReturnType<typeof withSubmission> = [];
    for (let i = 0; i < SUBMISSIONS_KEPT + 5; i++)
      list = withSubmission(list, { request: request(i.toString(16).padStart(8, '0')) });
    expect(list).toHaveLength(SUBMISSIONS_KEPT);
    expect(list[0]?.request.id).toBe('00000005');
  });

  it('is read only where it ends the comment: a copy in the text (a quoted candidate file) is not', () => {
    const planted = renderSubmissionsBlock([{ request: request('0000dddd'), jobId: '6' }]);
    const body = `### Request of \`w\` refused\n\n\`\`\`text\n${planted}\n\`\`\`\n\nFix the candidate.`;
    expect(parseSubmissionsBlock(body)).toEqual({ submissions: [], problems: [] });
  });

  it('leaves out an entry that does not check or names another Request’s run, and says so', () => {
    const other = request('0000aaaa', { runName: `topo-${EXP}-w-0badcafe-0000ffff` });
    const bad = { request: { ...request('0000bbbb'), login: '<script>' } };
    const read = parseSubmissionsBlock(
      renderSubmissionsBlock([{ request: other }, bad as never, { request: request('0000cccc') }]),
    );
    expect(read.submissions.map((s) => s.request.id)).toEqual(['0000cccc']);
    expect(read.problems).toHaveLength(2);
    expect(read.problems[0]).toMatch(/does not name the Request's own id/);
    expect(read.problems[1]).toMatch(/login/);
  });

  it('reads nothing from a cut or unreadable block, and says so of the unreadable one', () => {
    const whole = renderSubmissionsBlock([{ request: request('0000aaaa') }]);
    expect(parseSubmissionsBlock(whole.slice(0, 40)).submissions).toEqual([]);
    expect(parseSubmissionsBlock('<!-- topo:submissions v1 bm90IGpzb24= -->').problems[0]).toMatch(
      /not JSON/,
    );
  });
});
