import { describe, expect, it } from 'vitest';
import { stickyMarker, stickyText } from '../../../src/github/sticky-comment.js';
import { renderObservationBlock } from '../../../src/report/observation-block.js';
import {
  isRunOfCandidate,
  monitorCommentParts,
  monitorPurpose,
} from '../../../src/usecases/monitor-comment.js';

const BOT = 'topo-bot[bot]';
const ID = 'topology-opt-vam-local-20260101';
const observed = (runName: string) =>
  renderObservationBlock({
    run_name: runName,
    verdict: { state: 'stable', evidence: [] },
    stable_metrics: {},
  });
const comment = (id: number, purpose: string, text: string, login = BOT) => ({
  id,
  login,
  body: `${stickyMarker(purpose)}\n${text}`,
  updatedAt: '2026-12-01T00:00:00Z',
});

describe('isRunOfCandidate', () => {
  it('reads the candidate out of a run name exactly', () => {
    expect(isRunOfCandidate(`topo-${ID}-b-0123abcd-89abcdef`, 'b')).toBe(true);
    expect(isRunOfCandidate(`topo-${ID}-b-0123abcd`, 'b')).toBe(true);
    expect(isRunOfCandidate(`topo-${ID}-a-b-0123abcd-89abcdef`, 'b')).toBe(false);
    expect(isRunOfCandidate(`topo-${ID}-a-b-0123abcd-89abcdef`, 'a-b')).toBe(true);
    expect(isRunOfCandidate(`topo-${ID}-b-0123abcd-89abcdef`, 'a-b')).toBe(false);
    expect(isRunOfCandidate('b-0123abcd', 'b')).toBe(false);
  });
});

describe('monitorCommentParts', () => {
  it('finds each candidate’s own comment', () => {
    const comments = [
      comment(1, monitorPurpose('a'), `A ${observed(`topo-${ID}-a-0123abcd`)}`),
      comment(2, monitorPurpose('b'), `B ${observed(`topo-${ID}-b-0123abcd`)}`),
    ];
    expect(monitorCommentParts(comments, 'a', BOT).map((p) => p.id)).toEqual([1]);
    expect(monitorCommentParts(comments, 'b', BOT).map((p) => p.id)).toEqual([2]);
    expect(monitorCommentParts(comments, 'c', BOT)).toEqual([]);
  });

  it('adopts the pre-multi-candidate `monitor` comment only for the candidate whose run it shows', () => {
    const legacy = comment(5, 'monitor', `old ${observed(`topo-${ID}-a-b-0123abcd-89abcdef`)}`);
    expect(stickyText(monitorCommentParts([legacy], 'a-b', BOT))).toContain('old');
    expect(monitorCommentParts([legacy], 'b', BOT)).toEqual([]);
    expect(monitorCommentParts([legacy], 'a', BOT)).toEqual([]);
    // the candidate's own comment wins over the legacy one
    const own = comment(6, monitorPurpose('a-b'), 'new');
    expect(monitorCommentParts([legacy, own], 'a-b', BOT).map((p) => p.id)).toEqual([6]);
  });

  it('ignores a comment carrying the marker written by someone else', () => {
    const forged = comment(7, monitorPurpose('a'), 'forged', 'mallory');
    expect(monitorCommentParts([forged], 'a', BOT)).toEqual([]);
  });
});
