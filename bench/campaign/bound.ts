// The noise-aware floor (issue 33), printed beside the methods' figures: what a campaign told the
// space's best topology beforehand (no method is) must still spend to conclude on it with the
// project's decisions. It runs the baseline and the best beside each other (equal run age) and stops
// both when the monitor's decision says the best is better; a baseline already within 2% of the best
// needs only its first usable projection; a baseline out of memory costs its start-up, then the best
// runs to its first usable projection. Incidents (crashes, drifts) are left out: they only cost more.
// It bounds the problem under these decisions and this noise, not any method's choices.
import { decideBeside, measureReference, usableProjection } from './decide.js';
import type { Context } from './methods.js';
import { GPUS, type SimRun, STARTUP } from './sim.js';
import { build, type Point } from './space.js';

/** A job without its incident (crash, drift): what the floor and its oracle read. */
export const clean = (r: SimRun): SimRun => {
  const { crashAtMinutes: _c, driftPerHour: _d, ...shape } = r.shape;
  return { ...r, shape };
};

export function noiseAwareFloor(ctx: Context, best: Point, within: number): number {
  const { world, policy } = ctx;
  const baseline = clean(world.run(ctx.base));
  const optimum = clean(world.run(build(ctx.base, best)));
  const hours = (minutes: number) => (GPUS * minutes) / 60;
  const firstUsable = (r: SimRun) =>
    STARTUP + measureReference(world, r, policy, ctx.look, usableProjection).stoppedAt;
  if (baseline.oom) return hours(STARTUP + firstUsable(optimum));
  if (
    optimum.key === baseline.key ||
    baseline.truth.secondsPerRollout <= (1 + within) * optimum.truth.secondsPerRollout
  )
    return hours(firstUsable(baseline));
  const { decided, reference } = decideBeside(world, [optimum], baseline, policy, ctx.look);
  return hours(2 * STARTUP + decided[0]!.stoppedAt + reference.stoppedAt);
}
