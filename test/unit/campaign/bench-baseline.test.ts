// The campaign bench's baseline: one that crashes (a trace crash, not out of memory) is rerun once,
// as a person would, and both jobs are charged; it was a failed start before (issue 27).
import { describe, expect, it } from 'vitest';
import { type Context, manualCampaign, measureBaseline } from '../../../bench/campaign/methods.js';
import { GPUS, Ledger, STARTUP, World } from '../../../bench/campaign/sim.js';
import { DEFAULT_POLICY } from '../../../src/campaign/rounds.js';
import { loadProfile } from '../../../src/sim/profile.js';
import { preset } from '../suggest/helpers.js';

const base = preset('8gpu_64rollouts');
const profile = loadProfile('twin-balanced');
const context = (world: World): Context => ({
  world,
  base,
  basePoint: { renderer: 0, driver: 8, physics: 4, total: 64, workers: 8 },
  policy: DEFAULT_POLICY,
  cluster: {
    gpusPerNode: profile.gpu.count,
    gpuMemoryGiB: profile.gpu.memory_gb,
    cpusPerNode: profile.cpu.cores,
  },
  budget: 120,
  look: 5,
  experimentId: 'topology-opt-bench-twin-20261202',
});
/** The first seeds whose baseline crashes early (before it can be a reference or read at 45 minutes). */
const crashing = () => {
  for (let seed = 1; seed < 2000; seed++) {
    const world = new World(profile, seed);
    const r = world.run(base);
    if (world.crashes(r) && (r.shape.crashAtMinutes ?? 99) < 30) return world;
  }
  throw new Error('no seed with a crashing baseline');
};

describe('a crashed baseline in the campaign bench', () => {
  it('is rerun once right after the crash, as a new job with its own noise, and both jobs are charged', () => {
    const world = crashing();
    const first = world.run(base);
    const ledger = new Ledger();
    const { run, b, start } = measureBaseline(context(world), ledger);
    expect(ledger.runs).toHaveLength(2);
    expect(ledger.runs[0]).toMatchObject({ start: 0, stop: STARTUP + first.shape.crashAtMinutes! });
    expect(start).toBe(ledger.runs[0]!.stop);
    expect(run.id).not.toBe(first.id);
    expect(run.key).toBe(first.key);
    expect(ledger.total()).toBeCloseTo((GPUS * (ledger.runs[1]!.stop - 0)) / 60, 6);
    // the rerun is measured (it crashes again only if its own incident says so)
    if (!world.crashes(run)) expect(b.verdict?.projected_full_run?.value).toBeGreaterThan(0);
  });

  it('is rerun by the seed-rule-by-hand too, and the campaign goes on from it', () => {
    const world = crashing();
    const result = manualCampaign(context(world));
    expect(result.ledger.runs[1]!.start).toBe(result.ledger.runs[0]!.stop);
    expect(result.ledger.incumbent[0]?.name).toBe('baseline');
  });

  it('a baseline that runs out of memory is not rerun (the same topology would fail the same way)', () => {
    const small = { ...profile, gpu: { ...profile.gpu, memory_gb: 8 } };
    const world = new World(small, 1);
    expect(world.run(base).oom).toBe(true);
    const ledger = new Ledger();
    measureBaseline(context(world), ledger);
    expect(ledger.runs).toHaveLength(1);
  });
});

describe('the information floor beside the figures', () => {
  it('is below what the project, the seed rule and knowing the best beforehand spent to reach the best', async () => {
    const { groundTruth } = await import('../../../bench/campaign/space.js');
    const { informationFloor, knownBestCost } = await import('../../../bench/campaign/bound.js');
    const { topoCampaign } = await import('../../../bench/campaign/methods.js');
    const truth = groundTruth(base, profile);
    for (const seed of [100, 101]) {
      const ctx = context(new World(profile, seed));
      const floor = informationFloor(ctx, truth.optimumPoint, DEFAULT_POLICY.minImprovement);
      // the baseline and one run of the best, each at least start-up plus one steady rollout
      expect(floor).toBeGreaterThanOrEqual((2 * GPUS * STARTUP) / 60);
      expect(floor).toBeLessThanOrEqual(knownBestCost(ctx, truth.optimumPoint));
      for (const result of [topoCampaign(ctx), manualCampaign(ctx)]) {
        const reached = result.ledger.reached(truth.optimum, 0.02);
        if (reached) expect(floor).toBeLessThanOrEqual(reached.gpuHours);
      }
    }
  }, 120_000);
});
