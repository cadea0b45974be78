// The bot pull request's text and marker, and the live runs the autopilot plans with.
import { describe, expect, it } from 'vitest';
import { botPullBody, closingText, liveRuns, readBotMarker } from '../../../src/autopilot/pulls.js';

const EXP = 'topology-opt-vavam-ord-20261202';

describe('bot pull requests', () => {
  it('carry their round in a marker only the same experiment reads back', () => {
    const body = botPullBody(EXP, 'p1', 3, '**Hypothesis.** more GPUs\n\nComment `/topo submit` to run it.');
    expect(readBotMarker(body, EXP)).toEqual({ candidate: 'p1', round: 3 });
    expect(readBotMarker(body, 'other-exp')).toBeNull();
    expect(readBotMarker('a person wrote round=3', EXP)).toBeNull();
    expect(body).toContain('**Autopilot, round 3**');
    expect(body).toContain('**Hypothesis.** more GPUs');
    expect(body).not.toContain('Comment `/topo submit` to run it.');
  });

  it('are closed with their decision', () => {
    expect(
      closingText({ kind: 'close', name: 'p1', pr: 4, why: 'rejected' }, 'worse against baseline'),
    ).toMatch(
      /^Closed by the autopilot: `p1` is rejected by its decision\.\n\nDecision: worse against baseline/,
    );
    expect(closingText({ kind: 'close', name: 'p1', pr: 4, why: 'superseded', by: 'p9' }, null)).toContain(
      "superseded: a later round's `p9` beats it",
    );
  });
});

describe('liveRuns', () => {
  const pull = { pr: 5, candidate: 'p1', round: 1, headSha: 'h', takenOver: false };
  it('a bot pull with a Request is a bot run of its round; one without is waiting; a person’s has no round', () => {
    const runs = liveRuns(
      [
        { name: 'p1', pr: 5, live: true, outcome: null, gpuHours: 1 },
        { name: 'mine', pr: 9, live: false, outcome: 'better', seconds: 80, gpuHours: 2 },
      ],
      [
        { ...pull, state: 'open' },
        { ...pull, pr: 6, candidate: 'p2', state: 'open' },
      ],
    );
    expect(runs.map((r) => [r.name, r.origin, r.round, r.request, r.outcome])).toEqual([
      ['p1', 'bot', 1, 'live', null],
      ['mine', 'person', null, 'ended', 'better'],
      ['p2', 'bot', 1, 'none', null],
    ]);
  });

  it('a closed bot pull the record holds is the record’s; one it does not is withdrawn', () => {
    const closed = { ...pull, state: 'closed' as const };
    expect(liveRuns([], [closed], new Set(['p1']))).toEqual([]);
    expect(liveRuns([], [closed])).toMatchObject([
      { name: 'p1', pull: 'closed', request: 'none', outcome: null },
    ]);
  });
});
