import { describe, expect, it } from 'vitest';
import { predictGpuMemory } from '../../../src/topology/memory.js';
import type { MemoryModel } from '../../../src/types/generated/clusters.js';
import type { Topology } from '../../../src/types/generated/topology.js';

const topology: Topology = {
  defines: { nre_cache_size: 9, physics_cache_size: 6 },
  services: {
    renderer: { gpus: [0, 0, 1], replicas_per_container: 1 },
    driver: { gpus: [1], replicas_per_container: 4 },
    physics: { gpus: [1], replicas_per_container: 2 },
    controller: { gpus: null, replicas_per_container: 8 },
    trafficsim: { gpus: [2], replicas_per_container: 1 },
  },
  runtime: {
    endpoints: {
      renderer: { n_concurrent_rollouts: 8, skip: false },
      driver: { n_concurrent_rollouts: 2, skip: false },
      physics: { n_concurrent_rollouts: 4, skip: false },
      controller: { n_concurrent_rollouts: 1, skip: false },
      trafficsim: { n_concurrent_rollouts: 8, skip: true },
    },
  },
};
const model: MemoryModel = {
  per_replica_gib: { renderer: 10, driver: 5, physics: 1 },
  per_cached_scene_gib: { renderer: 1.5, physics: 0.5 },
  per_gpu_overhead_gib: 1,
};

describe('predictGpuMemory', () => {
  it('sums replicas, cached scenes and overhead per GPU; skipped and CPU services take none', () => {
    const rows = predictGpuMemory(topology, model, 100);
    expect(rows.map((r) => r.gpu)).toEqual([0, 1]); // GPU 2 only hosts the skipped trafficsim
    const [gpu0, gpu1] = rows;
    // Two renderer containers: 2 × 10 GiB + 2 × 9 scenes × 1.5 GiB + 1 overhead.
    expect(gpu0?.totalGiB).toBe(20 + 27 + 1);
    expect(gpu0?.services).toEqual([
      { service: 'renderer', instances: 2, replicaGiB: 20, cachedScenes: 18, cacheGiB: 27 },
    ]);
    // Renderer 10 + 13.5, driver 4 × 5, physics 2 × 1 + 2 × 6 × 0.5, overhead 1.
    expect(gpu1?.totalGiB).toBe(23.5 + 20 + 2 + 6 + 1);
    expect(gpu1?.fraction).toBeCloseTo(0.525);
    expect(gpu1?.level).toBe('ok');
  });

  it('grades against 80% (warning) and 90% (error) of the GPU memory', () => {
    const levels = (gib: number) => predictGpuMemory(topology, model, gib).map((r) => r.level);
    expect(levels(60)).toEqual(['ok', 'warning']); // 48/60 = 80% exactly is still ok; 52.5/60 = 87.5%
    expect(levels(55)).toEqual(['warning', 'error']); // 87%, 95%
    expect(levels(100)).toEqual(['ok', 'ok']);
  });

  it('is model-agnostic: a fitted model with only some services predicts only what it knows', () => {
    const fitted: MemoryModel = { per_replica_gib: { driver: 7.25 } };
    const rows = predictGpuMemory(topology, fitted, 80);
    expect(rows.find((r) => r.gpu === 1)?.totalGiB).toBe(29);
    expect(rows.find((r) => r.gpu === 0)?.totalGiB).toBe(0);
  });
});
