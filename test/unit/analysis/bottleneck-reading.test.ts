// Issue 14.7, the analysis part of the skill's reading rules: CPU-bound on the hottest single process (max by
// group), RPC blocking p95 as evidence, and starvation (min queue depth below 3 with a low max) as not enough load.
import { describe, expect, it } from 'vitest';
import { analyseBottleneck } from '../../../src/analysis/bottleneck.js';

describe('bottleneck reading rules', () => {
  it('judges CPU-bound on the hottest process, not the group total', () => {
    // 16 controller replicas at 12% each: 190% in total, but no process is saturated.
    const spread = analyseBottleneck({
      queueMax: { controller: 50 },
      queueMin: { controller: 40 },
      processCpu: { controller: 190 },
      processCpuHottest: { controller: 12 },
    });
    expect(spread.evidence.join(' ')).not.toMatch(/CPU-bound/);
    // One driver process at 98% of a core, the group total only 110%.
    const hot = analyseBottleneck({
      queueMax: { driver: 50 },
      queueMin: { driver: 40 },
      processCpu: { driver: 110 },
      processCpuHottest: { driver: 98 },
    });
    expect(hot.evidence.join(' ')).toMatch(/process group driver: its hottest process at 98% CPU: CPU-bound/);
  });

  it('says when it falls back to the group total', () => {
    const b = analyseBottleneck({
      queueMax: { controller: 50 },
      queueMin: { controller: 40 },
      processCpu: { controller: 180 },
    });
    expect(b.evidence.join(' ')).toMatch(/group total; the per-process maximum is not available/);
  });

  it('reports RPC blocking p95 and marks it high', () => {
    const b = analyseBottleneck({
      queueMax: { renderer: 4, driver: 3 },
      queueMin: { renderer: 3, driver: 3 },
      idleFraction: 0.4,
      rpcBlockingP95: 0.2,
    });
    expect(b.kind).toBe('runtime-bound');
    expect(b.evidence.join(' ')).toMatch(/RPC blocking p95 200 ms \(high/);
  });

  it('raises total capacity when every min stays below 3 with a low max (not only when every max ≤ 1)', () => {
    const b = analyseBottleneck({
      queueMax: { renderer: 4, driver: 3, physics: 2 },
      queueMin: { renderer: 1, driver: 0, physics: 0 },
      inFlight: 64,
    });
    expect(b.kind).toBe('not-enough-load');
    expect(b.evidence.join(' ')).toMatch(/raise total capacity/);
    // A min of 3 or more somewhere: the services do not starve.
    expect(
      analyseBottleneck({
        queueMax: { renderer: 5, driver: 3 },
        queueMin: { renderer: 4, driver: 0 },
        inFlight: 64,
      }).kind,
    ).not.toBe('not-enough-load');
  });
});
