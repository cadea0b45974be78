import { describe, expect, it } from 'vitest';
import { RECORDING_RULES } from '../../../src/catalog/alpasim.js';
import type { PrometheusClient, PromResult } from '../../../src/telemetry/prometheus.js';
import {
  experimentSelector,
  fetchTelemetry,
  QUANTITIES,
  queryCatalog,
  runSelector,
} from '../../../src/telemetry/queries.js';

const empty: PromResult = { resultType: 'matrix', series: [], empty: true, nonFinite: 0, warnings: [] };

function fakeClient(answer: (q: string) => PromResult): PrometheusClient & { calls: string[] } {
  const calls: string[] = [];
  return {
    baseUrl: 'http://fake',
    calls,
    async instant(q) {
      calls.push(q);
      return answer(q);
    },
    async range(q) {
      calls.push(q);
      return answer(q);
    },
  };
}

describe('selectors', () => {
  it('selects every run of an experiment, dots escaped for the regex', () => {
    expect(experimentSelector('topology-opt-vam-local-20260101')).toBe(
      'run_name=~"topo-topology-opt-vam-local-20260101-.*"',
    );
    expect(experimentSelector('topology-opt-a.b-x-20260101')).toBe(
      'run_name=~"topo-topology-opt-a\\\\.b-x-20260101-.*"',
    );
  });
  it('refuses ids and run names that could inject PromQL', () => {
    expect(() => experimentSelector('x"} or up{a="')).toThrow(/experiment id .* is not valid/);
    expect(() => runSelector('topo-x-y-zz')).toThrow(
      /run name .* is not valid: expected topo-<experiment>-<candidate>-<hash8>/,
    );
    expect(runSelector('topo-exp-cand-0123abcd')).toBe('run_name="topo-exp-cand-0123abcd"');
  });
});

describe('query catalog', () => {
  const sel = experimentSelector('topology-opt-vam-local-20260101');
  const cat = queryCatalog(sel);
  it('has a rule query (where AlpaSim ships one) and a raw fallback for every quantity, all selecting the experiment', () => {
    for (const q of QUANTITIES) {
      expect(cat[q].fallback).toContain(sel);
      if (cat[q].rule) expect(cat[q].rule).toContain(sel);
    }
    expect(cat.secondsPerRolloutAvg.rule).toBe(`${RECORDING_RULES.secondsPerRolloutAvg}{${sel}}`);
    expect(cat.queueDepthMax.fallback).toMatch(/max by \(run_uuid, run_name, service\)/);
  });
  it('shrinks raw windows by the time scale (never under four scrapes)', () => {
    expect(queryCatalog(sel, { timeScale: 1 }).secondsPerRolloutRate5m.fallback).toContain('[300s]');
    expect(queryCatalog(sel, { timeScale: 60, scrapeSeconds: 1 }).secondsPerRolloutRate5m.fallback).toContain(
      '[5s]',
    );
    expect(
      queryCatalog(sel, { timeScale: 600, scrapeSeconds: 1 }).secondsPerRolloutRate5m.fallback,
    ).toContain('[4s]');
  });
});

describe('fetchTelemetry', () => {
  const sel = experimentSelector('topology-opt-vam-local-20260101');
  it('one query per quantity when the rules answer, split by run_name', async () => {
    const client = fakeClient((q) => ({
      ...empty,
      empty: false,
      series: [
        { labels: { run_name: 'topo-a', q }, points: [[1, 1]] },
        { labels: { run_name: 'topo-b', q }, points: [[1, 2]] },
      ],
    }));
    const t = await fetchTelemetry(client, sel, { start: 0, end: 60, stepSeconds: 5 });
    expect(client.calls).toHaveLength(QUANTITIES.length);
    expect([...t.byRun.keys()].sort()).toEqual(['topo-a', 'topo-b']);
    expect(t.byRun.get('topo-a')?.secondsPerRolloutAvg?.[0]?.points).toEqual([[1, 1]]);
    expect(t.queries.filter((q) => q.source === 'rule').length).toBe(
      QUANTITIES.filter((q) => queryCatalog(sel)[q].rule).length,
    );
  });

  it('falls back to the raw metrics when a rule returns nothing, and reports what stays missing', async () => {
    const client = fakeClient((q) =>
      q.startsWith('alpasim:') || q.includes('DCGM')
        ? empty
        : { ...empty, empty: false, series: [{ labels: { run_name: 'topo-a' }, points: [[1, 1]] }] },
    );
    const t = await fetchTelemetry(client, sel, { start: 0, end: 60, stepSeconds: 5 });
    const avg = t.queries.find((q) => q.quantity === 'secondsPerRolloutAvg');
    expect(avg?.source).toBe('raw');
    expect(avg?.query).toMatch(/^\(max by/);
    expect(t.missing).toEqual([
      'gpuUtil',
      'gpuMemory',
      'gpuMemoryTotal',
      'gpuMemoryPressure',
      'gpuMemoryFree',
    ]);
  });

  it('an HTTP error on one quantity is reported and the others still arrive', async () => {
    const client = fakeClient((q) => {
      if (q.includes('idle')) throw new Error('HTTP 500 for idle');
      return { ...empty, empty: false, series: [{ labels: { run_name: 'topo-a' }, points: [[1, 1]] }] };
    });
    const t = await fetchTelemetry(client, sel, { start: 0, end: 60, stepSeconds: 5 });
    expect(t.errors).toEqual([{ quantity: 'idleFraction', message: 'HTTP 500 for idle' }]);
    expect(t.byRun.get('topo-a')?.rolloutsTotal).toBeDefined();
  });
});
