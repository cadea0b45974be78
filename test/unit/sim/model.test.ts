// Directions the tuning guide promises, checked on the twin's steady state (pure model, fast).
import { describe, expect, it } from 'vitest';
import { steadyState } from '../../../src/sim/model.js';
import { profile, topology } from './helpers.js';

describe('steady state', () => {
  it('is cheap: a topology search can call it thousands of times', () => {
    const p = profile('twin-balanced');
    const t = topology('8gpu_64rollouts');
    for (let i = 0; i < 200; i++) steadyState(t, p);
    expect(steadyState(t, p).secondsPerRollout).toBeGreaterThan(0);
  });

  it('shows the high queue-depth max on the bottleneck service', () => {
    const r = steadyState(topology('8gpu_64rollouts'), profile('twin-renderer-bound'));
    expect(r.bottleneck).toBe('renderer');
    const others = Object.entries(r.queueDepth).filter(([s]) => s !== 'sensorsim');
    for (const [, d] of others) expect(r.queueDepth.sensorsim).toBeGreaterThan(3 * d);
    const d = steadyState(topology('8gpu_64rollouts'), profile('twin-driver-bound'));
    expect(d.bottleneck).toBe('driver');
    expect(d.queueDepth.driver).toBeGreaterThan(3 * (d.queueDepth.sensorsim ?? 0));
  });

  it('improves throughput when the bottleneck gets more GPUs, until another service binds', () => {
    const p = profile('twin-renderer-bound');
    // 48 rollouts in flight; the driver, physics and controller sit on GPUs 6-7 and the CPU.
    const spread = (gpus: number[]) => {
      const conc = Math.ceil(48 / gpus.length);
      return steadyState(
        topology(
          '8gpu_64rollouts',
          `services.renderer.gpus=[${gpus.join(',')}]`,
          `runtime.endpoints.renderer.n_concurrent_rollouts=${conc}`,
          `defines.nre_cache_size=${conc + 1}`,
          'services.driver.gpus=[6,7]',
          'runtime.endpoints.driver.n_concurrent_rollouts=3',
          'services.physics.gpus=[6,7]',
          'services.physics.replicas_per_container=4',
          'runtime.endpoints.physics.n_concurrent_rollouts=6',
          'services.controller.replicas_per_container=12',
        ),
        p,
      );
    };
    const steps = [
      [0, 1],
      [0, 1, 2],
      [0, 1, 2, 3],
      [0, 1, 2, 3, 4, 5],
    ].map(spread);
    for (const s of steps) expect(s.oom).toBeUndefined();
    const spr = steps.map((s) => s.secondsPerRollout);
    expect(spr[1]).toBeLessThan(spr[0]!);
    expect(spr[2]).toBeLessThan(spr[1]!);
    expect(steps[0]!.bottleneck).toBe('renderer');
    // Once another service binds, more renderer GPUs stop paying off.
    expect(steps[3]!.bottleneck).not.toBe('renderer');
    const firstGain = spr[0]! - spr[1]!;
    const lastGain = spr[2]! - spr[3]!;
    expect(lastGain).toBeLessThan(firstGain / 2);
  });

  it('raises queue depth on several services when total capacity is far above what the slowest sustains', () => {
    const p = { ...profile('twin-balanced'), gpu: { ...profile('twin-balanced').gpu, memory_gb: 400 } };
    const base = steadyState(topology('8gpu_64rollouts'), p);
    const over = steadyState(
      topology(
        '8gpu_64rollouts',
        'runtime.endpoints.renderer.n_concurrent_rollouts=64',
        'defines.nre_cache_size=65',
        'runtime.endpoints.driver.n_concurrent_rollouts=8',
        'runtime.endpoints.physics.n_concurrent_rollouts=16',
        'defines.physics_cache_size=17',
        'runtime.endpoints.controller.n_concurrent_rollouts=16',
      ),
      p,
    );
    expect(over.inFlight).toBe(256);
    const raised = Object.keys(base.queueDepth).filter(
      (s) => (over.queueDepth[s] ?? 0) > 1.5 * (base.queueDepth[s] ?? 0) && (over.queueDepth[s] ?? 0) >= 1,
    );
    expect(raised.length).toBeGreaterThanOrEqual(2);
    // And throughput barely improves: the slowest service was already saturated.
    expect(over.secondsPerRollout).toBeGreaterThan(0.8 * base.secondsPerRollout);
  });

  it('shows loading stalls when the renderer cache is smaller than concurrency + 1', () => {
    const p = profile('twin-balanced');
    const ok = steadyState(topology('8gpu_64rollouts', 'defines.nre_cache_size=17'), p);
    const tight = steadyState(topology('8gpu_64rollouts', 'defines.nre_cache_size=16'), p);
    const small = steadyState(topology('8gpu_64rollouts', 'defines.nre_cache_size=8'), p);
    expect(ok.stallSecondsPerRollout).toBe(0);
    expect(tight.stallSecondsPerRollout).toBeGreaterThanOrEqual(9);
    expect(tight.secondsPerRollout).toBeGreaterThan(ok.secondsPerRollout);
    expect(small.stepping).toBeLessThan(small.inFlight);
    expect(small.secondsPerRollout).toBeGreaterThan(tight.secondsPerRollout);
    expect(small.queueDepth.sensorsim).toBeGreaterThan(ok.queueDepth.sensorsim!);
  });

  it('predicts out of GPU memory when a topology does not fit', () => {
    const r = steadyState(
      topology('8gpu_64rollouts', 'services.renderer.gpus=[3,3,3,3]'),
      profile('twin-balanced'),
    );
    expect(r.oom?.gpu).toBe(3);
    expect(r.gpuMemoryGb[3]).toBeGreaterThan(80);
    expect(steadyState(topology('8gpu_64rollouts'), profile('twin-balanced')).oom).toBeUndefined();
  });

  it('lets runtime workers matter: one worker for 64 rollouts has a busy event loop', () => {
    const p = profile('twin-balanced');
    const one = steadyState(topology('8gpu_64rollouts', 'runtime.nr_workers=1'), p);
    const eight = steadyState(topology('8gpu_64rollouts'), p);
    expect(one.idleFraction).toBeLessThan(0.6);
    expect(eight.idleFraction).toBeGreaterThan(0.7);
    expect(one.secondsPerRollout).toBeGreaterThan(eight.secondsPerRollout);
  });

  it('bottlenecks differently on the three hardware profiles', () => {
    const t = topology('8gpu_64rollouts');
    const b = ['twin-balanced', 'twin-renderer-bound', 'twin-driver-bound'].map((n) =>
      steadyState(t, profile(n)),
    );
    expect(b[1]!.bottleneck).toBe('renderer');
    expect(b[2]!.bottleneck).toBe('driver');
    expect(b[0]!.secondsPerRollout).toBeLessThan(b[1]!.secondsPerRollout);
    expect(b[0]!.secondsPerRollout).toBeLessThan(b[2]!.secondsPerRollout);
  });

  it("reads queue depth as AlpaSim's gauge does: the worker's RPCs before this one, 0 with one rollout per worker", () => {
    const p = profile('twin-balanced');
    const one = steadyState(topology('8gpu_64rollouts', 'runtime.nr_workers=64'), p);
    for (const d of Object.values(one.queueDepth)) expect(d).toBe(0);
    const eight = steadyState(topology('8gpu_64rollouts'), p);
    expect(Math.max(...Object.values(eight.queueDepth))).toBeGreaterThan(0);
  });

  describe('effects a queueing model of the services alone does not have (benchmark profiles)', () => {
    const p = profile('twin-balanced');
    const t = topology('8gpu_64rollouts');
    const plain = steadyState(t, p).secondsPerRollout;
    it('gpu_interference: services sharing a GPU slow each other (driver and physics on GPUs 4-7)', () => {
      const slowed = steadyState(t, { ...p, effects: { gpu_interference: 0.4 } }).secondsPerRollout;
      expect(slowed).toBeGreaterThan(1.03 * plain);
      // one service per GPU is not slowed
      const alone = topology('8gpu_64rollouts', 'services.physics.gpus=null');
      expect(steadyState(alone, { ...p, effects: { gpu_interference: 0.4 } }).secondsPerRollout).toBeCloseTo(
        steadyState(alone, p).secondsPerRollout + 0,
        1,
      );
    });
    it('cpu_contention: CPU-side work slows as the node fills, more on a small node', () => {
      const small = { ...p, cpu: { cores: 8 } };
      const base = steadyState(t, small).secondsPerRollout;
      const contended = steadyState(t, { ...small, effects: { cpu_contention: 2 } }).secondsPerRollout;
      expect(contended).toBeGreaterThan(1.03 * base);
      const roomy = steadyState(t, { ...p, effects: { cpu_contention: 2 } }).secondsPerRollout;
      expect(roomy / plain - 1).toBeLessThan(contended / base - 1);
    });
    it('cache_miss_exponent: caches miss above concurrency + 1, less with fewer rollouts per instance', () => {
      const thrash = { ...p, effects: { cache_miss_exponent: 6 } };
      expect(steadyState(t, thrash).stallSecondsPerRollout).toBeGreaterThan(0);
      expect(steadyState(t, p).stallSecondsPerRollout).toBe(0);
      // the renderer's 64 rollouts over 8 instances instead of 4: fewer misses per rollout
      const spread = topology(
        '8gpu_64rollouts',
        'services.renderer.gpus=[0,0,1,1,2,2,3,3]',
        'runtime.endpoints.renderer.n_concurrent_rollouts=8',
        'defines.nre_cache_size=9',
      );
      expect(steadyState(spread, thrash).stallSecondsPerRollout).toBeLessThan(
        steadyState(t, thrash).stallSecondsPerRollout,
      );
    });
  });
});
