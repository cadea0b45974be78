// The AlpaSim catalogues: the committed files are what the generator wrote from the pinned commit (its
// manifest), and the project's rules equal AlpaSim's record for record.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  ALPASIM_COMMIT,
  CONFIG_CATALOG,
  METRIC_CATALOG,
  normaliseExpr,
  RULE_CATALOG,
} from '../../../src/catalog/facts.js';

const root = join(import.meta.dirname, '../../..');

describe('AlpaSim catalogues', () => {
  it('record the pinned commit', () => {
    expect(ALPASIM_COMMIT).toBe('3032e0cfabbd9547e83d204d5bb011bb8e0c78e0');
    for (const c of [METRIC_CATALOG, RULE_CATALOG]) expect(c.source.commit).toBe(ALPASIM_COMMIT);
  });

  // The committed catalogues are exactly what the generator wrote: manifest.json (written beside them by the
  // same run) pins the commit and each file's sha256. Re-checking against AlpaSim itself needs its repository:
  // `node scripts/gen-alpasim-catalog.mjs --check --git-dir <clone>` (docs/topology.md).
  it('equal the files the generator wrote at the pinned commit (manifest.json)', () => {
    const dir = join(root, 'src/catalog/generated');
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    expect(manifest.source).toEqual({ repo: 'NVlabs/alpasim', commit: ALPASIM_COMMIT });
    const onDisk = readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'manifest.json');
    expect(Object.keys(manifest.files)).toEqual(onDisk.sort());
    for (const [file, sha] of Object.entries(manifest.files)) {
      const text = readFileSync(join(dir, file), 'utf8');
      expect(createHash('sha256').update(text).digest('hex'), `${file} was edited by hand`).toBe(sha);
      expect(JSON.parse(text).source.commit).toBe(ALPASIM_COMMIT);
    }
  });

  it('the generator refuses clearly without an AlpaSim git directory', () => {
    const gen = join(root, 'scripts/gen-alpasim-catalog.mjs');
    const env = { ...process.env, ALPASIM_GIT_DIR: '' };
    const none = spawnSync('node', [gen, '--check'], { encoding: 'utf8', env });
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('no AlpaSim git directory given');
    expect(none.stderr).toContain('--git-dir');
    const absent = spawnSync('node', [gen, '--check', '--git-dir', '/no/such/alpasim'], {
      encoding: 'utf8',
      env,
    });
    expect(absent.status).toBe(3);
    expect(absent.stderr).toContain('no AlpaSim git directory at /no/such/alpasim');
    const fromEnv = spawnSync('node', [gen, '--check'], {
      encoding: 'utf8',
      env: { ...env, ALPASIM_GIT_DIR: '/no/such/env-alpasim' },
    });
    expect(fromEnv.status).toBe(3);
    expect(fromEnv.stderr).toContain('/no/such/env-alpasim');
  });

  it('the generator names a commit the git directory lacks', () => {
    const dir = mkdtempSync(join(tmpdir(), 'alpasim-empty-'));
    try {
      execFileSync('git', ['init', '-q', '--bare', dir]);
      const r = spawnSync(
        'node',
        [join(root, 'scripts/gen-alpasim-catalog.mjs'), '--check', '--git-dir', dir],
        {
          encoding: 'utf8',
        },
      );
      expect(r.status).toBe(3);
      expect(r.stderr).toContain(`has no commit ${ALPASIM_COMMIT}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('hold the facts the project builds on', () => {
    expect(RULE_CATALOG.rules).toHaveLength(29);
    expect(Object.keys(CONFIG_CATALOG.groups.topology!.options)).toEqual([
      '1gpu',
      '2gpu',
      '8gpu_12rollouts',
      '8gpu_64rollouts',
      '8gpu_no_replicas',
      'daemon',
    ]);
    expect(CONFIG_CATALOG.groups.physics!.options.disabled!.topology).toEqual({
      'runtime.endpoints.physics.skip': true,
    });
    expect(CONFIG_CATALOG.groups.trafficsim!.default).toBe('disabled');
    expect(CONFIG_CATALOG.keys).toContain('services.renderer.environments');
    expect(CONFIG_CATALOG.keys).toContain('runtime.endpoints.renderer.n_concurrent_rollouts');
    const memory = METRIC_CATALOG.metrics.find((m) => m.name === 'namedprocess_namegroup_memory_bytes');
    expect(memory?.label_values).toEqual({ memtype: ['resident'] });
  });
});

describe('recording rules conformance', () => {
  const ours = (file: string) =>
    (
      parse(readFileSync(join(root, 'telemetry/prometheus', file), 'utf8')) as {
        groups: { rules: { record: string; expr: string }[] }[];
      }
    ).groups.flatMap((g) => g.rules);

  it('production rules: record names and expressions equal AlpaSim rules file, in order', () => {
    const rules = ours('alpasim.rules.yml').map((r) => ({ record: r.record, expr: normaliseExpr(r.expr) }));
    expect(rules).toEqual(RULE_CATALOG.rules);
  });

  it('time-scaled rules keep every record name', () => {
    expect(ours('alpasim.rules.timescale-60.yml').map((r) => r.record)).toEqual(
      RULE_CATALOG.rules.map((r) => r.record),
    );
  });

  it('the two CPU rules AlpaSim added are there', () => {
    const names = ours('alpasim.rules.yml').map((r) => r.record);
    expect(names).toContain('alpasim:process_cpu_utilization_percent:per_process:rate30s');
    expect(names).toContain('alpasim:process_cpu_utilization_percent:max_by_group:rate30s');
    expect(
      execFileSync('promtool', ['check', 'rules', join(root, 'telemetry/prometheus/alpasim.rules.yml')], {
        encoding: 'utf8',
      }),
    ).toContain('SUCCESS: 29 rules found');
  });
});
