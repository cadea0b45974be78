import { describe, expect, it } from 'vitest';
import { analyzeOptions } from '../../../src/cli/commands/analyze.js';
import { anyRunSelector, queryCatalog } from '../../../src/telemetry/queries.js';
import { parseAt } from '../../../src/usecases/analyze-run.js';

describe('topo analyze on any run', () => {
  it('any run_name is quoted safely as a PromQL string; control characters are refused', () => {
    expect(anyRunSelector('my_run-2026.01')).toBe('run_name="my_run-2026.01"');
    expect(anyRunSelector('a"b\\c')).toBe('run_name="a\\"b\\\\c"');
    expect(() => anyRunSelector('')).toThrow(/not valid/);
    expect(() => anyRunSelector('a\nb')).toThrow(/printable/);
  });
  it('the throughput queries read the duration histogram per worker and the in-flight gauge', () => {
    const c = queryCatalog(anyRunSelector('r1'));
    expect(c.rolloutDurationSum.fallback).toBe(
      'sum by (run_uuid, run_name, worker_id) (alpasim_rollout_duration_seconds_sum{run_name="r1"})',
    );
    expect(c.rolloutDurationCount.fallback).toMatch(/_count\{run_name="r1"\}/);
    expect(c.activeRollouts.fallback).toBe(
      'sum by (run_uuid, run_name) (alpasim_renderer_active_rollouts{run_name="r1"})',
    );
  });
  it('--at takes an ISO time or unix seconds (or milliseconds); anything else is a usage error', () => {
    expect(parseAt('2026-01-01T12:00:00Z')).toBe(Date.UTC(2026, 0, 1, 12) / 1000);
    expect(parseAt('1767268800')).toBe(1767268800);
    expect(parseAt('1767268800000')).toBe(1767268800);
    expect(parseAt('yesterday')).toBeNull();
    expect(() => analyzeOptions({ at: 'yesterday' })).toThrow(/--at must be an ISO 8601 time/);
    expect(analyzeOptions({ at: '1767268800', 'in-flight': '64' })).toEqual({
      atTs: 1767268800,
      inFlight: 64,
    });
    expect(() => analyzeOptions({ 'in-flight': '0' })).toThrow(/--in-flight/);
  });
});
