// Conformance: the twin's exposition speaks AlpaSim exactly. Every metric family it serves (runtime workers,
// process exporter, DCGM) has the name, type and label keys of the catalogue generated from AlpaSim's
// telemetry source at the pinned commit; nothing is invented and nothing the workflow reads is missing.
import { describe, expect, it } from 'vitest';
import { RAW_METRICS } from '../../../src/catalog/alpasim.js';
import { METRIC_CATALOG } from '../../../src/catalog/facts.js';
import { Simulation } from '../../../src/sim/engine.js';
import { createRegistries } from '../../../src/sim/metrics.js';
import { METHODS } from '../../../src/sim/spec.js';
import { profile, topology } from './helpers.js';

interface Family {
  type: string;
  labels: Set<string>;
  values: Map<string, Set<string>>;
}

/** Families of a text exposition: TYPE lines, and the label keys (and values) of their samples. */
function families(text: string): Map<string, Family> {
  const out = new Map<string, Family>();
  for (const line of text.split('\n')) {
    const t = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (t) out.set(t[1]!, { type: t[2]!, labels: new Set(), values: new Map() });
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*?)(?:_bucket|_sum|_count)?(?:\{(.*)\})? /.exec(line);
    const fam = m && (out.get(m[1]!) ?? out.get(line.split(/[{ ]/)[0]!));
    if (!m || !fam) throw new Error(`sample without a TYPE: ${line}`);
    for (const [, k, v] of (m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)) {
      if (k === 'le') continue;
      fam.labels.add(k!);
      if (!fam.values.has(k!)) fam.values.set(k!, new Set());
      fam.values.get(k!)!.add(v!);
    }
  }
  return out;
}

const DCGM_EXPORTER_LABELS = ['gpu', 'UUID', 'device', 'modelName', 'Hostname'];

describe('twin conformance with AlpaSim telemetry', async () => {
  const sim = new Simulation(topology('8gpu_64rollouts'), profile('twin-balanced'), { totalRollouts: 5000 });
  const regs = createRegistries(sim.state, { hostname: 'node1' });
  regs.update(sim.advanceTo(900));
  const runtime = families(await regs.workers[0]!.metrics());
  const processes = families(await regs.process.metrics());
  const dcgm = families(await regs.dcgm.metrics());
  const node = families(await regs.node.metrics());
  const catalogue = (source: string) => METRIC_CATALOG.metrics.filter((m) => m.source === source);

  const summary = (fams: Map<string, Family>) =>
    [...fams]
      .map(([name, f]) => ({ name, type: f.type, labels: [...f.labels].sort() }))
      .sort((a, b) => a.name.localeCompare(b.name));
  const expected = (source: string) =>
    catalogue(source).map((m) => ({ name: m.name, type: m.type, labels: m.labels }));

  it('runtime workers serve exactly the runtime metrics of AlpaSim', () => {
    expect(summary(runtime)).toEqual(expected('runtime'));
  });

  it('the process exporter serves exactly its metrics, with AlpaSim label values', () => {
    expect(summary(processes)).toEqual(expected('process-exporter'));
    for (const m of catalogue('process-exporter'))
      for (const [k, vals] of Object.entries(m.label_values ?? {}))
        expect([...processes.get(m.name)!.values.get(k)!]).toEqual(vals);
  });

  it('DCGM serves exactly the counters of AlpaSim dcgm-counters.csv, with the exporter labels', () => {
    expect([...dcgm.keys()].sort()).toEqual(catalogue('dcgm').map((m) => m.name));
    for (const [, f] of dcgm) {
      expect(f.type).toBe('gauge');
      expect([...f.labels].sort()).toEqual([...DCGM_EXPORTER_LABELS].sort());
    }
  });

  it('serves every raw metric the workflow reads, and nothing else from the node exporter', () => {
    const all = new Set([...runtime.keys(), ...processes.keys(), ...dcgm.keys(), ...node.keys()]);
    for (const name of Object.values(RAW_METRICS)) expect(all, name).toContain(name);
    const nodeNames = [RAW_METRICS.hostCpu, RAW_METRICS.hostMemAvailable, RAW_METRICS.hostMemTotal];
    expect([...node.keys()].sort()).toEqual([...nodeNames].sort());
  });

  it('uses the RPC methods AlpaSim uses: batch_render_rgb and simulate', () => {
    const methods = runtime.get('alpasim_rpc_duration_seconds')!.values.get('method')!;
    expect(methods).toContain('batch_render_rgb');
    expect(methods).not.toContain('render_rgb');
    expect(METHODS.trafficsim.map((m) => m.method)).toEqual(['simulate']);
  });
});
