// The twin's time line: deterministic, congested at the start, converging to its steady state, and failing on cue.
import { describe, expect, it } from 'vitest';
import { type SimState, Simulation, simulate } from '../../../src/sim/engine.js';
import { profile, topology } from './helpers.js';

const rollouts = (s: SimState) => s.workers.reduce((a, w) => a + w.completed + w.failed, 0);
const fullRun = (s: SimState) => Math.max(...s.workers.map((w) => w.elapsed)) / rollouts(s);
const at = (samples: SimState[], t: number) => samples.find((s) => s.t >= t)!;

describe('simulate', () => {
  const t = topology('8gpu_64rollouts');
  const p = profile('twin-balanced');
  const run = simulate(t, p, { durationS: 2700, intervalS: 15, totalRollouts: 100_000 });

  it('is deterministic for a seed and varies with it', () => {
    const again = simulate(t, p, { durationS: 600, intervalS: 15, totalRollouts: 100_000 });
    expect(rollouts(at(again.samples, 600))).toBe(rollouts(at(run.samples, 600)));
    const other = simulate(t, p, { durationS: 600, intervalS: 15, seed: 99, totalRollouts: 100_000 });
    expect(other.samples.at(-1)).not.toEqual(again.samples.at(-1));
  });

  it('does not depend on how often it is advanced', () => {
    const a = new Simulation(t, p, { totalRollouts: 100_000 });
    const b = new Simulation(t, p, { totalRollouts: 100_000 });
    for (let s = 1; s <= 900; s += 1.7) a.advanceTo(s);
    a.advanceTo(900);
    b.advanceTo(900);
    expect(rollouts(a.state)).toBe(rollouts(b.state));
    expect(a.state.workers.map((w) => w.elapsed)).toEqual(b.state.workers.map((w) => w.elapsed));
  });

  it('is congested at the start, then converges toward the steady value', () => {
    const steady = run.steady.secondsPerRollout;
    const firstTen = 600 / rollouts(at(run.samples, 600));
    expect(firstTen).toBeGreaterThan(1.5 * steady);
    const v20 = fullRun(at(run.samples, 1200));
    const v45 = fullRun(run.samples.at(-1)!);
    expect(v45).toBeLessThan(v20);
    expect(Math.abs(v45 - steady) / steady).toBeLessThan(0.15);
    // The last 5 minutes run at the steady rate.
    const end = run.samples.at(-1)!;
    const before = at(run.samples, end.t - 300);
    const rate5m = 300 / (rollouts(end) - rollouts(before));
    expect(Math.abs(rate5m - steady) / steady).toBeLessThan(0.1);
  });

  it('serves the bottleneck as the highest queue depth', () => {
    const r = simulate(t, profile('twin-renderer-bound'), {
      durationS: 1800,
      intervalS: 60,
      totalRollouts: 100_000,
    });
    const s = r.samples.at(-1)!;
    const max = (svc: string) => Math.max(...s.workers.map((w) => w.queueDepth[svc] ?? 0));
    expect(max('sensorsim')).toBeGreaterThan(max('driver'));
    expect(max('sensorsim')).toBeGreaterThan(max('physics'));
  });

  it('ends when every scene has been rolled out', () => {
    const r = simulate(t, p, { durationS: 3600, intervalS: 30, totalRollouts: 200 });
    expect(r.ended?.reason).toBe('completed');
    expect(rollouts(r.samples.at(-1)!)).toBe(200);
  });

  it('counts failed rollouts in the total', () => {
    const r = simulate(t, profile('twin-flaky'), { durationS: 1800, intervalS: 60, totalRollouts: 100_000 });
    const s = r.samples.at(-1)!;
    const failed = s.workers.reduce((a, w) => a + w.failed, 0);
    expect(failed / rollouts(s)).toBeGreaterThan(0.12);
    expect(failed / rollouts(s)).toBeLessThan(0.28);
  });

  it('crashes and runs out of host memory on cue', () => {
    const crash = simulate(t, profile('twin-crash'), {
      durationS: 2700,
      intervalS: 30,
      totalRollouts: 100_000,
    });
    expect(crash.ended).toEqual({ reason: 'crash', at: 600 });
    const oom = simulate(t, profile('twin-host-oom'), {
      durationS: 2700,
      intervalS: 30,
      totalRollouts: 100_000,
    });
    expect(oom.ended?.reason).toBe('host-oom');
    const mem = oom.samples.map((s) => s.nodeMemAvailable);
    expect(mem.at(-1)!).toBeLessThan(0.05 * mem[1]!);
  });

  it('has a cyclic component when the profile asks for one', () => {
    const r = simulate(t, profile('twin-cyclic'), { durationS: 3600, intervalS: 60, totalRollouts: 100_000 });
    const rates: number[] = [];
    for (let i = 30; i + 2 < r.samples.length; i += 2) {
      rates.push(rollouts(r.samples[i + 2]!) - rollouts(r.samples[i]!));
    }
    expect(Math.max(...rates)).toBeGreaterThan(1.3 * Math.min(...rates));
  });

  it('reports GPU memory, utilisation and CPU like the exporters', () => {
    const s = run.samples.at(-1)!;
    expect(s.fbUsedMiB.every((m) => m > 0 && m < s.fbTotalMiB)).toBe(true);
    expect(Math.max(...s.gpuUtil)).toBeGreaterThan(50);
    expect(s.processCpu.runtime).toBeGreaterThan(0);
    expect(s.nodeMemAvailable).toBeLessThan(s.nodeMemTotal);
    const w = s.workers[0]!;
    const idle = w.idle / (w.idle + w.poll + w.work);
    expect(idle).toBeGreaterThan(0.6);
  });

  it('speaks as AlpaSim: queue depth counts the RPCs before this one (so 0 on a starved service), dispatch `fifo`', () => {
    // renderer-bound: the driver's RPCs rarely meet another one of their worker in flight
    const r = simulate(t, profile('twin-renderer-bound'), {
      durationS: 1800,
      intervalS: 30,
      totalRollouts: 100_000,
    });
    const driver = r.samples.slice(20).flatMap((s) => s.workers.map((w) => w.queueDepth.driver ?? -1));
    expect(Math.min(...driver)).toBe(0);
    expect(driver.every((d) => Number.isInteger(d) && d >= 0)).toBe(true);
    // AlpaSim's default FifoDispatch labels every start `fifo`
    const kinds = new Set(r.samples.at(-1)!.workers.flatMap((w) => Object.keys(w.rolloutsStarted)));
    expect([...kinds]).toEqual(['fifo']);
    expect(Object.keys(r.samples.at(-1)!.workers[0]!.schedulerWait)).toEqual(['fifo']);
  });
});
