import { describe, expect, it } from 'vitest';
import { detect } from '../../../src/analysis/detector.js';
import type { Sample } from '../../../src/analysis/series.js';
import {
  BALANCED_64,
  PROFILES,
  simulateTrace,
  type TraceProfile,
  truncate,
} from '../../fixtures/traces/synthetic.js';
import { twinTrace } from '../../fixtures/traces/twin.js';

const base: TraceProfile = { ...BALANCED_64, name: 'base' };

/** First run-minute (evaluated every minute) at which the verdict is stable or cyclic, and that verdict. */
function firstStable(profile: TraceProfile, until = 150) {
  const trace = simulateTrace(profile);
  for (let t = 1; t <= until; t++) {
    const v = detect(truncate(trace, t));
    if (v.state === 'stable' || v.state === 'cyclic') return { t, v, trace };
  }
  return { t: undefined, v: undefined, trace };
}

describe('detector on traces with a known final full-run value', () => {
  for (const profile of PROFILES) {
    it(`${profile.name}: reaches a verdict whose projection is within 3% of the run's final value`, () => {
      const { t, v, trace } = firstStable(profile);
      expect(t, 'never stable').toBeDefined();
      const value = v?.value?.value as number;
      expect(Math.abs(value / trace.finalFullRun - 1)).toBeLessThan(0.03);
      // the interval covers the final value or misses by less than 1%
      expect(trace.finalFullRun).toBeGreaterThan((v?.value?.low as number) * 0.99);
      expect(trace.finalFullRun).toBeLessThan((v?.value?.high as number) * 1.01);
    });
  }

  it("beats the seed's rule (the full-run reading at 45 min) on a long congestion", () => {
    const trace = simulateTrace(PROFILES.find((p) => p.name === 'long-congestion') as TraceProfile);
    const at45 = trace.fullRun.filter((p) => p.t <= 45).at(-1)?.v as number;
    const v = detect(truncate(trace, 90));
    const seedError = Math.abs(at45 / trace.finalFullRun - 1);
    const ourError = Math.abs((v.projected_full_run?.value as number) / trace.finalFullRun - 1);
    expect(seedError).toBeGreaterThan(0.2);
    expect(ourError).toBeLessThan(0.02);
  });
});

