// The run state of each open pull request from a pass's snapshot (pure): only this repository's
// branches, only the bot's comment, a corrupt block reported and never guessed at.
import { describe, expect, it } from 'vitest';
import type { PullSnapshot } from '../../../src/github/pull-snapshots.js';
import { pullRunStates, renderRunStateComment } from '../../../src/github/run-state.js';
import { stickyMarker } from '../../../src/github/sticky-comment.js';
import { emptyRunState, type RunRequest, withRequest } from '../../../src/lifecycle/model.js';

const BOT = 'github-actions[bot]';
const REPO = { owner: 'acme', repo: 'sim', botLogin: BOT };
const request = (pr: number): RunRequest => ({
  id: '0123abcd',
  experiment: 'exp-1',
  candidate: 'c1',
  path: 'topologies/exp-1/c1.yaml',
  pr,
  headSha: 'a'.repeat(40),
  topologyHash: 'deadbeef',
  runName: 'topo-exp-1-c1-deadbeef-0123abcd',
  login: 'alice',
  requestedAt: '2026-01-01T00:00:00Z',
});
const stateComment = (pr: number, login = BOT, id = pr * 10) => ({
  id,
  login,
  body: `${stickyMarker('lifecycle')}\n${renderRunStateComment(withRequest(emptyRunState(), request(pr)))}`,
  updatedAt: '2026-01-01T00:00:00Z',
});
const snap = (number: number, over: Partial<PullSnapshot> = {}): PullSnapshot => ({
  number,
  headSha: 'a'.repeat(40),
  headRepository: 'acme/sim',
  labels: [],
  files: [],
  botComments: [stateComment(number)],
  ...over,
});

describe('pullRunStates', () => {
  it('reads the bot’s Requests of this repository’s pull requests', () => {
    const { pulls, corrupt } = pullRunStates([snap(1, { labels: ['topology:running'] })], REPO);
    expect(corrupt).toEqual([]);
    expect(pulls).toHaveLength(1);
    expect(pulls[0]).toMatchObject({ pr: 1, labels: ['topology:running'] });
    expect(pulls[0]?.state.requests.map((r) => r.runName)).toEqual([request(1).runName]);
  });

  it('skips forks and pull requests whose head repository is gone', () => {
    const { pulls } = pullRunStates(
      [snap(2, { headRepository: 'mallory/sim' }), snap(3, { headRepository: null })],
      REPO,
    );
    expect(pulls).toEqual([]);
  });

  it('ignores a state block someone else wrote (a quoted marker, a forged Request)', () => {
    const forged = snap(4, { botComments: [stateComment(4, 'mallory')] });
    const { pulls } = pullRunStates([forged], REPO);
    expect(pulls[0]?.state.requests).toEqual([]);
  });

  it('reports a corrupt block and leaves that pull request out', () => {
    const broken = snap(5, {
      botComments: [
        {
          id: 9,
          login: BOT,
          body: `${stickyMarker('lifecycle')}\n<!-- topo:run-state v1 bm90IGpzb24= -->`,
          updatedAt: '',
        },
      ],
    });
    const { pulls, corrupt } = pullRunStates([broken, snap(6)], REPO);
    expect(pulls.map((p) => p.pr)).toEqual([6]);
    expect(corrupt).toEqual([{ pr: 5, message: expect.stringMatching(/not JSON/) }]);
  });
});
