// The refusal of a queued Request that no longer validates: its Outcome (evidence within the state
// block's limits) and the pull request's notice, whose quoted errors cannot break out of their fence.
import { describe, expect, it } from 'vitest';
import { submitPurpose } from '../../../src/github/submissions.js';
import type { RunRequest } from '../../../src/lifecycle/model.js';
import { checkRunState } from '../../../src/lifecycle/state-block.js';
import { refusalNotice, refusedOutcome } from '../../../src/usecases/refuse.js';

const request: RunRequest = {
  id: '0000aaaa',
  experiment: 'topology-opt-x-local-20260101',
  candidate: 'more-workers',
  path: 'topologies/topology-opt-x-local-20260101/more-workers.yaml',
  pr: 7,
  headSha: 'a'.repeat(40),
  topologyHash: '0123abcd',
  runName: 'topo-topology-opt-x-local-20260101-more-workers-0123abcd-0000aaaa',
  login: 'alice',
  requestedAt: '2026-12-02T10:00:00Z',
};

describe('refusing a queued Request', () => {
  it('writes an Outcome the state block accepts, with at most ten errors of bounded length', () => {
    const errors = Array.from(
      { length: 14 },
      (_, i) => `x.yaml:${i + 1}:1: error [gpu-index] ${'y'.repeat(3000)}`,
    );
    const outcome = refusedOutcome(request, errors, '2026-12-02T11:00:00Z');
    expect(outcome.kind).toBe('refused');
    expect(outcome.evidence).toHaveLength(11);
    expect(outcome.evidence[0]).toContain('no longer passes validation against the default branch');
    const state = checkRunState({
      version: 1,
      requests: [request],
      runs: {},
      outcomes: { [request.id]: outcome },
    });
    expect(state.outcomes[request.id]?.kind).toBe('refused');
  });

  it('fences the errors so quoted user text cannot close the block or mention anyone', () => {
    const hostile = 'x.yaml:3:1: error [unknown-key] key ```\n</details> @team <img src=x onerror=alert(1)>';
    const notice = refusalNotice(request, [hostile]);
    const fence = /\n(`{4,})text\n/.exec(notice)?.[1] as string;
    expect(fence.length).toBeGreaterThan(3);
    const inside = notice.slice(
      notice.indexOf(`${fence}text\n`) + fence.length + 5,
      notice.lastIndexOf(fence),
    );
    expect(inside).toContain('@team <img');
    expect(notice.split(fence)).toHaveLength(3);
    expect(notice).toContain('comment `/topo submit` again');
    expect(submitPurpose('more-workers')).toBe('submit-more-workers');
  });
});
