import { describe, expect, it } from 'vitest';
import { fileSystemSource } from '../../../src/cli/commands/validate.js';
import { capacitySummary } from '../../../src/topology/capacity.js';
import {
  canonicalJson,
  deepMerge,
  expandCandidate,
  expandPreset,
  hash8,
  hydraValue,
  normalise,
  topologyDiff,
  topologyHash,
} from '../../../src/topology/expand.js';
import { checkPreset } from '../../../src/topology/files.js';
import type { Topology } from '../../../src/types/generated/topology.js';
import { REPO } from './helpers.js';

async function preset(name: string): Promise<Topology> {
  const text = await fileSystemSource(REPO).read(`topologies/presets/${name}.yaml`);
  const checked = checkPreset(text as string, name);
  expect(checked.issues).toEqual([]);
  return checked.value as Topology;
}

const withCatk = { fixed_inputs: { deploy: 'd', driver: 'v', overrides: ['trafficsim=catk'] } };
const withoutTrafficsim = { fixed_inputs: { deploy: 'd', driver: 'v' } };

describe('expand', () => {
  it('deepMerge merges mappings and replaces lists, scalars and null', () => {
    expect(deepMerge({ a: { b: 1, c: [1, 2] }, d: 1 }, { a: { c: [3] }, e: null })).toEqual({
      a: { b: 1, c: [3] },
      d: 1,
      e: null,
    });
    expect(deepMerge({ gpus: [0, 1] }, { gpus: null })).toEqual({ gpus: null });
  });

  it.each(['1gpu', '2gpu', '8gpu_12rollouts', '8gpu_64rollouts', '8gpu_no_replicas'])(
    'every shipped preset is schema-valid and balanced: %s',
    async (name) => {
      const base = expandPreset(await preset(name), withCatk);
      const summary = capacitySummary(base);
      expect(summary.imbalance).toBe(1);
      expect(base.defines?.physics_cache_size).toBeGreaterThan(0);
    },
  );

  it('fills skip the way AlpaSim composes it: trafficsim is off unless a trafficsim group is chosen', async () => {
    const p = await preset('8gpu_64rollouts');
    expect(expandPreset(p, withoutTrafficsim).runtime?.endpoints?.trafficsim?.skip).toBe(true);
    expect(expandPreset(p, withCatk).runtime?.endpoints?.trafficsim?.skip).toBe(false);
    expect(expandPreset(p, withCatk).runtime?.endpoints?.renderer?.skip).toBe(false);
    // Issue 14.1: +physics=disabled comes after the preset in AlpaSim's composition, so it wins over the
    // preset's explicit `skip: false`.
    const physicsOff = { fixed_inputs: { deploy: 'd', driver: 'v', overrides: ['+physics=disabled'] } };
    expect(expandPreset(p, physicsOff).runtime?.endpoints?.physics?.skip).toBe(true);
    const both = {
      fixed_inputs: { deploy: 'd', driver: 'v', overrides: ['trafficsim=catk', '+physics=disabled'] },
    };
    const composed = expandPreset(p, both);
    expect(composed.runtime?.endpoints?.physics?.skip).toBe(true);
    expect(composed.runtime?.endpoints?.trafficsim?.skip).toBe(false);
    // driver_source=external_dynamic (before topology in the defaults list) skips the driver unless the preset says.
    const dyn = { fixed_inputs: { deploy: 'd', driver: 'v', overrides: ['driver_source=external_dynamic'] } };
    expect(expandPreset(await preset('1gpu'), dyn).runtime?.endpoints?.driver?.skip).toBe(true);
    expect(expandPreset(await preset('2gpu'), dyn).runtime?.endpoints?.driver?.skip).toBe(false);
    expect(expandPreset(await preset('1gpu'), withoutTrafficsim).defines?.physics_cache_size).toBe(16);
  });

  it('hash is independent of key order and changes with any value', async () => {
    const base = expandPreset(await preset('8gpu_64rollouts'), withCatk);
    const a = expandCandidate(base, { runtime: { nr_workers: 16 }, defines: { nre_cache_size: 9 } });
    const b = expandCandidate(base, { defines: { nre_cache_size: 9 }, runtime: { nr_workers: 16 } });
    expect(topologyHash(a)).toBe(topologyHash(b));
    expect(hash8(a)).toMatch(/^[0-9a-f]{8}$/);
    expect(topologyHash(expandCandidate(base, { runtime: { nr_workers: 15 } }))).not.toBe(topologyHash(a));
    // Restating a preset value is the same topology as the preset.
    expect(topologyHash(expandCandidate(base, { runtime: { nr_workers: 8 } }))).toBe(topologyHash(base));
  });

  it('normalise puts keys in AlpaSim order and canonicalJson sorts them', () => {
    const t = normalise({
      runtime: { nr_workers: 1 },
      services: {},
      defines: { physics_cache_size: 2, nre_cache_size: 1 },
    } as Topology);
    expect(Object.keys(t)).toEqual(['defines', 'runtime']);
    expect(Object.keys(t.defines ?? {})).toEqual(['nre_cache_size', 'physics_cache_size']);
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }] })).toBe('{"a":[{"c":2,"d":1}],"b":1}');
  });

  it('topologyDiff lists changed settings as Hydra keys', async () => {
    const base = expandPreset(await preset('8gpu_64rollouts'), withCatk);
    const c = expandCandidate(base, {
      services: { renderer: { gpus: [0, 0, 1, 1] } },
      runtime: { nr_workers: 4 },
    });
    expect(topologyDiff(base, c)).toEqual([
      { key: 'services.renderer.gpus', from: [0, 1, 2, 3], to: [0, 0, 1, 1] },
      { key: 'runtime.nr_workers', from: 8, to: 4 },
    ]);
    expect(hydraValue([0, 0, 1])).toBe('[0,0,1]');
    expect(hydraValue(null)).toBe('null');
  });
});
