import { describe, expect, it } from 'vitest';
import { fitMemoryModel, nnls, predictMemory } from '../../../src/suggest/memory-model.js';
import type { TriedCandidate } from '../../../src/suggest/types.js';
import { observe, preset, TRUE_MODEL } from './helpers.js';

function run(
  name: string,
  presetName: string,
  edit?: (t: ReturnType<typeof preset>) => void,
): TriedCandidate {
  const topology = preset(presetName);
  edit?.(topology);
  return { name, topology, status: 'accepted', observation: observe(topology, { seconds: 2 }) };
}

describe('nnls', () => {
  it('solves an exact system and clamps negative directions to zero', () => {
    expect(
      nnls(
        [
          [1, 0],
          [0, 1],
          [1, 1],
        ],
        [2, 3, 5],
      ).map((v) => Math.round(v * 1e6) / 1e6),
    ).toEqual([2, 3]);
    const x = nnls(
      [
        [1, 1],
        [1, 2],
      ],
      [1, 0],
    );
    expect(x.every((v) => v >= 0)).toBe(true);
  });
});

describe('fitMemoryModel', () => {
  it('falls back to the clusters.yaml model without measurements', () => {
    const fitted = fitMemoryModel([{ name: 'b', topology: preset('1gpu'), status: 'running' }], TRUE_MODEL);
    expect(fitted.source).toBe('prior');
    expect(fitted.model).toEqual(TRUE_MODEL);
    expect(fitMemoryModel([]).source).toBe('default');
  });

  it('recovers per-replica and per-scene GiB from runs that varied them', () => {
    const runs = [
      run('a', '8gpu_64rollouts'),
      run('b', '8gpu_12rollouts'),
      run('c', '2gpu'),
      run('d', '8gpu_no_replicas'),
      run('e', '8gpu_64rollouts', (t) => {
        t.defines!.nre_cache_size = 9;
        t.services!.driver!.replicas_per_container = 4;
      }),
      run('f', '1gpu'),
    ];
    const fitted = fitMemoryModel(runs);
    expect(fitted.source).toBe('fitted');
    expect(fitted.maxResidualGiB).toBeLessThan(0.5);
    const m = fitted.model;
    expect(m.per_replica_gib.driver).toBeCloseTo(4, 0);
    expect(m.per_cached_scene_gib?.renderer).toBeCloseTo(2, 0);
    // Predictions on an unseen topology agree with the truth within a GiB.
    const unseen = preset('8gpu_64rollouts');
    unseen.services!.renderer!.gpus = [0, 0, 1, 1, 2, 2, 3, 3];
    unseen.runtime!.endpoints!.renderer!.n_concurrent_rollouts = 8;
    unseen.defines!.nre_cache_size = 9;
    const truth = predictMemory(unseen, TRUE_MODEL, 80);
    const predicted = predictMemory(unseen, m, 80);
    for (const [i, p] of predicted.entries()) expect(Math.abs(p.gib - truth[i]!.gib)).toBeLessThan(1.5);
  });

  it('never fits a negative coefficient', () => {
    const fitted = fitMemoryModel([run('a', '8gpu_64rollouts'), run('b', '2gpu')]);
    const values = [
      ...Object.values(fitted.model.per_replica_gib),
      ...Object.values(fitted.model.per_cached_scene_gib ?? {}),
      fitted.model.per_gpu_overhead_gib ?? 0,
    ];
    expect(values.every((v) => (v ?? 0) >= 0)).toBe(true);
  });
});
