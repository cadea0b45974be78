// The AlpaSim catalogues: the committed files are what the generator makes from the pinned commit (when the
// mirror is present), and the project's rules equal AlpaSim's record for record.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
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
const mirror = process.env.ALPASIM_GIT_DIR ?? '/work/.mirror/NVlabs+alpasim/repo';

describe('AlpaSim catalogues', () => {
  it('record the pinned commit', () => {
    expect(ALPASIM_COMMIT).toBe('3032e0cfabbd9547e83d204d5bb011bb8e0c78e0');
    for (const c of [METRIC_CATALOG, RULE_CATALOG]) expect(c.source.commit).toBe(ALPASIM_COMMIT);
  });

  it.runIf(existsSync(mirror))('equal what the generator makes from the mirror (--check)', () => {
    const r = spawnSync(
      'node',
      [join(root, 'scripts/gen-alpasim-catalog.mjs'), '--check', '--git-dir', mirror],
      {
        encoding: 'utf8',
      },
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
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
