// One campaign loop (issue 43: the product that ships is the one the benches measure): once a round is
// due, the autopilot's next round, or its conclusion, is the campaign loop's own planRound over
// suggest's answer (src/campaign/loop.ts, the step runCampaign and the campaign bench take), on the
// campaign state the autopilot reads from its runs.
import { describe, expect, it } from 'vitest';
import { campaignOf, type PilotInput, type PilotRun, planStep } from '../../../src/autopilot/core.js';
import { campaignPolicy } from '../../../src/autopilot/policy.js';
import { planRound, type Suggestion } from '../../../src/campaign/loop.js';
import { BASELINE_RUN, botRun, POLICY, pilotInput } from '../../support/pilot.js';

const EXP = 'topology-opt-vavam-ord-20261202';
const merged = { pull: 'merged' as const, recorded: true };
const closed = { pull: 'closed' as const, recorded: true };
let pr = 10;
const bot = (name: string, round: number, more: Partial<PilotRun> = {}): PilotRun =>
  botRun(name, round, pr++, { ...closed, ...more });
const input = (runs: PilotRun[], more: Partial<PilotInput> = {}): PilotInput => pilotInput(EXP, runs, more);

const suggestion = (names: string[], more: Partial<Suggestion> = {}): Suggestion => ({
  proposals: names.map((n) => ({ candidate: { name: n }, change: `change ${n}` })),
  stop: { stop: false, reason: '' },
  outlook: null,
  ...more,
});

/** Two dry rounds after round 1's winner `a`: the seed's stop rule (stop after 2) concludes here. */
const dry = [
  BASELINE_RUN,
  bot('a', 1, { outcome: 'better', seconds: 80, ...merged }),
  bot('b', 2, { outcome: 'worse', seconds: 90 }),
  bot('c', 3, { outcome: 'equivalent', seconds: 81 }),
];

describe('the autopilot plans its rounds with the campaign loop', () => {
  it('a due round without suggest’s answer is `due`, with the count the answer is asked for', () => {
    const p = planStep(input([BASELINE_RUN]));
    expect(p.due).toEqual({ round: 1, parent: 'baseline', count: 3 });
    const q = planStep(input([BASELINE_RUN], { suggestion: suggestion(['x', 'y', 'z', 'w']) }));
    expect(q.due).toBeNull();
  });

  it('opens the same round planRound plans on the same state, policy and answer', () => {
    const runs = [BASELINE_RUN, bot('a', 1, { outcome: 'better', seconds: 80, ...merged }), bot('b', 1)];
    const answer = suggestion(['x', 'y', 'z', 'w'], { outlook: { change: 'change y', gainLow: 0.05 } });
    const p = planStep(input(runs, { suggestion: answer }));
    const { state } = campaignOf(runs);
    const step = planRound(state, campaignPolicy(POLICY), answer, 10);
    expect(step.kind).toBe('round');
    if (step.kind !== 'round') return;
    expect(p.actions).toEqual([
      {
        kind: 'open',
        round: step.round.index,
        parent: step.round.parent,
        count: step.round.proposals.length,
        proposals: step.round.proposals.map((x) => x.candidate.name),
        predicted: { best: step.round.predictedBest },
      },
    ]);
    expect(p.actions[0]).toMatchObject({
      round: 2,
      parent: 'a',
      proposals: ['x', 'y', 'z'],
      predicted: { best: 'y' },
    });
  });

  it('the stop rule reads the model’s outlook: a gain predicted with confidence goes on after two dry rounds', () => {
    const answer = suggestion(['x'], { outlook: { change: 'change x', gainLow: 0.05 } });
    const p = planStep(input(dry, { suggestion: answer }));
    expect(p.actions).toEqual([
      { kind: 'open', round: 4, parent: 'a', count: 1, proposals: ['x'], predicted: { best: 'x' } },
    ]);
    // the same runs with a model that predicts nothing conclude by the seed's rule, as the campaign does
    const none = planStep(
      input(dry, { suggestion: suggestion(['x'], { outlook: { change: 'change x', gainLow: 0 } }) }),
    );
    expect(none.actions.at(-1)).toMatchObject({ kind: 'conclude', winner: 'a' });
    expect(none.actions.at(-1)).toMatchObject({
      reason: expect.stringMatching(/no decided gain in the last 2/),
    });
  });

  it('a dry round that did not try what the model predicted best does not count toward the stop rule', () => {
    // round 3 proposed the model's best `m` and it was never decided (undecided, held: runsFromRecord
    // says why): the round says nothing
    const runs = [
      ...dry.slice(0, 3),
      bot('c', 3, { outcome: 'equivalent', seconds: 81 }),
      bot('m', 3, { outcome: 'undecided', held: 'still measuring' }),
    ];
    const p = planStep(input(runs, { suggestion: suggestion(['x']), predicted: { '3': 'm' } }));
    expect(p.actions.map((a) => a.kind)).toEqual(['open']);
    const counted = planStep(input(runs, { suggestion: suggestion(['x']), predicted: { '3': 'c' } }));
    expect(counted.actions.at(-1)?.kind).toBe('conclude');
  });

  it('suggest’s stop advice concludes with its reason, as the campaign loop does', () => {
    const answer = suggestion([], { stop: { stop: true, reason: 'no proposal left: every move was tried' } });
    const p = planStep(
      input([BASELINE_RUN, bot('a', 1, { outcome: 'better', seconds: 80, ...merged })], {
        suggestion: answer,
      }),
    );
    expect(p.actions.at(-1)).toEqual({
      kind: 'conclude',
      reason: 'suggest: no proposal left: every move was tried',
      winner: 'a',
    });
  });

  it('uses the experiment’s min_improvement: an outlook below it does not keep the campaign going', () => {
    const answer = suggestion(['x'], { outlook: { change: 'change x', gainLow: 0.03 } });
    const strict = planStep(input(dry, { suggestion: answer, policy: { ...POLICY, minImprovement: 0.05 } }));
    expect(strict.actions.at(-1)?.kind).toBe('conclude');
    const loose = planStep(input(dry, { suggestion: answer, policy: { ...POLICY, minImprovement: 0.02 } }));
    expect(loose.actions.map((a) => a.kind)).toEqual(['open']);
  });
});
