// Two reference costs, by simulating the problem itself, printed beside the methods' figures:
//  - knownBestCost: a campaign told the space's best topology beforehand (no method is) that still
//    measures the baseline to a reference and runs that topology until the monitor's decision says it
//    is better: the same runs, the same decision functions. What these decisions cost at the least;
//    a bound of the decisions, not of the problem.
//  - informationFloor: what any method must spend (below): a bound of the problem.
import { completions } from '../trace-family.js';
import { decideRound, measureReference, recorded } from './decide.js';
import { type Context, measureBaseline } from './methods.js';
import { GPUS, Ledger, MAX_MINUTES, type SimRun, STARTUP } from './sim.js';
import { build, type Point } from './space.js';

export function knownBestCost(ctx: Context, best: Point): number {
  const { world, policy } = ctx;
  const ledger = new Ledger();
  const { run: baseline } = measureBaseline(ctx, ledger);
  const b = measureReference(world, baseline, policy, ctx.look);
  const baseMinutes = ledger.total() * (60 / GPUS);
  const optimum = world.run(build(ctx.base, best));
  const within = !baseline.oom && baseline.truth.secondsPerRollout <= 1.02 * optimum.truth.secondsPerRollout;
  if (optimum.key === baseline.key || within) return (GPUS * baseMinutes) / 60;
  const [d] = decideRound(world, [optimum], recorded('baseline', b.verdict), policy, ctx.look);
  const minutes = STARTUP + (d!.decidedAt ?? d!.stoppedAt);
  return (GPUS * (baseMinutes + minutes)) / 60;
}

/**
 * The information floor: GPU-hours any method must spend before its answer can be the best topology.
 * The baseline (every campaign starts there) and, unless it is already within min_improvement of
 * the best, at least one decided run of the best (one round), each for start-up plus one rollout of
 * steady data (the first rollout that starts after the start-up wave and finishes), times the GPUs of
 * a run. No decision can rest on less than one steady rollout per run, so no method, however it
 * chooses or decides, undercuts this on these runs (incidents left out: they only cost more).
 */
export function informationFloor(ctx: Context, best: Point, minImprovement: number): number {
  const { world } = ctx;
  const clean = (r: SimRun): SimRun => {
    const { crashAtMinutes: _c, driftPerHour: _d, ...shape } = r.shape;
    return { ...r, shape };
  };
  const baseline = clean(world.run(ctx.base));
  const optimum = clean(world.run(build(ctx.base, best)));
  const from = baseline.shape.congestionMinutes;
  // run-minutes until one rollout of steady data has finished
  const steadyRollout = (r: SimRun) =>
    completions(world.spec(r)).find((x) => x.t - x.d >= from)?.t ?? MAX_MINUTES;
  const baseMinutes = baseline.oom ? STARTUP : STARTUP + steadyRollout(baseline);
  if (
    !baseline.oom &&
    (optimum.key === baseline.key ||
      baseline.truth.secondsPerRollout <= (1 + minImprovement) * optimum.truth.secondsPerRollout)
  )
    return (GPUS * baseMinutes) / 60;
  return (GPUS * (baseMinutes + STARTUP + steadyRollout(optimum))) / 60;
}
