// The campaign bench's input for one world, as the unit tests of the bench's campaigns build it: the
// 8-GPU, 64-rollout preset on the world's profile, 120 GPU-hours, a look every 5 minutes.
import type { Context } from '../../../bench/campaign/methods.js';
import type { World } from '../../../bench/campaign/sim.js';
import { DEFAULT_POLICY } from '../../../src/campaign/rounds.js';
import type { TwinProfile } from '../../../src/types/generated/twin-profile.js';
import { preset } from '../suggest/helpers.js';

export const base = preset('8gpu_64rollouts');

export function benchContext(
  profile: TwinProfile,
  world: World,
  policy: Context['policy'] = DEFAULT_POLICY,
): Context {
  return {
    world,
    base,
    basePoint: { renderer: 0, driver: 8, physics: 4, total: 64, workers: 8 },
    policy,
    cluster: {
      gpusPerNode: profile.gpu.count,
      gpuMemoryGiB: profile.gpu.memory_gb,
      cpusPerNode: profile.cpu.cores,
    },
    budget: 120,
    look: 5,
    experimentId: 'topology-opt-bench-twin-20261202',
  };
}
