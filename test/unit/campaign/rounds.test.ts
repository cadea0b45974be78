// The campaign loop's pure core (src/campaign/rounds.ts): the best after each round, the seed's stop
// rule, max_rounds, the budget, and when a reference is measured well enough to decide against.
import { describe, expect, it } from 'vitest';
import {
  canStart,
  closeRound,
  DEFAULT_POLICY,
  futileByForecast,
  nextStep,
  type Round,
  referenceReady,
  roundsWithoutGain,
  roundWinner,
  spentGpuHours,
  startCampaign,
  stopRule,
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

describe('the stop rule with the model beside it (issue 33)', () => {
  const start = startCampaign({ name: 'baseline', seconds: 3, gpuHours: 6 });
  const dry = (index: number, tried?: boolean): Round => ({
    ...round(index, 'baseline', [run(`c${index}`, 'not-better', 3.1)]),
    ...(tried === undefined ? {} : { triedPredictedBest: tried }),
  });
  const twoDry = closeRound(closeRound(start, dry(1)), dry(2));

  it('does not conclude while the model predicts min_improvement or more elsewhere with confidence', () => {
    expect(roundsWithoutGain(twoDry)).toBe(2);
    // the seed's rule alone concludes
    expect(nextStep(twoDry, DEFAULT_POLICY, 4).kind).toBe('conclude');
    // a gain whose interval's low end is ≥ min_improvement (2%): another round
    expect(stopRule(twoDry, DEFAULT_POLICY, { gainLow: 0.05 })).toBeNull();
    expect(nextStep(twoDry, DEFAULT_POLICY, 4, { gainLow: 0.05 })).toEqual({
      kind: 'round',
      index: 3,
      parent: 'baseline',
      count: 3,
    });
    // predicted, but not with confidence (its interval reaches below min_improvement): it concludes
    expect(nextStep(twoDry, DEFAULT_POLICY, 4, { gainLow: 0.01 })).toMatchObject({
      kind: 'conclude',
      reason: expect.stringMatching(/no decided gain in the last 2 round\(s\).*model predicts no gain of 2%/),
    });
  });

  it('counts only rounds that tried what the model predicted best', () => {
    const skipped = closeRound(closeRound(start, dry(1)), dry(2, false));
    expect(roundsWithoutGain(skipped)).toBe(1);
    expect(stopRule(skipped, DEFAULT_POLICY)).toBeNull();
    const tried = closeRound(skipped, dry(3, true));
    expect(roundsWithoutGain(tried)).toBe(2);
    expect(stopRule(tried, DEFAULT_POLICY)).toMatch(/no decided gain in the last 2 round/);
  });
});

describe('a candidate the decisions cannot settle (issue 33: the tail of a round)', () => {
  const measuring = (value: number, eta: number | null | undefined) => ({
    state: 'measuring' as const,
    relative_change: { value, low: value - 0.05, high: value + 0.05 },
    ...(eta === undefined ? {} : { expected_minutes_to_decision: eta }),
  });
  it('stops one near the reference whose decision forecasts no settlement, after 30 run-minutes', () => {
    expect(futileByForecast(measuring(0.002, null), 30, 120, 0.02)).toBe(true);
    expect(futileByForecast(measuring(-0.005, 400), 35, 120, 0.02)).toBe(true);
    expect(futileByForecast(measuring(0.002, null), 25, 120, 0.02)).toBe(false);
    expect(futileByForecast(measuring(0.002, 80), 30, 120, 0.02)).toBe(false);
    // no interval yet: nothing is forecast
    expect(futileByForecast(measuring(0.002, undefined), 60, 120, 0.02)).toBe(false);
  });

  it('lets one whose estimate points at a gain measure on', () => {
    expect(futileByForecast(measuring(-0.06, null), 30, 120, 0.02)).toBe(false);
    expect(futileByForecast({ state: 'better' }, 30, 120, 0.02)).toBe(false);
  });
});
