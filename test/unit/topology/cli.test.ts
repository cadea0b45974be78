// The validate, render and init commands through the CLI dispatcher, as a user runs them.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CliIO } from '../../../src/cli/command.js';
import { main } from '../../../src/cli/main.js';
import { CORPUS, REPO } from './helpers.js';

function io(cwd: string, env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const handle: CliIO = { stdout: (t) => out.push(t), stderr: (t) => err.push(t), cwd, env, isTTY: false };
  return { handle, out: () => out.join(''), err: () => err.join('') };
}

const example = 'topologies/topology-opt-vavam-ord-20261202';

describe('topo validate', () => {
  it('exits 0 on the worked example and prints a summary', async () => {
    const t = io(REPO);
    expect(await main(['validate', 'topologies'], t.handle)).toBe(0);
    expect(t.out()).toMatch(/file\(s\) checked: 0 error\(s\), 0 warning\(s\)/);
  });

  it('exits 1 with --json in the documented shape', async () => {
    const t = io(CORPUS);
    const code = await main(
      [
        'validate',
        '--json',
        '--clusters',
        'clusters.yaml',
        'topology-opt-vavam-test-20260101/gpu-index-out-of-range.yaml',
      ],
      t.handle,
    );
    expect(code).toBe(1);
    const json = JSON.parse(t.out());
    expect(Object.keys(json)).toEqual(['schema_version', 'files']);
    expect(json.files[0].path).toBe('topology-opt-vavam-test-20260101/gpu-index-out-of-range.yaml');
    expect(Object.keys(json.files[0])).toEqual(['path', 'errors', 'warnings', 'candidate']);
    expect(Object.keys(json.files[0].errors[0])).toEqual([
      'rule',
      'severity',
      'line',
      'column',
      'key_path',
      'message',
    ]);
  });

  it('prints compiler-style lines with file:line:column', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-cli-'));
    try {
      cpSync(join(REPO, 'topologies'), join(dir, 'topologies'), { recursive: true });
      writeFileSync(
        join(dir, example, 'typo.yaml'),
        'name: typo\nparent: baseline\ntopology:\n  runtime:\n    nr_wrokers: 4\n',
      );
      const t = io(dir);
      expect(await main(['validate', `${example}/typo.yaml`], t.handle)).toBe(1);
      expect(t.out()).toContain(`${example}/typo.yaml:5:5: error [unknown-key] topology.runtime.nr_wrokers:`);
      expect(t.out()).toContain('did you mean `nr_workers`?');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes the clusters file from TOPO_CLUSTERS_FILE', async () => {
    const t = io(CORPUS, { TOPO_CLUSTERS_FILE: 'clusters/ssh-without-host-key/clusters.yaml' });
    expect(
      await main(['validate', '--json', 'topology-opt-vavam-test-20260101/good-split.yaml'], t.handle),
    ).toBe(1);
    expect(JSON.parse(t.out()).files[0].errors[0].rule).toBe('clusters-invalid');
  });

  it('exits 2 on usage errors', async () => {
    expect(await main(['validate'], io(REPO).handle)).toBe(2);
    expect(await main(['validate', 'no/such/path'], io(REPO).handle)).toBe(2);
    expect(await main(['validate', '--bogus', 'topologies'], io(REPO).handle)).toBe(2);
  });
});

