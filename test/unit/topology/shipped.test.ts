// Presets come with the version: an adopting repository without topologies/presets still validates,
// its own copy wins over the shipped one (and says so), and TOPO_PRESETS_DIR wins over both. One rule
// (src/topology/presets.ts) for the working tree and for a repository read through the API.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  describePreset,
  presetNotFound,
  readPreset,
  readPresetFromCheckout,
} from '../../../src/topology/presets.js';
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
    const repo = fileSystemSource(dir);
    expect(await readPreset('2gpu', repo)).toMatchObject({
      text: shipped,
      origin: 'shipped',
      overridesShipped: false,
    });
    expect(await readPreset('nope', repo)).toBeUndefined();
    expect(await readPreset('../etc/passwd', repo)).toBeUndefined();
    // Other files never fall back.
    expect(await repo.read('topologies/clusters.yaml')).toBeUndefined();
    mkdirSync(join(dir, 'topologies/presets'), { recursive: true });
    writeFileSync(join(dir, 'topologies/presets/2gpu.yaml'), '# mine\n');
    const own = await readPreset('2gpu', repo);
    expect(own).toMatchObject({ text: '# mine\n', origin: 'repository', overridesShipped: true });
    expect(describePreset(own!)).toBe(
      "the repository's own topologies/presets/2gpu.yaml, instead of the one shipped with alpasim-topo",
    );
    expect(readPresetFromCheckout('2gpu', dir)).toMatchObject({ text: '# mine\n', origin: 'repository' });
    mkdirSync(join(dir, 'override'));
    writeFileSync(join(dir, 'override/2gpu.yaml'), '# override\n');
    expect(await readPreset('2gpu', repo, { overrideDir: join(dir, 'override') })).toMatchObject({
      text: '# override\n',
      origin: 'override',
    });
  });

  it('says where it looked and what is there', () => {
    const message = presetNotFound('4gpu', {}, ['mine']);
    expect(message).toContain("no preset `4gpu` in the repository's topologies/presets/");
    expect(message).toContain('the presets shipped with alpasim-topo');
    expect(message).toContain('1gpu, 2gpu, 8gpu_12rollouts, 8gpu_64rollouts, 8gpu_no_replicas, mine');
  });
});
