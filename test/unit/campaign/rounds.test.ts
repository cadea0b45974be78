// The campaign loop's pure core (src/campaign/rounds.ts): the best after each round, the seed's stop
// rule, max_rounds, the budget, and when a reference is measured well enough to decide against.
import { describe, expect, it } from 'vitest';
import {
  canStart,
  closeRound,
  DEFAULT_POLICY,
  nextStep,
  type Round,
  referenceReady,
  roundsWithoutGain,
  roundWinner,
  spentGpuHours,
  startCampaign,
} from '../../../src/campaign/rounds.js';

const round = (index: number, parent: string, runs: Round['runs']): Round => ({ index, parent, runs });
const run = (name: string, outcome: Round['runs'][number]['outcome'], seconds?: number) => ({
  name,
  outcome,
  ...(seconds !== undefined ? { seconds } : {}),
  gpuHours: 4,
});

describe('campaign rounds', () => {
  const start = startCampaign({ name: 'baseline', seconds: 3, gpuHours: 6 });

  it('the fastest candidate decided better becomes the best; a faster one not decided better does not', () => {
    const r1 = round(1, 'baseline', [
      run('a', 'better', 2.8),
      run('b', 'better', 2.7),
      run('c', 'not-better', 2.5),
    ]);
    expect(roundWinner(start, r1)?.name).toBe('b');
    const s = closeRound(start, r1);
    expect(s.best).toEqual({ name: 'b', seconds: 2.7 });
    expect(roundsWithoutGain(s)).toBe(0);
    expect(nextStep(s, DEFAULT_POLICY, 4)).toEqual({ kind: 'round', index: 2, parent: 'b', count: 3 });
  });

  it("stops after `stopAfter` rounds in a row without a decided gain (the seed's stop rule)", () => {
    let s = closeRound(start, round(1, 'baseline', [run('a', 'better', 2.8)]));
    s = closeRound(s, round(2, 'a', [run('b', 'worse', 3.1), run('c', 'equivalent', 2.8)]));
    expect(roundsWithoutGain(s)).toBe(1);
    expect(nextStep(s, DEFAULT_POLICY, 4).kind).toBe('round');
    s = closeRound(s, round(3, 'a', [run('d', 'failed'), run('e', 'undecided', 2.7)]));
    expect(roundsWithoutGain(s)).toBe(2);
    expect(nextStep(s, DEFAULT_POLICY, 4)).toEqual({
      kind: 'conclude',
      reason: 'no decided gain in the last 2 round(s) (stop after 2)',
    });
    expect(s.best?.name).toBe('a');
  });

  it('concludes at max_rounds and within the budget, sizing the last round to what is left', () => {
    const s = closeRound(start, round(1, 'baseline', [run('a', 'better', 2.8)]));
    expect(nextStep(s, { ...DEFAULT_POLICY, maxRounds: 1 }, 4)).toEqual({
      kind: 'conclude',
      reason: 'max_rounds 1 reached',
    });
    expect(spentGpuHours(s)).toBe(10);
    // 10 spent of 19: two runs of 4 fit, not three
    expect(nextStep(s, { ...DEFAULT_POLICY, gpuHours: 19 }, 4)).toMatchObject({ kind: 'round', count: 2 });
    expect(nextStep(s, { ...DEFAULT_POLICY, gpuHours: 13 }, 4)).toMatchObject({ kind: 'conclude' });
    expect(canStart({ gpuHours: 20 }, 10, 4, 4)).toBe(true);
    expect(canStart({ gpuHours: 20 }, 10, 8, 4)).toBe(false);
    expect(canStart({}, 1e6, 0, 4)).toBe(true);
  });

  it('after a failed baseline, the fastest measured run of the first round becomes the best', () => {
    const failed = startCampaign({ name: 'baseline', seconds: null, gpuHours: 0.7 });
    expect(failed.best).toBeNull();
    expect(nextStep(failed, DEFAULT_POLICY, 4)).toMatchObject({ kind: 'round', parent: 'baseline' });
    const s = closeRound(
      failed,
      round(1, 'baseline', [run('fit-a', 'undecided', 2.6), run('fit-b', 'equivalent', 2.7)]),
    );
    expect(s.best).toEqual({ name: 'fit-a', seconds: 2.6 });
  });

  it('a reference is ready once its projection is within ±referencePrecision, never while warming or drifting', () => {
    const v = (state: string, value: number, half: number) => ({
      state: state as 'stabilising',
      projected_full_run: { value, low: value * (1 - half), high: value * (1 + half) },
      minutes_of_data: 30,
    });
    expect(referenceReady(v('stabilising', 3, 0.014), DEFAULT_POLICY)).toBe(true);
    expect(referenceReady(v('stabilising', 3, 0.02), DEFAULT_POLICY)).toBe(false);
    expect(referenceReady(v('drifting', 3, 0.01), DEFAULT_POLICY)).toBe(false);
    expect(referenceReady(v('warming', 3, 0.01), DEFAULT_POLICY)).toBe(false);
    expect(referenceReady({ state: 'stable', projected_full_run: null }, DEFAULT_POLICY)).toBe(false);
  });
});