describe('topo render', () => {
  it('prints the argv as JSON and a shell line for people', async () => {
    const t = io(REPO);
    expect(await main(['render', '--json', `${example}/more-workers.yaml`], t.handle)).toBe(0);
    const { schema_version, argv } = JSON.parse(t.out());
    expect(schema_version).toBe(1);
    expect(argv[0]).toBe('sbatch');
    expect(argv).toContain('runtime.nr_workers=16');
    const h = io(REPO);
    expect(await main(['render', `${example}/more-workers.yaml`], h.handle)).toBe(0);
    expect(h.out()).toMatch(
      /^# job topo-topology-opt-vavam-ord-20261202-more-workers-[0-9a-f]{8}\nsbatch --parsable /,
    );
  });

  it('refuses to render a candidate with errors and says why', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-cli-'));
    try {
      // The corpus with the shipped presets beside it, as a user's topologies/ folder.
      cpSync(CORPUS, dir, { recursive: true });
      cpSync(join(REPO, 'topologies/presets'), join(dir, 'presets'), { recursive: true });
      const t = io(dir);
      const code = await main(
        ['render', 'topology-opt-vavam-test-20260101/renderer-replicas.yaml'],
        t.handle,
      );
      expect(code).toBe(1);
      // the errors are the findings (stdout); why nothing was rendered is the diagnostic (stderr)
      expect(t.out()).toContain(
        'topology-opt-vavam-test-20260101/renderer-replicas.yaml:6:31: error [renderer-replicas]',
      );
      expect(t.err()).toContain('not rendered');
      expect(t.err()).not.toContain('[renderer-replicas]');
      const ok = io(dir);
      expect(
        await main(['render', '--json', 'topology-opt-vavam-test-20260101/good-split.yaml'], ok.handle),
      ).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--cluster picks another cluster of the clusters file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-cli-'));
    try {
      cpSync(join(REPO, 'topologies'), join(dir, 'topologies'), { recursive: true });
      writeFileSync(
        join(dir, 'clusters.yaml'),
        'clusters:\n  small:\n    transport: local\n    alpasim_checkout: /x\n    submit_script: s.sh\n    file_sd: /f\n    prometheus_url: http://p\n    gpus_per_node: 4\n    gpu_memory_gib: 80\n    cpus_per_node: 64\n    slurm: { exclusive: false }\n',
      );
      const t = io(dir);
      const code = await main(
        ['render', '--clusters', 'clusters.yaml', '--cluster', 'small', `${example}/baseline.yaml`],
        t.handle,
      );
      // The 8-GPU preset does not fit a 4-GPU node.
      expect(code).toBe(1);
      expect(t.out()).toContain('[gpu-index]');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('topo init', () => {
  it('creates an experiment from a command and refuses one without driver', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-cli-'));
    try {
      cpSync(join(REPO, 'topologies/presets'), join(dir, 'topologies/presets'), { recursive: true });
      cpSync(join(REPO, 'topologies/clusters.yaml'), join(dir, 'topologies/clusters.yaml'));
      const t = io(dir);
      const code = await main(
        [
          'init',
          '--command',
          'sbatch submit.sh deploy=ord topology=2gpu driver=vavam',
          '--date',
          '20260505',
          '--cluster',
          'ord',
        ],
        t.handle,
      );
      expect(code).toBe(0);
      expect(t.out()).toContain('created experiment topology-opt-vavam-ord-20260505');
      const bad = io(dir);
      expect(await main(['init', '--command', 'sbatch submit.sh deploy=ord topology=2gpu'], bad.handle)).toBe(
        2,
      );
      expect(bad.err()).toContain('missing `driver=…`');
      expect(await main(['init'], io(dir).handle)).toBe(2);
      expect(await main(['init', '--command', 'x', '--date', '2026-05-05'], io(dir).handle)).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a cluster clusters.yaml does not define, before writing anything', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-cli-'));
    try {
      cpSync(join(REPO, 'topologies/presets'), join(dir, 'topologies/presets'), { recursive: true });
      cpSync(join(REPO, 'topologies/clusters.yaml'), join(dir, 'topologies/clusters.yaml'));
      const t = io(dir);
      const cmd = 'sbatch submit.sh deploy=dfw topology=2gpu driver=vavam';
      expect(await main(['init', '--command', cmd, '--date', '20260505'], t.handle)).toBe(2);
      expect(t.err()).toContain('cluster `dfw` is not defined in');
      expect(t.err()).toContain('(defined: ord)');
      expect(existsSync(join(dir, 'topologies/topology-opt-vavam-dfw-20260505'))).toBe(false);
      const none = io(dir);
      expect(
        await main(['init', '--command', cmd, '--clusters', 'nowhere.yaml', '--cluster', 'ord'], none.handle),
      ).toBe(2);
      expect(none.err()).toContain('topo setup');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names where it looked and the presets there when one is missing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-cli-'));
    try {
      mkdirSync(join(dir, 'topologies/presets'), { recursive: true });
      cpSync(join(REPO, 'topologies/presets/2gpu.yaml'), join(dir, 'topologies/presets/mine.yaml'));
      cpSync(join(REPO, 'topologies/clusters.yaml'), join(dir, 'topologies/clusters.yaml'));
      const t = io(dir);
      const cmd = 'sbatch submit.sh deploy=ord topology=4gpu driver=vavam';
      expect(await main(['init', '--command', cmd], t.handle)).toBe(2);
      expect(t.err()).toContain(
        "topology=4gpu: no preset `4gpu` in the repository's topologies/presets/, the presets shipped with alpasim-topo",
      );
      expect(t.err()).toContain(
        '(there: 1gpu, 2gpu, 8gpu_12rollouts, 8gpu_64rollouts, 8gpu_no_replicas, mine)',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('topo init in a repository written by topo setup', () => {
  const cmd =
    'sbatch --account=av_sim --partition=gpu --gpus-per-node=8 src/tools/run-on-slurm/submit.sh deploy=ord topology=8gpu_64rollouts driver=vavam';

  function repo(): string {
    const dir = mkdtempSync(join(tmpdir(), 'topo-init-'));
    mkdirSync(join(dir, 'topologies'));
    cpSync(join(REPO, 'topologies/clusters.yaml'), join(dir, 'topologies/clusters.yaml'));
    return dir;
  }

  it('finds the shipped preset without a presets folder, and validates what it wrote', async () => {
    const dir = repo();
    const t = io(dir);
    expect(await main(['init', '--command', cmd, '--date', '20260505'], t.handle)).toBe(0);
    expect(t.out()).not.toContain('note: base preset');
    const v = io(dir);
    expect(await main(['validate', 'topologies'], v.handle)).toBe(0);
    expect(v.out()).toContain('0 error(s)');
  });

  it("the repository's own preset overrides the shipped one by name, and says so; TOPO_PRESETS_DIR before both", async () => {
    const dir = repo();
    mkdirSync(join(dir, 'topologies/presets'));
    cpSync(
      join(REPO, 'topologies/presets/8gpu_12rollouts.yaml'),
      join(dir, 'topologies/presets/8gpu_64rollouts.yaml'),
    );
    const t = io(dir);
    expect(await main(['init', '--command', cmd, '--date', '20260505'], t.handle)).toBe(0);
    expect(t.out()).toContain(
      "note: base preset 8gpu_64rollouts: the repository's own topologies/presets/8gpu_64rollouts.yaml, instead of the one shipped with alpasim-topo",
    );
    const v = io(dir);
    expect(await main(['validate', 'topologies'], v.handle)).toBe(0);
    expect(v.out()).toContain("base preset 8gpu_64rollouts is the repository's own");
    const json = io(dir);
    await main(
      ['validate', '--json', 'topologies/topology-opt-vavam-ord-20260505/baseline.yaml'],
      json.handle,
    );
    expect(JSON.parse(json.out()).files[0].candidate.base_preset).toEqual({
      name: '8gpu_64rollouts',
      origin: 'repository',
      overrides_shipped: true,
    });
    mkdirSync(join(dir, 'override'));
    cpSync(join(REPO, 'topologies/presets/1gpu.yaml'), join(dir, 'override/8gpu_64rollouts.yaml'));
    const o = io(dir, { TOPO_PRESETS_DIR: 'override' });
    expect(await main(['init', '--command', cmd, '--date', '20260506'], o.handle)).toBe(0);
    expect(o.out()).toContain('override/8gpu_64rollouts.yaml (TOPO_PRESETS_DIR, instead of the shipped one)');
  });

  it('--force rewrites the record with the experiment, or refuses when the record holds runs', async () => {
    const dir = repo();
    const run = (extra: string[]) =>
      main(['init', '--command', cmd, '--date', '20260505', ...extra], io(dir).handle);
    expect(await run([])).toBe(0);
    const record = join(dir, 'experiments/topology-opt-vavam-ord-20260505.json');
    const again = io(dir);
    expect(await main(['init', '--command', cmd, '--date', '20260505'], again.handle)).toBe(2);
    expect(again.err()).toContain('pass --force');
    // A forced init with another command rewrites experiment.yaml AND the record: they agree.
    const other = cmd.replace('--account=av_sim', '--account=other');
    expect(await main(['init', '--command', other, '--date', '20260505', '--force'], io(dir).handle)).toBe(0);
    const json = JSON.parse(readFileSync(record, 'utf8'));
    expect(json.fixed_inputs.slurm.account).toBe('other');
    // Once the record holds runs, --force refuses and writes nothing.
    json.runs = [{ name: 'baseline' }];
    writeFileSync(record, JSON.stringify(json));
    const experimentFile = join(dir, 'topologies/topology-opt-vavam-ord-20260505/experiment.yaml');
    const before = readFileSync(experimentFile, 'utf8');
    const refused = io(dir);
    expect(await main(['init', '--command', cmd, '--date', '20260505', '--force'], refused.handle)).toBe(2);
    expect(refused.err()).toContain('holds 1 recorded run(s)');
    expect(readFileSync(experimentFile, 'utf8')).toBe(before);
    expect(JSON.parse(readFileSync(record, 'utf8')).runs).toHaveLength(1);
  });

  it.each([
    'uv run alpasim_wizard deploy=ord topology=8gpu_64rollouts driver=vavam wizard.log_dir=./out',
    'uv run --project src/wizard alpasim_wizard deploy=ord topology=8gpu_64rollouts driver=vavam',
    'uv run python -m alpasim_wizard deploy=ord topology=8gpu_64rollouts driver=vavam',
  ])('a wizard-style command (%s) is answered with the forms init accepts', async (wizard) => {
    const dir = repo();
    const t = io(dir);
    expect(await main(['init', '--command', wizard], t.handle)).toBe(2);
    expect(t.err()).toContain("starts AlpaSim's wizard directly");
    expect(t.err()).toContain('topo init accepts: (1) sbatch [sbatch options]');
    expect(t.err()).toContain(
      'this run on Slurm is: sbatch src/tools/run-on-slurm/submit.sh deploy=ord topology=8gpu_64rollouts driver=vavam',
    );
    expect(t.err()).not.toContain('wizard.log_dir=./out\n');
  });
});
