// The validate, render and init commands through the CLI dispatcher, as a user runs them.
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
      'keyPath',
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
      expect(t.out()).toBe('');
      expect(t.err()).toContain(
        'topology-opt-vavam-test-20260101/renderer-replicas.yaml:6:31: error [renderer-replicas]',
      );
      expect(t.err()).toContain('not rendered');
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
      expect(t.err()).toContain('[gpu-index]');
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

  it('names only the presets that exist when one is missing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-cli-'));
    try {
      mkdirSync(join(dir, 'topologies/presets'), { recursive: true });
      cpSync(join(REPO, 'topologies/presets/2gpu.yaml'), join(dir, 'topologies/presets/2gpu.yaml'));
      cpSync(join(REPO, 'topologies/clusters.yaml'), join(dir, 'topologies/clusters.yaml'));
      const t = io(dir);
      const cmd = 'sbatch submit.sh deploy=ord topology=8gpu_12rollouts driver=vavam';
      expect(await main(['init', '--command', cmd], t.handle)).toBe(2);
      expect(t.err()).toContain('topology=8gpu_12rollouts: no such preset');
      expect(t.err()).toContain('available there: 2gpu)');
      expect(t.err().split('8gpu_12rollouts').length).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
