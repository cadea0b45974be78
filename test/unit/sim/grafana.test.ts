// The Grafana files, validated as files (Grafana is not installed here): provisioning YAML, the datasource uid
// every panel uses, the run variables, and only metric names the twin, AlpaSim or the recording rules define.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { GRAFANA_DASHBOARD, RAW_METRICS, RECORDING_RULES } from '../../../src/catalog/alpasim.js';
import { root } from './helpers.js';

const g = join(root, 'telemetry/grafana');
const rules = readFileSync(join(root, 'telemetry/prometheus/alpasim.rules.yml'), 'utf8');
const known = new Set<string>([
  ...Object.values(RAW_METRICS),
  ...Object.values(RECORDING_RULES),
  ...[...rules.matchAll(/record: (\S+)/g)].map((m) => m[1]!),
  'up',
]);
const FUNCS = new Set([
  'sum',
  'max',
  'min',
  'avg',
  'count',
  'by',
  'rate',
  'increase',
  'histogram_quantile',
  'label_values',
  'on',
  'and',
  'or',
  'without',
]);

function metricNames(expr: string): string[] {
  const body = expr.startsWith('label_values(') ? expr.replace(/,\s*[A-Za-z_]+\s*\)\s*$/, ')') : expr;
  const noStrings = body
    .replace(/"[^"]*"/g, '""')
    .replace(/\{[^}]*\}/g, '{}')
    .replace(/\[[^\]]*\]/g, '');
  const names = [...noStrings.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)].map((m) => m[0]);
  // identifiers inside by (...) are labels, not metrics
  const labels = new Set(
    [...noStrings.matchAll(/by \(([^)]*)\)/g)].flatMap((m) => m[1]!.split(',').map((s) => s.trim())),
  );
  return names.filter((n) => !FUNCS.has(n) && !labels.has(n) && !/^\d/.test(n));
}

describe('Grafana provisioning', () => {
  const ds = parse(readFileSync(join(g, 'provisioning/datasources/prometheus.yaml'), 'utf8'));
  const providers = parse(readFileSync(join(g, 'provisioning/dashboards/alpasim.yaml'), 'utf8'));
  const dash = JSON.parse(readFileSync(join(g, 'dashboards/alpasim-runtime.json'), 'utf8'));

  it('provisions one Prometheus datasource and a file dashboard provider', () => {
    expect(ds.apiVersion).toBe(1);
    expect(ds.datasources).toHaveLength(1);
    expect(ds.datasources[0]).toMatchObject({
      type: 'prometheus',
      uid: 'topo-prometheus',
      url: `$${'{'}TOPO_PROMETHEUS_URL}`,
    });
    expect(providers.providers[0]).toMatchObject({
      type: 'file',
      options: { path: `$${'{'}TOPO_GRAFANA_DASHBOARDS}` },
    });
  });

  it('is the AlpaSim Runtime dashboard with run_uuid and run_name variables', () => {
    expect(dash.uid).toBe(GRAFANA_DASHBOARD.uid);
    expect(dash.title).toBe(GRAFANA_DASHBOARD.title);
    const vars = dash.templating.list.map((v: { name: string }) => v.name);
    expect(vars).toEqual(expect.arrayContaining(['run_uuid', 'run_name']));
  });

  it('uses the provisioned datasource and known metric names in every panel query', () => {
    const uid = ds.datasources[0].uid;
    expect(dash.panels.length).toBeGreaterThan(8);
    for (const panel of dash.panels) {
      expect(panel.datasource.uid, panel.title).toBe(uid);
      expect(panel.targets.length, panel.title).toBeGreaterThan(0);
      for (const t of panel.targets) {
        expect(t.datasource.uid).toBe(uid);
        expect(t.expr, panel.title).toContain('run_uuid=~"$run_uuid",run_name=~"$run_name"');
        for (const name of metricNames(t.expr))
          expect(known.has(name), `${panel.title}: unknown metric ${name}`).toBe(true);
      }
    }
    for (const v of dash.templating.list) {
      expect(v.datasource.uid).toBe(uid);
      for (const name of metricNames(v.query.query))
        expect(known.has(name), `variable ${v.name}: ${name}`).toBe(true);
    }
  });

  it('puts the objective first', () => {
    expect(dash.panels[0].targets[0].expr).toContain(RECORDING_RULES.secondsPerRolloutAvg);
  });
});
