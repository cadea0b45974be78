// Presets come with the version: an adopting repository without topologies/presets still validates,
// its own copy wins over the shipped one, and TOPO_PRESETS_DIR (the presets-dir input) wins over both.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { shippedRoot } from '../../../src/topology/shipped.js';
import { fileSystemSource } from '../../../src/usecases/validate.js';
import { REPO } from './helpers.js';

const shipped = readFileSync(join(REPO, 'topologies/presets/2gpu.yaml'), 'utf8');
let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('presets shipped with the version', () => {
  it('finds the package root from its own file', () => {
    expect(shippedRoot()).toBe(REPO);
    expect(shippedRoot('/')).toBeUndefined();
  });

  it('reads the shipped preset when the repository has none, its own copy first, the override before both', async () => {
    dir = mkdtempSync(join(tmpdir(), 'topo-adopter-'));
    expect(await fileSystemSource(dir, undefined).read('topologies/presets/2gpu.yaml')).toBe(shipped);
    expect(await fileSystemSource(dir, undefined).read('topologies/presets/nope.yaml')).toBeUndefined();
    // Other files never fall back.
    expect(await fileSystemSource(dir, undefined).read('topologies/clusters.yaml')).toBeUndefined();
    mkdirSync(join(dir, 'topologies/presets'), { recursive: true });
    writeFileSync(join(dir, 'topologies/presets/2gpu.yaml'), '# mine\n');
    expect(await fileSystemSource(dir, undefined).read('topologies/presets/2gpu.yaml')).toBe('# mine\n');
    mkdirSync(join(dir, 'override'));
    writeFileSync(join(dir, 'override/2gpu.yaml'), '# override\n');
    expect(await fileSystemSource(dir, 'override').read('topologies/presets/2gpu.yaml')).toBe('# override\n');
  });
});
