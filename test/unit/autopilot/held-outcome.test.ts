// Issue 43 item 2 in the autopilot: a run closed `faster-drift-not-ruled-out` (its interval below
// −min_improvement, a guard held the claim) is no decision, as the campaign bench records it; it was
// read from its status (`rejected`) as `not-better`, a topology tried and lost.
import { describe, expect, it } from 'vitest';
import { campaignOutcome, recordedOutcome } from '../../../src/autopilot/runs.js';

const run = (status: string, state: string) =>
  ({ status, monitor_decision: { state }, comparison: null }) as unknown as Parameters<
    typeof recordedOutcome
  >[0];

describe("the autopilot's outcome of a recorded run (issue 43 item 2)", () => {
  it('is undecided for faster-drift-not-ruled-out, never not-better', () => {
    expect(recordedOutcome(run('rejected', 'faster-drift-not-ruled-out'))).toBe('undecided');
    expect(recordedOutcome(run('rejected', 'not-better'))).toBe('not-better');
    expect(recordedOutcome(run('accepted', 'better'))).toBe('better');
  });
});

describe('one campaign outcome for a live and a recorded run (issue 39 item 5)', () => {
  const states = [
    'better',
    'worse',
    'equivalent',
    'not-better',
    'measuring',
    'better-at-equal-age',
    'faster-drift-not-ruled-out',
  ];
  it('the monitor’s pass counts an ended run as the record does, a `better` short of min_improvement included', () => {
    for (const state of states)
      for (const value of [-0.01, -0.05]) {
        const decision = { state, min_improvement: 0.02, relative_change: { value } } as never;
        const recorded = recordedOutcome({ status: 'rejected', monitor_decision: decision } as never);
        expect(campaignOutcome({ decision, ended: true }), `${state} ${value}`).toBe(recorded);
      }
    // the monitor's old reader passed `better` through: a −1% `better` is equivalent on every surface
    expect(
      campaignOutcome({
        decision: { state: 'better', min_improvement: 0.02, relative_change: { value: -0.01 } } as never,
        ended: true,
      }),
    ).toBe('equivalent');
  });
});
