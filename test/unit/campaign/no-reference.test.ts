// After a baseline that ran out of memory the round has no reference (issue 43): its candidates are
// decided between them, all of one run age, and the winner is the one every other was decided
// against, not the fastest young projection.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decideRound } from '../../../bench/campaign/decide.js';
import { World } from '../../../bench/campaign/sim.js';
import { build } from '../../../bench/campaign/space.js';
import { DEFAULT_POLICY, roundWinner, startCampaign } from '../../../src/campaign/rounds.js';
import { parseProfile } from '../../../src/sim/profile.js';
import { preset } from '../suggest/helpers.js';

const file = new URL('../../../bench/profiles/twin-a100-40g.yaml', import.meta.url);
const a100 = parseProfile(readFileSync(file, 'utf8'), file.pathname);
const base = preset('8gpu_64rollouts');
const at = (total: number, workers: number) =>
  build(base, { renderer: 0, driver: 4, physics: 4, total, workers });

describe('a round without a reference (the baseline ran out of memory)', () => {
  it('decides the winner between its candidates: the others against the leader', () => {
    const world = new World(a100, 101);
    expect(world.run(base).oom).toBe(true);
    // two within noise of each other (32 in flight, 24 or 8 workers: 0.05% apart) and a slower one
    const runs = [at(32, 24), at(32, 8), at(16, 8)].map((t) => world.run(t));
    const decided = decideRound(world, runs, null, DEFAULT_POLICY, 5);
    const leaders = decided.filter((d) => d.outcome === 'better');
    expect(leaders).toHaveLength(1);
    expect(leaders[0]!.leads).toBe(true);
    for (const d of decided.filter((x) => x !== leaders[0]))
      expect(['not-better', 'equivalent', 'worse']).toContain(d.outcome);
    // the slow one is never the winner; the leader stops once the others are decided against it
    expect(leaders[0]!.run.truth.secondsPerRollout).toBeLessThan(runs[2]!.truth.secondsPerRollout);
    expect(leaders[0]!.stoppedAt).toBeGreaterThanOrEqual(Math.max(...decided.map((d) => d.decidedAt ?? 0)));
    const state = startCampaign({ name: 'baseline', seconds: null, gpuHours: 0.7 });
    const round = {
      index: 1,
      parent: 'baseline',
      runs: decided.map((d, i) => ({
        name: `c${i}`,
        outcome: d.outcome,
        seconds: d.verdict?.projected_full_run?.value ?? 99,
        gpuHours: 1,
      })),
    };
    expect(roundWinner(state, round)?.name).toBe(`c${decided.indexOf(leaders[0]!)}`);
  }, 180_000);
});
