import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { fileSystemSource } from '../../../src/cli/commands/validate.js';
import { initExperiment } from '../../../src/topology/init.js';
import { parseRunCommand, RunCommandError, splitWords } from '../../../src/topology/run-command.js';
import { validateFiles } from '../../../src/usecases/validate.js';
import { REPO } from './helpers.js';

describe('splitWords', () => {
  it('handles quotes, escapes and line continuations without a shell', () => {
    expect(splitWords(`a 'b c' "d \\"e\\"" f\\ g \\\n h`)).toEqual(['a', 'b c', 'd "e"', 'f g', 'h']);
  });
  it.each(['a; b', 'a | b', 'a && b', 'a > f', 'a $(id)', 'a `id`', 'echo "$HOME"'])(
    'refuses shell syntax: %s',
    (cmd) => {
      expect(() => splitWords(cmd)).toThrow(RunCommandError);
    },
  );
});

describe('parseRunCommand', () => {
  it('parses sbatch options (long, short, separate values) and Hydra overrides', () => {
    const p = parseRunCommand(
      'LOGDIR=/tmp/x sbatch -A acct -p polar,polar3 --gpus-per-node 4 --time=02:00:00 --exclusive --job-name foo -o out.log src/tools/run-on-slurm/submit.sh deploy=ord topology=8gpu_64rollouts driver=vavam +cameras=4cam_1080 runtime.nr_workers=4',
    );
    expect(p.launcher).toBe('sbatch');
    expect(p.env).toEqual({ LOGDIR: '/tmp/x' });
    expect(p.sbatch).toEqual({
      account: 'acct',
      partition: 'polar,polar3',
      gpusPerNode: 4,
      time: '02:00:00',
      exclusive: true,
      ignored: ['--job-name=foo', '-o out.log'],
    });
    expect(p.submitScript).toBe('src/tools/run-on-slurm/submit.sh');
    expect([p.deploy, p.topology, p.driver]).toEqual(['ord', '8gpu_64rollouts', 'vavam']);
    expect(p.overrides).toContain('+cameras=4cam_1080');
  });

  it('accepts bash and a bare script, and --gres=gpu:N', () => {
    expect(parseRunCommand('bash ./submit.sh deploy=a topology=1gpu driver=b').launcher).toBe('bash');
    expect(parseRunCommand('./submit.sh deploy=a topology=1gpu driver=b').launcher).toBe('direct');
    expect(
      parseRunCommand('sbatch --gres=gpu:h100:8 s.sh deploy=a topology=1gpu driver=b').sbatch.gpusPerNode,
    ).toBe(8);
  });

  it.each([
    ['sbatch submit.sh topology=1gpu driver=vavam', /missing `deploy=…`/],
    ['sbatch submit.sh deploy=ord driver=vavam', /missing `topology=…`/],
    ['sbatch submit.sh deploy=ord', /missing `topology=…`, `driver=…`/],
    ['sbatch --account', /needs a value/],
    ['sbatch submit.sh deploy=a topology=b driver=c extra', /unexpected argument `extra`/],
    ['', /empty/],
    ['sbatch --nodes=x s.sh deploy=a topology=b driver=c', /positive whole number/],
  ])('refuses %j naming what is wrong', (cmd, message) => {
    expect(() => parseRunCommand(cmd)).toThrow(message);
  });
});

describe('initExperiment', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const setup = () => {
    dir = mkdtempSync(join(tmpdir(), 'topo-init-'));
    cpSync(join(REPO, 'topologies/presets'), join(dir, 'presets'), { recursive: true });
    cpSync(join(REPO, 'topologies/clusters.yaml'), join(dir, 'clusters.yaml'));
  };

  it('writes experiment.yaml and a fully expanded baseline.yaml that validate cleanly', async () => {
    setup();
    const w = initExperiment(
      'sbatch --account=av_alpamayo_sim --partition=polar --gpus-per-node=8 src/tools/run-on-slurm/submit.sh deploy=ord topology=8gpu_12rollouts driver=alpamayo1_5 scenes.test_suite_id=public_2601 runtime.simulation_config.n_rollouts=2 +cameras=4cam_1080 trafficsim=catk runtime.nr_workers=2 services.driver.gpus=[4,5,6,7] wizard.run_name=x',
      dir,
      { date: '20260301' },
    );
    expect(w.experiment.experiment_id).toBe('topology-opt-alpamayo1_5-ord-20260301');
    const experiment = parse(readFileSync(w.experimentFile, 'utf8'));
    expect(experiment.fixed_inputs).toEqual({
      deploy: 'ord',
      driver: 'alpamayo1_5',
      scenes: 'public_2601',
      rollouts_per_scene: 2,
      cameras: '4cam_1080',
      overrides: ['trafficsim=catk'],
      slurm: { account: 'av_alpamayo_sim', partition: 'polar', gpus_per_node: 8 },
    });
    const baseline = parse(readFileSync(w.baselineFile, 'utf8'));
    expect(baseline.name).toBe('baseline');
    // The preset's values, the command's topology overrides, and AlpaSim's defaults, all written out.
    expect(baseline.topology.runtime.nr_workers).toBe(2);
    expect(baseline.topology.services.renderer.gpus).toEqual([0, 1, 2, 3]);
    expect(baseline.topology.runtime.endpoints.trafficsim.skip).toBe(false);
    expect(baseline.topology.defines.physics_cache_size).toBe(16);
    expect(readFileSync(w.baselineFile, 'utf8')).toContain('gpus: [0, 1, 2, 3]');
    expect(w.notes.join('\n')).toContain('wizard.run_name');

    const report = await validateFiles([w.experimentFile, w.baselineFile], { files: fileSystemSource('/') });
    expect(report.files.flatMap((f) => f.errors)).toEqual([]);
  });

  it('refuses to overwrite, and refuses an unknown preset', () => {
    setup();
    const cmd = 'sbatch s.sh deploy=ord topology=1gpu driver=vavam';
    initExperiment(cmd, dir, { date: '20260301' });
    expect(() => initExperiment(cmd, dir, { date: '20260301' })).toThrow(/already exists/);
    expect(() => initExperiment(cmd, dir, { date: '20260301', force: true })).not.toThrow();
    expect(() => initExperiment('sbatch s.sh deploy=ord topology=99gpu driver=vavam', dir)).toThrow(
      /no preset `99gpu`/,
    );
  });

  it('refuses multi-node runs and bad topology override values', () => {
    setup();
    expect(() => initExperiment('sbatch -N 2 s.sh deploy=ord topology=1gpu driver=vavam', dir)).toThrow(
      /one node/,
    );
    expect(() =>
      initExperiment('sbatch s.sh deploy=ord topology=1gpu driver=vavam runtime.nr_workers=many', dir),
    ).toThrow(/whole number/);
  });
});
