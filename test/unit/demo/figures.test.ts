// scripts/demo-figures.mjs: the figures docs/demo.md prints come from the demo's experiment record (the
// monitor's decided change, the baseline's and the best candidate's s/rollout), with median and range.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs module without types
import * as figures from '../../../scripts/demo-figures.mjs';

function demoOut(baseline: number, best: number, change: number | null): string {
  const dir = mkdtempSync(join(tmpdir(), 'demo-figures-'));
  mkdirSync(join(dir, 'experiments'));
  const record = {
    current_best: { topology: 'model', stabilized_seconds_per_rollout_full_run: best },
    runs: [
      { name: 'baseline', parent: null, verdict: { value: { value: baseline } } },
      {
        name: 'model',
        parent: 'baseline',
        monitor_decision:
          change === null
            ? null
            : {
                relative_change: { value: change, low: -0.3, high: -0.1 },
                decided_at_minutes: 9,
              },
      },
    ],
  };
  writeFileSync(join(dir, 'experiments/x.json'), JSON.stringify(record));
  return dir;
}

describe('demo figures', () => {
  it("reads the monitor's decided change, else the ratio of the two values", () => {
    expect(figures.figuresOf(demoOut(10, 8, -0.21))).toEqual({
      baseline: 10,
      best: 8,
      bestName: 'model',
      change: -0.21,
      interval: { low: -0.3, high: -0.1 },
      decidedAt: 9,
    });
    expect(figures.figuresOf(demoOut(10, 9, null)).change).toBeCloseTo(-0.1);
  });

  it('prints each run and the median and range', () => {
    const runs = [
      { figures: { baseline: 10.8, best: 8.4, bestName: 'model', change: -0.223 }, wallSeconds: 140 },
      { figures: { baseline: 10.7, best: 8.3, bestName: 'model', change: -0.214 }, wallSeconds: 150 },
      {
        figures: {
          baseline: 10.9,
          best: 9.9,
          bestName: 'scale-driver',
          change: -0.09,
          interval: { low: -0.15, high: -0.03 },
          decidedAt: 7,
        },
        wallSeconds: 160,
      },
    ];
    const text = figures.summarise(runs);
    expect(text).toContain(
      '| 3 | 160 s | 10.90 | 9.90 (scale-driver) | −9.0% | −15.0% to −3.0% | run-minute 7 |',
    );
    expect(text).toContain(
      'median −21.4%, range −22.3% to −9.0% over 3 run(s); wall time median 150 s, range 140–160 s',
    );
  });
});
