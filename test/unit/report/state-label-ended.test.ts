// The one label rule with a finished candidate beside the standing Requests (issue 23, case 6):
// `/topo cancel <b>` beside a finished `a` keeps the label `a` earned, read from its final comment,
// whatever Slurm forgot.
import { describe, expect, it } from 'vitest';
import {
  emptyRunState,
  type RunRequest,
  withOutcome,
  withRequest,
  withRun,
} from '../../../src/lifecycle/model.js';
import { renderCommentStamp } from '../../../src/report/comment-throttle.js';
import { renderObservationBlock } from '../../../src/report/observation-block.js';
import { endedCandidate, ranRequests, requestsStateLabel } from '../../../src/report/state-label.js';

const HEAD = 'a'.repeat(40);
const request = (candidate: string, id: string): RunRequest => ({
  id,
  experiment: 'exp',
  candidate,
  path: `topologies/exp/${candidate}.yaml`,
  pr: 1,
  headSha: HEAD,
  topologyHash: '0badcafe',
  runName: `topo-exp-${candidate}-0badcafe-${id}`,
  login: 'alice',
  requestedAt: `2026-01-01T00:00:0${id.at(-1)}Z`,
});
const finalComment = (state: string, outcome: string, value?: number) =>
  [
    '<!-- topo:sticky:monitor-a -->',
    '### `a`: faster than the baseline',
    '<details><summary>Verdict</summary></details>',
    renderObservationBlock({
      run_name: 'topo-exp-a-0badcafe-00000001',
      verdict: {
        state: 'stable',
        evidence: [],
        ...(value ? { value: { value, low: value, high: value } } : {}),
      },
      stable_metrics: {},
    }),
    renderCommentStamp({ state, outcome, hash: 'abcdef', writtenAtMs: 1 }),
  ].join('\n');

describe('the label beside a finished candidate', () => {
  const at = '2026-01-01T01:00:00Z';
  let s = withRequest(withRequest(emptyRunState(), request('a', '00000001')), request('b', '00000002'));
  s = withRun(withRun(s, '00000001', { jobId: '7', submittedAt: at }), '00000002', {
    jobId: '8',
    submittedAt: at,
  });
  s = withOutcome(s, '00000001', { kind: 'finished', at, jobId: '7', evidence: [] });
  s = withOutcome(s, '00000002', {
    kind: 'cancelled',
    at,
    jobId: '8',
    evidence: ['/topo cancel b by alice'],
  });

  it('keeps the finished candidate’s stable when the other is cancelled', () => {
    expect(ranRequests(s).map((r) => r.candidate)).toEqual(['a']);
    const a = endedCandidate('a', finalComment('finished', 'better', 2.5));
    expect(a).not.toBeNull();
    expect(requestsStateLabel(s, HEAD, a ? [a] : [])).toBe('stable');
    expect(a?.check).toMatchObject({ conclusion: 'success', summary: '### `a`: faster than the baseline' });
  });

  it('says failed for a failed one, nothing for one that ended without a value or has no final comment', () => {
    const failed = endedCandidate('a', finalComment('failed', 'failed'));
    expect(requestsStateLabel(s, HEAD, failed ? [failed] : [])).toBe('failed');
    const bare = endedCandidate('a', finalComment('finished', 'undecided'));
    expect(requestsStateLabel(s, HEAD, bare ? [bare] : [])).toBeNull();
    expect(endedCandidate('a', undefined)).toBeNull();
    expect(endedCandidate('a', finalComment('stable', 'measuring', 2.5))).toBeNull();
  });
});
