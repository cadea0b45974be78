// A runtime-bound twin (issue 33): services cheap, the runtime's per-step work binds, so the runtime
// workers and the rollouts in flight set the rate. After the baseline alone, the first round's
// proposals must reach those knobs, and each round's reference runs beside its candidates so a young
// candidate is not judged against an old reference's value.
import { describe, expect, it } from 'vitest';
import { decideBeside } from '../../../bench/campaign/decide.js';
import { World } from '../../../bench/campaign/sim.js';
import { DEFAULT_POLICY } from '../../../src/campaign/rounds.js';
import { steadyState } from '../../../src/sim/model.js';
import { loadProfile } from '../../../src/sim/profile.js';
import { suggest } from '../../../src/suggest/suggest.js';
import { nrWorkers } from '../../../src/suggest/topology-ops.js';
import { capacitySummary } from '../../../src/topology/capacity.js';
import type { TwinProfile } from '../../../src/types/generated/twin-profile.js';
import { preset } from '../suggest/helpers.js';

const base = preset('8gpu_64rollouts');
const balanced = loadProfile('twin-balanced');
const twin: TwinProfile = {
  ...balanced,
  services: {
    ...balanced.services,
    renderer: { ...balanced.services.renderer, call_ms: 22 },
    driver: { ...balanced.services.driver, call_ms: 30, cpu_ms: 3 },
    physics: { ...balanced.services.physics, call_ms: 15 },
    controller: { ...balanced.services.controller, call_ms: 20, cpu_ms: 4 },
    trafficsim: { ...balanced.services.trafficsim, call_ms: 15 },
  },
  runtime: { ...balanced.runtime, step_work_ms: 52 },
};

describe('a runtime-bound twin', () => {
  it('is runtime-bound: more workers are what makes it faster', () => {
    const more = structuredClone(base);
    more.runtime!.nr_workers = 16;
    expect(steadyState(more, twin).secondsPerRollout).toBeLessThan(
      0.9 * steadyState(base, twin).secondsPerRollout,
    );
  });

  it("the first round's proposals include the runtime knobs (nr_workers, rollouts in flight)", () => {
    const world = new World(twin, 100);
    const run = world.run(base);
    const tried = [world.tried('baseline', run, null, world.verdict(run, 35), 'accepted')];
    const result = suggest({
      experimentId: 'topology-opt-twin-20261206',
      baseTopology: base,
      cluster: { gpusPerNode: 8, gpuMemoryGiB: 80, cpusPerNode: 64 },
      maxParallel: 3,
      tried,
      currentBest: 'baseline',
    });
    expect(result.stop.stop).toBe(false);
    const workers = result.proposals.filter((p) => nrWorkers(p.candidate.topology) > nrWorkers(base));
    expect(workers.length).toBeGreaterThanOrEqual(1);
    expect(
      result.proposals.some(
        (p) => capacitySummary(p.candidate.topology).inFlight > capacitySummary(base).inFlight,
      ),
    ).toBe(true);
    // the model points at the runtime too, and this round tries it
    expect(result.outlook?.change).toMatch(/runtime\.nr_workers/);
    expect(result.outlook?.proposed).toBe(true);
  });

  it('a faster candidate is decided better against its reference run beside it, at equal run age', () => {
    const world = new World(twin, 100);
    const more = structuredClone(base);
    more.runtime!.nr_workers = 16;
    const { decided, reference } = decideBeside(
      world,
      [world.run(more)],
      world.run(base, 101),
      DEFAULT_POLICY,
      5,
    );
    expect(decided[0]!.outcome).toBe('better');
    // the reference ran as long as its one candidate needed it (referenceNeeded), no longer
    expect(reference.stoppedAt).toBe(decided[0]!.stoppedAt);
  });
});
