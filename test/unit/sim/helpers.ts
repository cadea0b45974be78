// Shared helpers of the twin's unit tests: profiles and topologies as the twin reads them.
import { resolve } from 'node:path';
import { parseOverrides } from '../../../src/sim/overrides.js';
import { loadProfile } from '../../../src/sim/profile.js';
import type { Topology } from '../../../src/types/generated/topology.js';
import type { TwinProfile } from '../../../src/types/generated/twin-profile.js';

export const root = resolve(import.meta.dirname, '../../..');

export function profile(name: string): TwinProfile {
  return loadProfile(name, root);
}

/** The topology the twin runs for a preset plus Hydra overrides. */
export function topology(preset: string, ...overrides: string[]): Topology {
  return parseOverrides(['deploy=twin-balanced', `topology=${preset}`, 'driver=vavam', ...overrides], {
    repoRoot: root,
    gpusPerNode: 8,
  }).topology;
}
