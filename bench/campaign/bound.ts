// The bounds, by simulating the problem itself with an oracle that knows the space's best topology.
//  - oracleCost: it still runs the baseline to a reference (every method starts there) and that
//    topology until the monitor's decision says it is better: the same runs, the same decision
//    functions. A floor for any method using these decisions.
//  - informationFloor: no decision rule at all. Both runs start at once; the oracle knows when the
//    congestion ends and every rollout's duration, and stops at the first run-minute where one
//    fixed-sample one-sided 95% test (no penalty for looking more than once) shows the best topology
//    min_improvement faster than the baseline. What no method, however clever, can undercut on these
//    runs (incidents left out: they only cost more).
import { completions } from '../trace-family.js';
import { decideRound, measureReference, recorded } from './decide.js';
import type { Context } from './methods.js';
import { GPUS, MAX_MINUTES, type SimRun, STARTUP } from './sim.js';
import { build, type Point } from './space.js';

export function oracleCost(ctx: Context, best: Point): number {
  const { world, policy } = ctx;
  const baseline = world.run(ctx.base);
  const b = measureReference(world, baseline, policy, ctx.look);
  const baseMinutes = baseline.oom ? STARTUP : STARTUP + b.stoppedAt;
  const optimum = world.run(build(ctx.base, best));
  const within = !baseline.oom && baseline.truth.secondsPerRollout <= 1.02 * optimum.truth.secondsPerRollout;
  if (optimum.key === baseline.key || within) return (GPUS * baseMinutes) / 60;
  const [d] = decideRound(world, [optimum], recorded('baseline', b.verdict), policy, ctx.look);
  const minutes = STARTUP + (d!.decidedAt ?? d!.stoppedAt);
  return (GPUS * (baseMinutes + minutes)) / 60;
}

/** Steady seconds per rollout from the rollouts that started after the congestion and ended by `t`. */
function steadyEstimate(
  rollouts: ReturnType<typeof completions>,
  from: number,
  t: number,
  inFlight: number,
): { logValue: number; logSe: number } | null {
  const d = rollouts.filter((c) => c.t <= t && c.t - c.d >= from).map((c) => c.d);
  if (d.length < 8) return null;
  const mean = d.reduce((a, x) => a + x, 0) / d.length;
  const sd = Math.sqrt(d.reduce((a, x) => a + (x - mean) ** 2, 0) / (d.length - 1));
  return { logValue: Math.log((60 * mean) / inFlight), logSe: sd / Math.sqrt(d.length) / mean };
}

export function informationFloor(ctx: Context, best: Point, minImprovement: number): number {
  const { world } = ctx;
  const clean = (r: SimRun): SimRun => {
    const { crashAtMinutes: _c, driftPerHour: _d, ...shape } = r.shape;
    return { ...r, shape };
  };
  const baseline = clean(world.run(ctx.base));
  const optimum = clean(world.run(build(ctx.base, best)));
  const from = baseline.shape.congestionMinutes;
  const durations = (r: SimRun) => completions(world.spec(r));
  const b = durations(baseline);
  // the baseline alone when it is already within 2%: measured once the first wave is over and one
  // rollout of steady data has finished
  const measuredAt = (c: ReturnType<typeof completions>) =>
    c.find((x) => x.t - x.d >= from)?.t ?? MAX_MINUTES;
  if (baseline.oom) return (GPUS * (STARTUP + STARTUP + measuredAt(durations(optimum)))) / 60;
  if (
    optimum.key === baseline.key ||
    baseline.truth.secondsPerRollout <= 1.02 * optimum.truth.secondsPerRollout
  )
    return (GPUS * (STARTUP + measuredAt(b))) / 60;
  const o = durations(optimum);
  for (let t = from + 1; t <= MAX_MINUTES; t++) {
    const eb = steadyEstimate(b, from, t, baseline.inFlight);
    const eo = steadyEstimate(o, from, t, optimum.inFlight);
    if (!eb || !eo) continue;
    const diff = eo.logValue - eb.logValue;
    if (diff + 1.645 * Math.hypot(eb.logSe, eo.logSe) < Math.log(1 - minImprovement))
      return (GPUS * 2 * (STARTUP + t)) / 60;
  }
  return (GPUS * 2 * (STARTUP + MAX_MINUTES)) / 60;
}
