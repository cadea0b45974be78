// Issue 42 item 2: the autopilot bench agrees with the campaign bench's `topo`, because it runs the
// same rounds. topo's loop (src/campaign/loop.ts runCampaign, each turn planned by planRound) and the
// autopilot's (each turn planned by src/autopilot/core.ts planStep over the runs as a monitor pass
// reads them) on the same world and seed: the same rounds with the same outcomes, the same conclusion,
// the same GPU-hours and the same answer. They left each other where a held run counted as tried, a
// held candidate was never rerun, the round's reference job did not refine the best, and reference
// jobs counted against one budget and not the other.
import { describe, expect, it } from 'vitest';
import { autopilotPlanner, roundsDiverge } from '../../../bench/campaign/autopilot.js';
import { type MethodResult, topoCampaign } from '../../../bench/campaign/methods.js';
import { World } from '../../../bench/campaign/sim.js';
import { benchProfiles } from '../../../bench/campaign/space.js';
import { repoRoot } from '../../../src/sim/profile.js';
import { benchContext } from '../campaign/bench-context.js';

const twin = (name: string) => benchProfiles(repoRoot(), name)[0]!.profile;

async function both(profile: string, seed: number): Promise<[MethodResult, MethodResult]> {
  const p = twin(profile);
  const topo = await topoCampaign(benchContext(p, new World(p, seed)));
  const ctx = benchContext(p, new World(p, seed));
  return [topo, await topoCampaign(ctx, autopilotPlanner(ctx))];
}

// seeds the bench never tuned on, each a campaign the two left each other on before
const CASES: Array<[string, number]> = [
  ['twin-cpu-contended', 100],
  ['twin-runtime-bound', 101],
  ['twin-physics-heavy', 100],
];

describe("the autopilot bench runs the campaign bench's rounds (issue 42 item 2)", () => {
  it.each(CASES)(
    '%s, seed %i: the same rounds, conclusion, GPU-hours and answer',
    async (profile, seed) => {
      const [topo, pilot] = await both(profile, seed);
      expect(roundsDiverge(topo, pilot)).toBeNull();
      expect(pilot.state).toEqual(topo.state);
      expect(pilot.ledger.total()).toBeCloseTo(topo.ledger.total(), 9);
      expect(pilot.ledger.final()).toEqual(topo.ledger.final());
    },
    120_000,
  ); // two whole campaigns: ~10 s alone, 30 s on a loaded 2-core machine
});
