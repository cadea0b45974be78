// The campaign loop (src/campaign/loop.ts), the campaign bench's: reruns of held candidates first, a topology tried only once decided, the conclusion.
import { describe, expect, it } from 'vitest';
import {
  decidedRun,
  MAX_ATTEMPTS,
  pendingReruns,
  planRound,
  recordRound,
  runCampaign,
  type Suggestion,
} from '../../../src/campaign/loop.js';
import { DEFAULT_POLICY, type RoundRun, startCampaign } from '../../../src/campaign/rounds.js';
import type { Proposal } from '../../../src/suggest/types.js';

const proposal = (name: string, change = name): Proposal =>
  ({ candidate: { name, parent: 'baseline', topology: {} }, change }) as unknown as Proposal;
const suggestion = (names: string[], outlook?: string): Suggestion => ({
  proposals: names.map((n) => proposal(n)),
  stop: { stop: names.length === 0, reason: names.length ? 'proposals' : 'nothing left' },
  ...(outlook ? { outlook: { change: outlook, gainLow: 0 } } : {}),
});
const run = (name: string, outcome: RoundRun['outcome'], extra: Partial<RoundRun> = {}): RoundRun => ({
  name,
  outcome,
  gpuHours: 4,
  ...(outcome === 'failed' ? {} : { seconds: outcome === 'better' ? 2.5 : 3.1 }),
  ...extra,
});
const policy = { ...DEFAULT_POLICY, gpuHours: 120 };
const start = startCampaign({ name: 'baseline', seconds: 3, gpuHours: 4 });

describe('the campaign loop (issue 43)', () => {
  it("reruns a held candidate first, and the round's model pick counts only once decided", () => {
    const first = planRound(start, policy, suggestion(['model', 'rule-a', 'rule-b'], 'model'), 5);
    expect(first.kind).toBe('round');
    if (first.kind !== 'round') return;
    expect(first.round.predictedBest).toBe('model');
    // the model's pick was held by the guard with its interval below −min_improvement: no decision
    const held = run('model', 'undecided', {
      held: 'a guard held it',
      rerun: true,
      change: -0.2,
      attempt: 1,
    });
    let s = recordRound(start, first.round, [held, run('rule-a', 'not-better'), run('rule-b', 'worse')]);
    expect(s.rounds[0]!.triedPredictedBest).toBe(false);
    expect(pendingReruns(s, 0.02).map((r) => r.name)).toEqual(['model']);
    const second = planRound(s, policy, suggestion(['rule-c', 'rule-d', 'rule-e']), 5);
    if (second.kind !== 'round') throw new Error('expected a round');
    expect(second.round.reruns.map((r) => r.name)).toEqual(['model']);
    expect(second.round.proposals.map((p) => p.candidate.name)).toEqual(['rule-c', 'rule-d']);
    s = recordRound(s, second.round, [run('model', 'better', { attempt: 2, change: -0.2 })]);
    expect(s.best?.name).toBe('model');
  });

  it('does not conclude while a held candidate waits for its rerun, even when suggest has nothing', () => {
    const held = run('model', 'undecided', { held: 'drift', rerun: true, change: -0.1, attempt: 1 });
    let s = recordRound(
      start,
      { index: 1, parent: 'baseline', reruns: [], proposals: [], predictedBest: null, modelled: false },
      [held],
    );
    s = recordRound(
      s,
      { index: 2, parent: 'baseline', reruns: [], proposals: [], predictedBest: null, modelled: false },
      [run('x', 'not-better'), { ...held, attempt: 1 }],
    );
    const step = planRound(s, policy, suggestion([]), 5);
    expect(step.kind).toBe('round');
    // its attempts spent: nothing is pending, and the stop rule and suggest's advice conclude
    const spent = recordRound(
      s,
      { index: 3, parent: 'baseline', reruns: [], proposals: [], predictedBest: null, modelled: false },
      [{ ...held, attempt: MAX_ATTEMPTS }],
    );
    expect(pendingReruns(spent, 0.02)).toEqual([]);
    expect(planRound(spent, policy, suggestion([]), 5).kind).toBe('conclude');
  });

  it('a run closed at the horizon across −min_improvement is no tried topology, and is not rerun', () => {
    const closed = run('tie', 'not-better', { held: 'closed at the horizon', change: -0.03 });
    expect(decidedRun(closed)).toBe(false);
    expect(decidedRun(run('a', 'not-better'))).toBe(true);
    expect(decidedRun(run('f', 'failed'))).toBe(false);
    const s = recordRound(
      start,
      { index: 1, parent: 'baseline', reruns: [], proposals: [], predictedBest: 'tie', modelled: true },
      [closed],
    );
    expect(s.rounds[0]!.triedPredictedBest).toBe(false);
    expect(pendingReruns(s, 0.02)).toEqual([]);
  });

  it('runs from the baseline to the conclusion through the caller’s suggest and rounds', async () => {
    const rounds: string[][] = [];
    const { state, reason } = await runCampaign(
      start,
      policy,
      {
        suggest: (s) => suggestion(s.rounds.length < 3 ? [`c${s.rounds.length}`] : []),
        run: (_s, planned) => {
          rounds.push(planned.proposals.map((p) => p.candidate.name));
          return {
            runs: planned.proposals.map((p) =>
              run(p.candidate.name, p.candidate.name === 'c0' ? 'better' : 'not-better'),
            ),
          };
        },
      },
      5,
    );
    expect(rounds).toEqual([['c0'], ['c1'], ['c2']]);
    expect(state.best?.name).toBe('c0');
    expect(reason).toMatch(/no decided gain in the last 2 round/);
  });
});
