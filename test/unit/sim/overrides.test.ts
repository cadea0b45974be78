// The twin plays AlpaSim's wizard: it reads the overrides AlpaSim's submit.sh gets and refuses what AlpaSim refuses.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseOverrides, parseValue } from '../../../src/sim/overrides.js';
import { root } from './helpers.js';

const bad = JSON.parse(readFileSync(join(root, 'test/fixtures/sim/bad-overrides.json'), 'utf8')) as {
  argv: string[];
  error: string;
}[];

describe('Hydra overrides', () => {
  it('parses values like Hydra', () => {
    expect(parseValue('[0,0,1,1]')).toEqual([0, 0, 1, 1]);
    expect(parseValue('null')).toBeNull();
    expect(parseValue('true')).toBe(true);
    expect(parseValue('17')).toBe(17);
    expect(parseValue('4cam_1080')).toBe('4cam_1080');
  });

  it('applies the rendered argv to the preset', () => {
    const inv = parseOverrides(
      [
        'deploy=twin-balanced',
        'topology=8gpu_64rollouts',
        'driver=vavam',
        'scenes.test_suite_id=public_2601',
        'runtime.simulation_config.n_rollouts=2',
        '+cameras=4cam_1080',
        'services.driver.gpus=[4,5,6,7]',
        'services.controller.gpus=null',
        'runtime.endpoints.driver.n_concurrent_rollouts=2',
        'defines.nre_cache_size=17',
        'runtime.nr_workers=12',
        'wizard.run_name=topo-exp-cand-0123abcd',
      ],
      { repoRoot: root, gpusPerNode: 8 },
    );
    expect(inv.deploy).toBe('twin-balanced');
    expect(inv.runName).toBe('topo-exp-cand-0123abcd');
    expect(inv.nRollouts).toBe(2);
    expect(inv.testSuiteId).toBe('public_2601');
    expect(inv.topology.runtime?.nr_workers).toBe(12);
    expect(inv.topology.services?.controller?.gpus).toBeNull();
    // trafficsim is disabled unless a trafficsim implementation is chosen, as in AlpaSim's base config
    expect(inv.topology.runtime?.endpoints?.trafficsim?.skip).toBe(true);
    const withTraffic = parseOverrides(
      ['deploy=twin-balanced', 'topology=8gpu_64rollouts', 'driver=vavam', 'trafficsim=catk'],
      {
        repoRoot: root,
        gpusPerNode: 8,
      },
    );
    expect(withTraffic.topology.runtime?.endpoints?.trafficsim?.skip).toBe(false);
  });

  it('composes +physics=disabled after the preset (issue 14.1), and recognises the daemon preset', () => {
    const opts = { repoRoot: root, gpusPerNode: 8 };
    const base = ['deploy=twin-balanced', 'topology=8gpu_64rollouts', 'driver=vavam'];
    // The preset says physics skip: false; the appended group wins, an explicit key override wins over both.
    expect(
      parseOverrides([...base, '+physics=disabled'], opts).topology.runtime?.endpoints?.physics?.skip,
    ).toBe(true);
    expect(
      parseOverrides([...base, '+physics=disabled', 'runtime.endpoints.physics.skip=false'], opts).topology
        .runtime?.endpoints?.physics?.skip,
    ).toBe(false);
    expect(parseOverrides(base, opts).topology.runtime?.endpoints?.physics?.skip).toBe(false);
    expect(() => parseOverrides(['deploy=twin-balanced', 'topology=daemon', 'driver=vavam'], opts)).toThrow(
      /CLI-driven daemon preset/,
    );
  });

  it('accepts skip changes and renderer replicas above one, as AlpaSim does', () => {
    const inv = parseOverrides(
      [
        'deploy=twin-balanced',
        'topology=8gpu_64rollouts',
        'driver=vavam',
        'runtime.endpoints.physics.skip=true',
        'services.renderer.replicas_per_container=2',
      ],
      { repoRoot: root, gpusPerNode: 8 },
    );
    expect(inv.topology.runtime?.endpoints?.physics?.skip).toBe(true);
    expect(inv.topology.services?.renderer?.replicas_per_container).toBe(2);
  });

  for (const c of bad) {
    it(`refuses ${c.argv.slice(-1)[0]}`, () => {
      expect(() => parseOverrides(c.argv, { repoRoot: root, gpusPerNode: 8 })).toThrow(c.error);
    });
  }
});
