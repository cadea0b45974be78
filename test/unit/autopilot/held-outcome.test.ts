// Issue 43 item 2 in the autopilot: a run closed `faster-drift-not-ruled-out` (its interval below
// −min_improvement, a guard held the claim) is no decision, as the campaign bench records it; it was
// read from its status (`rejected`) as `not-better`, a topology tried and lost.
import { describe, expect, it } from 'vitest';
import { recordedOutcome } from '../../../src/autopilot/runs.js';

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
