// The campaign bench's world runs each topology at its truth (the twin's steady seconds per rollout)
// in the long run, whatever the seed's family shape. Before, a cyclic seed's runs were scaled for the
// noise only: rollouts lasting about the cycle's period lock onto its slow phase, so the driver-bound
// best (96 in flight, 9-minute rollouts) ran 11% slower than its scored truth and the baseline 2%,
// and no reading of the runs could be right there (docs/campaign.md, "The floor").
import { describe, expect, it } from 'vitest';
import { nominalSeconds } from '../../../bench/campaign/sim.js';
import { completions, SHAPES, type Shape } from '../../../bench/trace-family.js';

/** Seconds per rollout of a long run of the shape (minutes 300-2,900: past the start-up). */
function longRunSeconds(shape: Shape): number {
  const spec = { shape, seed: 7, factor: 1, runName: 'long', endMinutes: 3000, scrapeSeconds: 60 };
  const ended = completions(spec).filter((c) => c.t > 300 && c.t <= 2900).length;
  return (2600 * 60) / ended;
}

describe('the campaign world: a run of a topology runs at its truth in the long run', () => {
  const shared = SHAPES.filter((s) => s.crashAtMinutes === undefined && !s.driftPerHour);
  const cases = [
    { inFlight: 96, truth: 5.6 }, // driver-bound's best: 9-minute rollouts on a 10-minute cycle
    { inFlight: 64, truth: 8.4 },
    { inFlight: 48, truth: 10 },
    { inFlight: 64, truth: 5.7 },
  ];
  for (const base of shared)
    it(`${base.name}: within 1.5% of the truth for rollouts of 6 to 9 minutes`, () => {
      for (const { inFlight, truth } of cases) {
        const workers = 4;
        const steadySeconds = nominalSeconds(truth, base, inFlight, workers);
        const seconds = longRunSeconds({ ...base, inFlight, workers, steadySeconds });
        expect(Math.abs(seconds / truth - 1), `${inFlight} in flight at ${truth} s`).toBeLessThan(0.015);
      }
    });
});
