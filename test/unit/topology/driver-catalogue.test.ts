// AlpaSim's catalogue at the pinned commit holds the runtime's own keys (runtime.scene_affine_dispatch.*)
// and the bundled plugin's driver (transfuser); a driver= outside it gets the note any unknown value gets,
// in init and in validate.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_CATALOG } from '../../../src/catalog/facts.js';
import { initExperiment } from '../../../src/topology/init.js';
import { overrideProblem } from '../../../src/topology/overrides.js';
import { validateFiles } from '../../../src/usecases/validate.js';
import { CORPUS_EXPERIMENT, corpusSource } from './helpers.js';

const SCRIPT = 'src/tools/run-on-slurm/submit.sh';

describe("AlpaSim's catalogue", () => {
  it("holds the runtime's scene_affine_dispatch keys, from its config dataclasses", () => {
    expect(CONFIG_CATALOG.source.paths).toContain('src/runtime/alpasim_runtime/config.py');
    for (const key of [
      'enabled',
      'cache_refresh_interval_s',
      'max_renderers_per_scene',
      'max_scenes_per_renderer',
    ])
      expect(CONFIG_CATALOG.keys).toContain(`runtime.scene_affine_dispatch.${key}`);
    expect(overrideProblem('runtime.scene_affine_dispatch.enabled=true')).toBeUndefined();
    expect(overrideProblem('runtime.scene_affine_dispatch.max_renderer_per_scene=2')?.message).toContain(
      'did you mean `runtime.scene_affine_dispatch.max_renderers_per_scene`',
    );
  });

  it('holds the bundled plugin driver transfuser, marked as the plugin it comes from', () => {
    expect(CONFIG_CATALOG.groups.driver?.options.transfuser).toMatchObject({ plugin: 'transfuser' });
    expect(overrideProblem('driver=transfuser')).toBeUndefined();
  });
});

describe('driver= outside the catalogue', () => {
  it('is noted by init like any unknown value, a near miss with its "did you mean"', () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-driver-'));
    const own = initExperiment(`sbatch ${SCRIPT} deploy=ord topology=1gpu driver=mydriver`, dir, {
      date: '20260101',
    });
    expect(own.notes.join('\n')).toContain(
      "kept driver=mydriver: `driver=mydriver`: AlpaSim's public configs have no driver option `mydriver` (an AlpaSim plugin may provide it: check the name)",
    );
    const known = initExperiment(`sbatch ${SCRIPT} deploy=ord topology=1gpu driver=transfuser`, dir, {
      date: '20260102',
    });
    expect(known.notes.join('\n')).not.toContain('driver');
    // a near miss is named, not refused: the command ran with that driver
    const near = initExperiment(`sbatch ${SCRIPT} deploy=ord topology=1gpu driver=vavm`, dir, {
      date: '20260103',
    });
    expect(near.notes.join('\n')).toContain('did you mean `vavam`');
  });

  it('is a warning at fixed_inputs.driver when validate reads experiment.yaml', async () => {
    const experiment = `${CORPUS_EXPERIMENT}/experiment.yaml`;
    const text = ((await corpusSource().read(experiment)) as string).replace(
      'driver: vavam',
      'driver: mydriver',
    );
    const report = await validateFiles([experiment], {
      files: corpusSource({ [experiment]: text }),
      clustersFile: 'clusters.yaml',
    });
    const warning = report.files[0]?.warnings.find((w) => w.keyPath === 'fixed_inputs.driver');
    expect(warning).toMatchObject({ rule: 'override-unknown', severity: 'warning', line: 6 });
  });
});
