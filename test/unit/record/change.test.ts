import { describe, expect, it } from 'vitest';
import { describeChange, hydraValue, topologyChange } from '../../../src/record/change.js';

describe('topologyChange', () => {
  it('lists changed keys as old -> new in Hydra syntax', () => {
    const change = topologyChange(
      { services: { renderer: { gpus: [0, 1] }, controller: { gpus: null } }, runtime: { nr_workers: 8 } },
      {
        services: { renderer: { gpus: [0, 0, 1, 1] }, controller: { gpus: null } },
        runtime: { nr_workers: 12 },
        defines: { nre_cache_size: 9 },
      },
    );
    expect(change).toEqual({
      'defines.nre_cache_size': 'unset -> 9',
      'runtime.nr_workers': '8 -> 12',
      'services.renderer.gpus': '[0,1] -> [0,0,1,1]',
    });
  });

  it('is empty for equal topologies and formats values', () => {
    expect(topologyChange({ runtime: { nr_workers: 2 } }, { runtime: { nr_workers: 2 } })).toEqual({});
    expect(hydraValue(null)).toBe('null');
    expect(describeChange({}, true)).toBe('baseline');
    expect(describeChange({}, false)).toBe('no change');
    expect(describeChange({ a: '1 -> 2', b: 'x -> y' }, false)).toBe('a: 1 -> 2; b: x -> y');
  });
});
