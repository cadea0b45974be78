import { describe, expect, it } from 'vitest';
import { statusReply } from '../../../src/commands/status.js';

describe('statusReply (/topo status)', () => {
  it('refuses when no run of the pull request is requested', () => {
    expect(statusReply([])).toMatchObject({ ok: false, message: expect.stringMatching(/^No run/) });
  });

  it('answers for its one candidate', () => {
    expect(statusReply([{ candidate: 'a', runName: 'topo-x-a-1', state: 'stable' }])).toEqual({
      ok: true,
      message: '`topo-x-a-1` is **stable**: the monitor comment is up to date.',
    });
  });

  it('answers for every candidate of the pull request, not only the first', () => {
    const reply = statusReply([
      { candidate: 'b', runName: 'topo-x-b-1', state: 'warming' },
      { candidate: 'a', runName: 'topo-x-a-1', state: 'failed' },
    ]);
    expect(reply.ok).toBe(true);
    expect(reply.message.split('\n')).toEqual([
      "2 candidates; each one's monitor comment is up to date:",
      '- `a`: `topo-x-a-1` is **failed**',
      '- `b`: `topo-x-b-1` is **warming**',
    ]);
  });
});
