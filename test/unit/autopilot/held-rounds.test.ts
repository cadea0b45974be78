// The autopilot's rounds hold what the campaign loop's hold (issue 42 item 2, issue 43 item 3): a run
// held or closed at the horizon is no tried topology, a held candidate pointing at a gain is rerun
// first, the round's reference job refines the best and counts against the budget.
import { describe, expect, it } from 'vitest';
import { campaignOf, type PilotRun, planStep } from '../../../src/autopilot/core.js';
import { runsFromRecord } from '../../../src/autopilot/runs.js';
import type { Suggestion } from '../../../src/campaign/loop.js';
import { closeRound, spentGpuHours, startCampaign } from '../../../src/campaign/rounds.js';
import type { ExperimentRecord, RecordRun } from '../../../src/types/generated/record.js';
import { BASELINE_RUN, botRun, pilotInput } from '../../support/pilot.js';

const EXP = 'topology-opt-vavam-ord-20261202';
const HORIZON = 'closed at the horizon (120 run-minutes), not shown';
const answer = (names: string[]): Suggestion => ({
  proposals: names.map((n) => ({ candidate: { name: n }, change: `change ${n}` })),
  stop: { stop: false, reason: '' },
  outlook: { change: 'change x', gainLow: 0 },
});

describe('held runs in the autopilot’s rounds', () => {
  it('a run closed at the horizon did not try what the model predicted best', () => {
    const runs: PilotRun[] = [
      BASELINE_RUN,
      botRun('m', 1, 1, { outcome: 'not-better', seconds: 99, held: HORIZON, pull: 'closed' }),
    ];
    expect(campaignOf(runs, { '1': 'm' }).state.rounds[0]?.triedPredictedBest).toBe(false);
    const decided = [BASELINE_RUN, botRun('m', 1, 1, { outcome: 'not-better', seconds: 99, pull: 'closed' })];
    expect(campaignOf(decided, { '1': 'm' }).state.rounds[0]?.triedPredictedBest).toBe(true);
  });

  it('a held candidate pointing at a gain is rerun first in the next round, beside fewer proposals', () => {
    const held = botRun('m', 1, 1, {
      outcome: 'undecided',
      held: 'a guard held the claim',
      rerun: true,
      attempt: 1,
      change: -0.12,
    });
    const runs = [BASELINE_RUN, held, botRun('a', 1, 2, { pull: 'closed' })];
    const p = planStep(pilotInput(EXP, runs, { suggestion: answer(['x', 'y', 'z']) }));
    expect(p.actions).toContainEqual(
      expect.objectContaining({ kind: 'open', round: 2, reruns: ['m'], proposals: ['x', 'y'] }),
    );
    // its third job is its last: no rerun after it
    const spent = { ...held, attempt: 3 };
    const q = planStep(pilotInput(EXP, [BASELINE_RUN, spent], { suggestion: answer(['x', 'y', 'z']) }));
    expect(q.actions.find((a) => a.kind === 'open')).not.toHaveProperty('reruns');
  });

  it('the round’s reference job refines the best before its winner is ranked, and counts as spent', () => {
    const start = startCampaign({ name: 'baseline', seconds: 10, gpuHours: 4 });
    const round = {
      index: 1,
      parent: 'baseline',
      runs: [{ name: 'a', outcome: 'better' as const, seconds: 10.1, gpuHours: 5 }],
      reference: { name: 'baseline', gpuHours: 6, seconds: 10.4 },
    };
    const s = closeRound(start, round);
    expect(s.best).toEqual({ name: 'a', seconds: 10.1 });
    expect(spentGpuHours(s)).toBe(15);
    const runs = [BASELINE_RUN, botRun('a', 1, 1, { outcome: 'better', seconds: 101, pull: 'merged' })];
    const refined = { '1': { name: 'baseline', gpuHours: 6, seconds: 104 } };
    expect(campaignOf(runs, {}, refined).state.best?.name).toBe('a');
    expect(campaignOf(runs).state.best?.name).toBe('baseline');
  });

  it('a recorded candidate closed at the horizon is held (runOutcome), one decided earlier is not', () => {
    const cand = (name: string, at: number): RecordRun =>
      ({
        name,
        status: 'rejected',
        hypothesis: 'Autopilot round 1: x',
        monitor_decision: {
          state: 'not-better',
          reference: { role: 'baseline', name: 'baseline', pr: null },
          min_improvement: 0.02,
          evidence: [],
          relative_change: { value: -0.01, low: -0.03, high: 0.01 },
          decided_at_minutes: at,
        },
      }) as unknown as RecordRun;
    const base = { name: 'baseline', status: 'accepted', decision: { outcome: 'accept' } } as RecordRun;
    const record = {
      experiment_id: 'e',
      runs: [base, cand('h', 120), cand('d', 40)],
    } as unknown as ExperimentRecord;
    const runs = runsFromRecord(record, 8, { minImprovement: 0.02, horizonMinutes: 120 });
    expect(runs.find((r) => r.name === 'h')).toMatchObject({
      held: expect.stringMatching(/horizon/),
      change: -0.01,
    });
    expect(runs.find((r) => r.name === 'd')).not.toHaveProperty('held');
  });
});
