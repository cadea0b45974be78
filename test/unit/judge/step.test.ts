// The step a run is read at (issue 39): one run-minute at most, the width of the start cohorts the
// decisions compare. `topo analyze --step 5` at the twin's 60x was accepted silently and read a pair
// 24% apart as 10.8% ± 0.6% over 49 cohorts at "mean start age 0 min"; the record action's
// re-observation read twin runs at 5 s, the same 5 run-minutes a sample.
import { describe, expect, it } from 'vitest';
import { coarseStep, defaultStepSeconds } from '../../../src/judge/read.js';
import type { PrometheusClient } from '../../../src/telemetry/prometheus.js';
import type { Experiment } from '../../../src/types/generated/experiment.js';
import { observeAgain } from '../../../src/usecases/record.js';
import { runTopo } from '../../support/cli.js';

describe('the step a run is read at', () => {
  it('defaults to the scrape interval, or one run-minute when that is shorter', () => {
    expect(defaultStepSeconds(1)).toBe(5);
    expect(defaultStepSeconds(60)).toBe(1);
    expect(defaultStepSeconds(120)).toBe(0.5);
  });

  it('refuses a step coarser than one run-minute, saying what is wrong and what would do', () => {
    expect(coarseStep(1, 60)).toBeNull();
    expect(coarseStep(60, 1)).toBeNull();
    expect(coarseStep(5, 60)).toBe(
      "--step 5 at time scale 60 is one sample every 5 run-minutes, too coarse: the decision's start cohorts are 1 run-minute wide and need a sample at least every run-minute; give --step 1 or less (60 ÷ the time scale), or leave it out (default 1)",
    );
    expect(coarseStep(2, 60)).toMatch(/every 2 run-minutes, too coarse/);
  });

  it('topo analyze (and every command with --step) refuses it before asking any service (exit 2)', async () => {
    const base = ['--prometheus', 'http://127.0.0.1:1', '--time-scale', '60', '--step', '5'];
    const analyze = await runTopo(['analyze', 'run-a', '--against', 'run-b', ...base], process.cwd());
    expect(analyze.code).toBe(2);
    expect(analyze.stderr).toMatch(/--step 5 at time scale 60 is one sample every 5 run-minutes, too coarse/);
    const fine = await runTopo(['analyze', 'run-a', ...base.slice(0, -2), '--step', '1'], process.cwd());
    expect(fine.code).toBe(3); // goes on to ask Prometheus, which is unreachable
  });

  it("the record's re-observation reads a twin run at one run-minute a sample", async () => {
    const steps: number[] = [];
    const prometheus: PrometheusClient = {
      baseUrl: 'http://fake',
      instant: async () => ({ resultType: 'vector', series: [], empty: true, nonFinite: 0, warnings: [] }),
      range: async (_q, _s, _e, step) => {
        steps.push(step);
        return { resultType: 'matrix', series: [], empty: true, nonFinite: 0, warnings: [] };
      },
    };
    const experiment = { experiment_id: 'x', fixed_inputs: {} } as unknown as Experiment;
    await observeAgain(prometheus, 'topo-x-baseline-0123abcd', experiment, {
      timeScale: 60,
      nowTs: 1_800_000_000,
    });
    expect(steps.length).toBeGreaterThan(0);
    expect(new Set(steps)).toEqual(new Set([1]));
  });
});
