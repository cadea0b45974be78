import { describe, expect, it } from 'vitest';
import {
  type CommentStamp,
  parseCommentStamp,
  renderCommentStamp,
  shouldWriteCheck,
  shouldWriteComment,
} from '../../../src/report/comment-throttle.js';

const MIN = 60_000;
const prev: CommentStamp = {
  state: 'stabilising',
  outcome: 'measuring',
  hash: 'aa',
  writtenAtMs: 1_000 * MIN,
};

describe('shouldWriteComment', () => {
  it('writes a first comment', () => {
    expect(shouldWriteComment(undefined, { ...prev, hash: 'bb' }, 0, 15)).toBe(true);
  });
  it('never writes unchanged content', () => {
    expect(shouldWriteComment(prev, { ...prev }, prev.writtenAtMs + 600 * MIN, 15)).toBe(false);
  });
  it('holds moving numbers of a running candidate for comment_interval_minutes', () => {
    const next = { state: 'stabilising', outcome: 'measuring', hash: 'bb' };
    expect(shouldWriteComment(prev, next, prev.writtenAtMs + 14 * MIN, 15)).toBe(false);
    expect(shouldWriteComment(prev, next, prev.writtenAtMs + 15 * MIN, 15)).toBe(true);
    expect(shouldWriteComment(prev, next, prev.writtenAtMs + 5 * MIN, 5)).toBe(true);
  });
  it('writes at once when the state or the decision changes, or the run ended', () => {
    const t = prev.writtenAtMs + MIN;
    expect(shouldWriteComment(prev, { ...prev, hash: 'bb', state: 'stable' }, t, 15)).toBe(true);
    expect(shouldWriteComment(prev, { ...prev, hash: 'bb', outcome: 'worse' }, t, 15)).toBe(true);
    const ended = { ...prev, state: 'finished' };
    expect(shouldWriteComment(ended, { ...ended, hash: 'bb' }, t, 15)).toBe(true);
  });
  it('a stamp from the future or a nonsense interval does not silence the comment', () => {
    const next = { state: 'stabilising', outcome: 'measuring', hash: 'bb' };
    expect(shouldWriteComment(prev, next, prev.writtenAtMs - MIN, 15)).toBe(true);
    expect(shouldWriteComment(prev, next, prev.writtenAtMs + 15 * MIN, Number.NaN)).toBe(true);
    expect(shouldWriteComment(prev, next, prev.writtenAtMs + 14 * MIN, 0)).toBe(false);
  });
});

describe('shouldWriteCheck', () => {
  const before = { state: 'stabilising', outcome: 'measuring', hash: 'aa', writtenAtMs: 0 };
  it('rewrites the check only when the state or the decision changes, or the run ended', () => {
    expect(shouldWriteCheck(undefined, { state: 'stabilising', outcome: 'measuring', hash: 'aa' })).toBe(
      true,
    );
    expect(shouldWriteCheck(before, { state: 'stabilising', outcome: 'measuring', hash: 'bb' })).toBe(false);
    expect(shouldWriteCheck(before, { state: 'stable', outcome: 'measuring', hash: 'bb' })).toBe(true);
    expect(shouldWriteCheck(before, { state: 'stabilising', outcome: 'worse', hash: 'bb' })).toBe(true);
    expect(
      shouldWriteCheck(
        { ...before, state: 'stopped' },
        { state: 'stopped', outcome: 'measuring', hash: 'bb' },
      ),
    ).toBe(true);
  });
});

describe('the comment stamp', () => {
  it('round-trips, and the last stamp wins', () => {
    const line = renderCommentStamp(prev);
    expect(parseCommentStamp(`body\n${line}`)).toEqual(prev);
    const later = renderCommentStamp({ ...prev, hash: 'cc' });
    expect(parseCommentStamp(`${line}\n${later}`)?.hash).toBe('cc');
    expect(parseCommentStamp('no stamp')).toBeUndefined();
    expect(parseCommentStamp(undefined)).toBeUndefined();
  });
  it('refuses values that would break the HTML comment', () => {
    expect(() => renderCommentStamp({ ...prev, state: 'x -->' })).toThrow(/state "x -->"/);
    expect(() => renderCommentStamp({ ...prev, hash: 'zz' })).toThrow(/hexadecimal/);
  });
});