describe('detector on hand-made series', () => {
  it('no data at all → no-data, never stable', () => {
    expect(detect({ fullRun: [] }).state).toBe('no-data');
    expect(detect({ fullRun: [], completed: [] }).value ?? null).toBeNull();
  });

  it('only NaN values → no-data', () => {
    const nan: Sample[] = Array.from({ length: 600 }, (_, i) => ({ t: i / 12, v: Number.NaN }));
    const v = detect({ fullRun: nan, completed: nan });
    expect(v.state).toBe('no-data');
    expect(v.evidence.join(' ')).toMatch(/NaN/);
  });

  it('early in the run → warming inside the floor', () => {
    const v = detect(truncate(simulateTrace(base), 8));
    expect(v.state).toBe('warming');
    expect(v.value ?? null).toBeNull();
  });

  it('monotone convergence F = 60t / r(t − 4), rollouts derived from elapsed ÷ full-run → stable at the projected value', () => {
    // completions at a steady rate after an initial deficit: N = r·(t − 4) for t > 4
    const r = 20;
    const fullRun: Sample[] = [];
    const elapsed: Sample[] = [];
    for (let t = 5; t <= 120; t += 1 / 12) {
      fullRun.push({ t, v: (60 * t) / (r * (t - 4)) });
      elapsed.push({ t, v: 60 * t });
    }
    const v = detect({ fullRun, elapsed });
    expect(v.state).toBe('stable');
    const finalValue = (60 * 234) / (r * (234 - 4));
    expect(Math.abs((v.value?.value as number) / finalValue - 1)).toBeLessThan(0.005);
    expect(v.evidence.join(' ')).toMatch(/derived from elapsed/);
    // the verdict names the drift it has ruled out (a noiseless steady rate: a small bound)
    const ruled = /no drift steeper than (\d+)%\/h \(one-sided 95% bound/.exec(v.evidence.join(' '));
    expect(ruled, v.evidence.join(' | ')).not.toBeNull();
    expect(Number(ruled?.[1])).toBeLessThanOrEqual(20);
  });

  it('slow drift of the steady rate → not stable, evidence names the drift', () => {
    const trace = simulateTrace({ ...base, jitter: 0.1, driftPerHour: 0.4, seed: 3 });
    expect([60, 75, 90].map((t) => detect(truncate(trace, t)).state)).not.toContain('stable');
    // with a loose interval the drift rule is what holds the verdict back
    const states = [60, 75, 90].map((t) =>
      detect({ ...truncate(trace, t), settings: { max_ci_relative: 0.5 } }),
    );
    expect(states.map((v) => v.state)).not.toContain('stable');
    expect(states.map((v) => v.evidence.join(' ')).join(' ')).toMatch(/drifts/);
  });

  it('cyclic steady state → cyclic with its period and amplitude', () => {
    const trace = simulateTrace({
      ...base,
      jitter: 0.1,
      cycle: { periodMinutes: 8, amplitude: 0.25 },
      seed: 16,
    });
    const v = detect(truncate(trace, 100));
    expect(v.state).toBe('cyclic');
    expect(v.cycle?.period_minutes).toBeGreaterThanOrEqual(7);
    expect(v.cycle?.period_minutes).toBeLessThanOrEqual(9);
    expect(v.cycle?.amplitude_relative).toBeGreaterThan(0.1);
    expect(v.value).not.toBeNull();
  });

  it('crash mid-run: samples stop while the run should be live → unhealthy', () => {
    const trace = simulateTrace({ ...base, crashAtMinutes: 50 });
    const v = detect({ ...truncate(trace, 70), now: 70 });
    expect(v.state).toBe('unhealthy');
    expect(v.evidence.join(' ')).toMatch(/no samples for 20/);
  });

  it('targets gone → unhealthy', () => {
    const v = detect({ ...truncate(simulateTrace(base), 60), targetsUp: false });
    expect(v.state).toBe('unhealthy');
    expect(v.evidence.join(' ')).toMatch(/targets are gone/);
  });

  it('stalled rollout counter → unhealthy', () => {
    const trace = simulateTrace({ ...base, stallAtMinutes: 40 });
    const v = detect(truncate(trace, 60));
    expect(v.state).toBe('unhealthy');
    expect(v.evidence.join(' ')).toMatch(/stopped growing/);
  });

  it('a stall on a fast run is flagged within 5 minutes, not after stall_minutes (10)', () => {
    // 20 rollouts/min of 3.2-minute rollouts: 4 minutes with none is a stall, not a wave
    const trace = simulateTrace({ ...base, stallAtMinutes: 40 });
    expect(detect(truncate(trace, 39)).state).not.toBe('unhealthy');
    const v = detect(truncate(trace, 44.5));
    expect(v.state, v.evidence.join(' | ')).toBe('unhealthy');
    expect(v.evidence.join(' ')).toMatch(/stopped growing: \d+ for the last [34](\.\d)? min/);
  });

  it('the gaps between slow synchronized waves are not a stall', () => {
    // 32 slots of 10.7-minute rollouts started together: early on, nothing finishes for ~10 minutes
    const trace = simulateTrace({ ...base, inFlight: 32, steadySeconds: 20, congestion: 0.5, jitter: 0.03 });
    for (let t = 15; t <= 60; t += 1) {
      const v = detect(truncate(trace, t));
      expect(v.evidence.join(' '), `at ${t}`).not.toMatch(/stopped growing/);
    }
  });

  it('one failed rollout among a slow run’s few is not a failure rate', () => {
    // 2 rollouts/min; one of the last window's 10 failed (10% > 5%, but a single failure)
    const t = Array.from({ length: 721 }, (_, i) => i / 12);
    const completed = t.map((x) => ({ t: x, v: Math.floor(2 * x) }));
    const failed = t.map((x) => ({ t: x, v: x >= 57 ? 1 : 0 }));
    const elapsed = t.map((x) => ({ t: x, v: 60 * x }));
    const fullRun = completed.filter((p) => p.v > 0).map((p) => ({ t: p.t, v: (60 * p.t) / p.v }));
    const v = detect({ fullRun, completed, failed, elapsed });
    expect(v.state).not.toBe('unhealthy');
    // three failures of the window's ten are
    const three = t.map((x) => ({ t: x, v: x >= 59 ? 3 : x >= 58 ? 2 : x >= 57 ? 1 : 0 }));
    expect(detect({ fullRun, completed, failed: three, elapsed }).state).toBe('unhealthy');
  });

  it('failure rate up → unhealthy', () => {
    const trace = simulateTrace({ ...base, failureRate: 0.3, failureFromMinutes: 45 });
    expect(detect(truncate(trace, 40)).state).not.toBe('unhealthy');
    const v = detect(truncate(trace, 60));
    expect(v.state).toBe('unhealthy');
    expect(v.evidence.join(' ')).toMatch(/failed/);
  });

  it('scrape gaps are reported and do not prevent a verdict', () => {
    const trace = simulateTrace({
      ...base,
      gaps: [
        [50, 53],
        [70, 71],
      ],
    });
    const v = detect(truncate(trace, 110));
    expect(['stable', 'cyclic']).toContain(v.state);
    expect(v.evidence.join(' ')).toMatch(/scrape gap 49\.9–53 min/);
    expect(Math.abs((v.value?.value as number) / trace.finalFullRun - 1)).toBeLessThan(0.03);
  });

  it('sprinkled NaN samples are ignored and reported', () => {
    const trace = simulateTrace({ ...base, nanEvery: 7 });
    const v = detect(truncate(trace, 110));
    expect(['stable', 'cyclic']).toContain(v.state);
    expect(v.evidence.join(' ')).toMatch(/NaN/);
  });

  it('projects to the rollout count when the run ends before its wall time', () => {
    const trace = simulateTrace(base);
    const v = detect({ ...truncate(trace, 100), expectedRollouts: 2800 });
    expect(v.evidence.join(' ')).toMatch(/2800 rollouts done/);
    expect(v.run_end_minutes).toBeLessThan(160);
  });

  it("follows the requeued run: AlpaSim's submit.sh requeues 5 minutes before the wall time and resumes", () => {
    const trace = simulateTrace(base);
    const input = { ...truncate(trace, 100), runEndMinutes: 234 };
    // far more rollouts than one 4-hour job makes: the run goes on in requeued jobs
    const v = detect({ ...input, expectedRollouts: 40_000 });
    expect(v.evidence.join(' ')).toMatch(/40000 rollouts done after \d+ requeue\(s\)/);
    expect(v.run_end_minutes).toBeGreaterThan(234);
    // without requeues left it ends at the job's wall time, as before
    const once = detect({ ...input, expectedRollouts: 40_000, maxRequeues: 0 });
    expect(once.run_end_minutes).toBeCloseTo(234, 0);
    expect(once.evidence.join(' ')).toMatch(/job wall time/);
    // more than 20 requeues can make: it ends with the last one
    const cap = detect({ ...input, expectedRollouts: 10_000_000 });
    expect(cap.evidence.join(' ')).toMatch(/the last of 20 requeues/);
    expect(cap.run_end_minutes).toBeCloseTo(21 * (229 + 10) - 10, 0);
  });

  it('thresholds come from the experiment: a tighter interval needs more data', () => {
    const trace = simulateTrace(base);
    const loose = detect({ ...truncate(trace, 90), settings: { max_ci_relative: 0.1 } });
    const tight = detect({ ...truncate(trace, 90), settings: { max_ci_relative: 0.001 } });
    expect(loose.state).toMatch(/stable|cyclic/);
    expect(tight.state).toBe('stabilising');
    expect(tight.evidence.join(' ')).toMatch(/interval/);
  });
});

describe('detector on twin-generated runs (src/sim engine, simulated to their end)', () => {
  const cases = [
    { profile: 'twin-balanced', preset: '8gpu_64rollouts', cyclic: false },
    { profile: 'twin-renderer-bound', preset: '8gpu_64rollouts', cyclic: false },
    { profile: 'twin-driver-bound', preset: '8gpu_12rollouts', cyclic: false },
    { profile: 'twin-cyclic', preset: '8gpu_64rollouts', cyclic: true },
  ];
  for (const c of cases) {
    it(`${c.profile} on ${c.preset}: verdict within 3% of the final full-run value${c.cyclic ? ', reported cyclic' : ''}`, () => {
      const trace = twinTrace({ profile: c.profile, preset: c.preset, seed: 1 });
      let verdict: ReturnType<typeof detect> | undefined;
      for (let t = 20; t <= 150 && !verdict; t += 2) {
        const v = detect(truncate(trace, t));
        if (v.state === 'stable' || v.state === 'cyclic') verdict = v;
      }
      expect(verdict, 'never stable').toBeDefined();
      expect(Math.abs((verdict?.value?.value as number) / trace.finalFullRun - 1)).toBeLessThan(0.03);
      const late = detect(truncate(trace, 120));
      expect(late.state).toBe(c.cyclic ? 'cyclic' : 'stable');
      if (c.cyclic) expect(late.cycle?.period_minutes).toBeCloseTo(10, 0);
    });
  }
});

describe('issue 13: honest intervals, significant cycles only, drift', () => {
  const slowWaves: TraceProfile = {
    name: 'slow-synchronized',
    inFlight: 32,
    steadySeconds: 20, // 10.7-minute rollouts, all started together
    congestion: 0.5,
    congestionMinutes: 10,
    jitter: 0.03,
    seed: 21,
  };

  it('synchronized slow waves: never a cycle, never a zero-width interval, and the interval covers the end', () => {
    const trace = simulateTrace(slowWaves);
    for (let t = 40; t <= 180; t += 10) {
      const v = detect(truncate(trace, t));
      expect(v.state, `at ${t}: ${v.evidence.join(' | ')}`).not.toBe('cyclic');
      expect(v.cycle ?? null).toBeNull();
      const p = v.projected_full_run;
      if (p) expect(p.high - p.low, `zero-width interval at ${t}`).toBeGreaterThan(0);
    }
    const late = detect(truncate(trace, 150));
    expect(late.projected_full_run?.low).toBeLessThanOrEqual(trace.finalFullRun);
    expect(late.projected_full_run?.high).toBeGreaterThanOrEqual(trace.finalFullRun);
  });

  it("Little's law decides on synchronized waves, and says so", () => {
    const v = detect(truncate(simulateTrace(slowWaves), 90));
    expect(v.estimator).toMatch(/littles-law|combined/);
    expect(v.evidence.join(' ')).toMatch(/Little's law: \d+ rollouts finished/);
  });

  it('a steady rate that keeps moving is drifting with its slope, never stable or cyclic', () => {
    const trace = simulateTrace({ ...base, jitter: 0.1, driftPerHour: 0.4, seed: 3 });
    const states = [60, 90, 120, 150, 180].map((t) => detect(truncate(trace, t)));
    for (const v of states) expect(['stable', 'cyclic']).not.toContain(v.state);
    const last = states.at(-1) as ReturnType<typeof detect>;
    expect(last.state).toBe('drifting');
    // rollouts get slower: seconds per rollout grow
    expect(last.drift?.slope_relative_per_hour).toBeGreaterThan(0.1);
    expect(last.value ?? null).toBeNull();
  });

  it('a plain run is stable once a steep drift is ruled out, within 3% of its end value and covered', () => {
    // congestion over by ~15 min; checkpoints half a window apart and Little's law in ~8 batches
    const { t, v, trace } = firstStable({ ...base, seed: 5 }, 90);
    expect(t, 'never stable in 90 min').toBeDefined();
    expect(v?.evidence.join(' ')).toMatch(/trend of the steady rate -?[\d.]+%\/h \(±[\d.]+ s\.e\.\)/);
    // one checkpoint earlier the trend's upper bound still allowed a steep drift
    const before = detect(truncate(trace, (t as number) - 1));
    expect(before.state).toBe('stabilising');
    const value = v?.value as { value: number; low: number; high: number };
    expect(Math.abs(value.value / trace.finalFullRun - 1)).toBeLessThan(0.03);
    expect(value.low).toBeLessThanOrEqual(trace.finalFullRun);
    expect(value.high).toBeGreaterThanOrEqual(trace.finalFullRun);
  });

  it('the in-flight gauge, when exported, is what Little’s law uses', () => {
    const trace = simulateTrace(base);
    const cut = truncate(trace, 60);
    const active = cut.completed.map((p) => ({ t: p.t, v: 64 }));
    const v = detect({ ...cut, inFlightCapacity: null, activeRollouts: active });
    expect(v.evidence.join(' ')).toMatch(/alpasim_renderer_active_rollouts/);
    const cap = detect({ ...cut });
    expect(cap.evidence.join(' ')).toMatch(/capacity of the topology/);
  });
});
