// A held decision in the campaign (issue 43): what a round's candidate comes out as when a guard holds
// its claim, and when its job is abandoned and rerun rather than held to the horizon.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decideBeside } from '../../../bench/campaign/decide.js';
import { World } from '../../../bench/campaign/sim.js';
import { build } from '../../../bench/campaign/space.js';
import {
  abandonReason,
  HELD_LIMIT_MINUTES,
  heldAgain,
  heldBelow,
  runOutcome,
} from '../../../src/campaign/held.js';
import { DEFAULT_POLICY } from '../../../src/campaign/rounds.js';
import { parseProfile } from '../../../src/sim/profile.js';
import type { Decision } from '../../../src/types/generated/metrics.js';
import { preset } from '../suggest/helpers.js';

const m = 0.02;
const decision = (state: Decision['state'], value: number, low: number, high: number, at?: number) => ({
  state,
  relative_change: { value, low, high },
  ...(at !== undefined ? { decided_at_minutes: at } : {}),
});
const horizon = { minImprovement: m, horizonMinutes: 120 };

describe('a candidate whose interval lies below −min_improvement (issue 43)', () => {
  it('is never settled not-better: the closed design’s hold is undecided, and rerun', () => {
    // the closed design settles a guard's hold `not-better` at the horizon
    const held = runOutcome(decision('not-better', -0.36, -0.37, -0.35, 120), horizon);
    expect(held.outcome).toBe('undecided');
    expect(held.rerun).toBe(true);
    expect(heldBelow(decision('not-better', -0.36, -0.37, -0.35), m)).toBe(true);
    // the decision's own claim for it (src/analysis/decision.ts): held and rerun the same way
    const faster = runOutcome(decision('faster-drift-not-ruled-out', -0.2, -0.25, -0.15, 60), horizon);
    expect(faster).toMatchObject({ outcome: 'undecided', rerun: true });
    // an interval across −min_improvement closed at the horizon: not-better, but not shown (held, no rerun)
    const across = runOutcome(decision('not-better', -0.04, -0.09, 0.01, 120), horizon);
    expect(across).toMatchObject({ outcome: 'not-better', held: expect.stringMatching(/horizon/) });
    expect(across.rerun).toBeUndefined();
    // decided before the horizon: stands
    expect(runOutcome(decision('better', -0.2, -0.25, -0.15, 40), horizon)).toEqual({ outcome: 'better' });
    expect(runOutcome(decision('not-better', 0.01, -0.01, 0.03, 40), horizon)).toEqual({
      outcome: 'not-better',
    });
    expect(runOutcome(null, horizon).outcome).toBe('undecided');
  });

  it('whose job ended open (abandoned for a drift, or stopped) is rerun; an open one across −min_improvement is not', () => {
    // the monitor's autopilot stops such a job at once (src/monitor/autopilot.ts abandonOf): its last
    // decision is the provisional winner's, or still measuring
    for (const state of ['better-at-equal-age', 'measuring'] as const)
      expect(runOutcome(decision(state, -0.08, -0.11, -0.05), horizon), state).toMatchObject({
        outcome: 'undecided',
        rerun: true,
      });
    expect(runOutcome(decision('measuring', -0.03, -0.08, 0.02), horizon)).toEqual({
      outcome: 'undecided',
      held: 'still measuring',
    });
    // a rerun of it ended so again settles better, unless a job drifted
    expect(
      runOutcome(decision('better-at-equal-age', -0.08, -0.11, -0.05), { ...horizon, attempt: 2 }),
    ).toEqual({
      outcome: 'better',
    });
    expect(
      runOutcome(decision('better-at-equal-age', -0.08, -0.11, -0.05), {
        ...horizon,
        attempt: 2,
        drifting: true,
      }),
    ).toMatchObject({ outcome: 'undecided', rerun: true });
  });

  it('in a round: a leader whose job drifts is abandoned and rerun, never settled not-better', () => {
    // runtime-bound, seed 12: the leader (20% faster) drifts +25%/h; its equal-age interval lies
    // below −2% from run-minute 25 and the guard holds it: the closed design settled it not-better at 110
    const file = new URL('../../../bench/profiles/twin-runtime-bound.yaml', import.meta.url);
    const profile = parseProfile(readFileSync(file, 'utf8'), file.pathname);
    const base = preset('8gpu_64rollouts');
    const at = (total: number, workers: number) =>
      build(base, { renderer: 0, driver: 8, physics: 4, total, workers });
    const world = new World(profile, 12);
    const leader = world.run(at(96, 16));
    expect(leader.shape.driftPerHour).toBeGreaterThan(0);
    const { decided } = decideBeside(world, [leader], world.run(at(64, 8), 101), DEFAULT_POLICY, 5);
    const d = decided[0]!;
    const interval = d.vsReference?.relative_change;
    expect(interval?.high).toBeLessThan(-m);
    expect(d.outcome).not.toBe('not-better');
    expect(d.outcome).toBe('undecided');
    expect(d.rerun).toBe(true);
    // abandoned once held for HELD_LIMIT_MINUTES, not at the horizon
    expect(d.stoppedAt).toBeLessThan(120);
  }, 180_000);
});

describe('when a held candidate is abandoned for a rerun', () => {
  const base = {
    decision: decision('measuring', -0.2, -0.25, -0.15),
    candidate: { state: 'stable' as const },
    reference: { state: 'stable' as const },
    referenceEnded: false,
    heldMinutes: 10,
    minImprovement: m,
  };
  it('when the detector marks its job or the reference’s drifting while the guard holds it', () => {
    expect(abandonReason(base)).toBeNull();
    expect(abandonReason({ ...base, candidate: { state: 'drifting' } })).toMatch(/its job drifts/);
    expect(abandonReason({ ...base, reference: { state: 'drifting' } })).toMatch(/reference's job drifts/);
    // not held (the interval reaches above −min_improvement): the guard is not what holds it
    expect(
      abandonReason({
        ...base,
        decision: decision('measuring', -0.03, -0.06, 0.0),
        candidate: { state: 'drifting' },
      }),
    ).toBeNull();
  });

  it('when its reference ended while it pointed at a gain, or the hold outlasts the limit', () => {
    expect(abandonReason({ ...base, referenceEnded: true })).toMatch(/reference job ended/);
    expect(
      abandonReason({ ...base, referenceEnded: true, decision: decision('measuring', 0.0, -0.03, 0.03) }),
    ).toBeNull();
    expect(abandonReason({ ...base, heldMinutes: HELD_LIMIT_MINUTES })).toMatch(/abandoned, rerun/);
    expect(abandonReason({ ...base, decision: decision('better', -0.2, -0.25, -0.15) })).toBeNull();
  });
});

describe('a rerun held again (issue 43: the same rule for the bench, the autopilot and the monitor)', () => {
  const held = (fullRun: number | null) => ({
    ...decision('faster-drift-not-ruled-out', -0.08, -0.12, -0.04, 120),
    full_run: {
      guard: 'open' as const,
      change: fullRun === null ? null : { value: fullRun, low: fullRun - 0.1, high: fullRun + 0.1 },
      slope_relative_per_hour: null,
      slope_se: null,
      lever_minutes: null,
    },
  });
  it('settles better on its second job when the guard’s extrapolation still lies below −min_improvement', () => {
    expect(runOutcome(held(-0.06), { ...horizon, attempt: 2 })).toEqual({ outcome: 'better' });
    // its first job is held and rerun, as before
    expect(runOutcome(held(-0.06), horizon)).toMatchObject({ outcome: 'undecided', rerun: true });
    expect(heldAgain(held(null), { ...horizon, attempt: 3 })).toEqual({ outcome: 'better' });
  });
  it('never when a job drifts: the detector marks it, or the drift carried to the full run undoes the gain', () => {
    expect(runOutcome(held(-0.06), { ...horizon, attempt: 2, drifting: true })).toMatchObject({
      outcome: 'undecided',
      rerun: true,
    });
    expect(runOutcome(held(-0.01), { ...horizon, attempt: 2 })).toMatchObject({ outcome: 'undecided' });
    // an interval across −min_improvement is no hold at all
    const across = decision('faster-drift-not-ruled-out', -0.04, -0.08, 0.0, 120);
    expect(heldAgain(across, { ...horizon, attempt: 2 })).toBeNull();
  });
  it('a candidate 5% faster at start that drifts 5-10%/h (slower over the run) is never settled better on its rerun; a steady one is', () => {
    // the drift control of the verdict bench's families, in the campaign's world: the reference is
    // steady, the candidate's second job (attempt 2) starts 5% faster and slows by 5 or 10% an hour
    const file = new URL('../../../bench/profiles/twin-runtime-bound.yaml', import.meta.url);
    const profile = parseProfile(readFileSync(file, 'utf8'), file.pathname);
    const topology = build(preset('8gpu_64rollouts'), {
      renderer: 0,
      driver: 8,
      physics: 4,
      total: 64,
      workers: 8,
    });
    const world = new World(profile, 3);
    const steady = (r: ReturnType<World['run']>) => ({
      ...r,
      shape: { ...r.shape, crashAtMinutes: undefined, driftPerHour: undefined },
    });
    const reference = steady(world.run(topology, 101));
    for (const [i, drift] of [0, 0.05, 0.1].entries()) {
      // a job of its own each (the world keeps a job's series by its id)
      const first = steady(world.run(topology, 1 + i));
      const rerun = {
        ...first,
        shape: { ...first.shape, steadySeconds: first.shape.steadySeconds * 0.95, driftPerHour: drift },
      };
      const { decided } = decideBeside(world, [rerun], reference, DEFAULT_POLICY, 5);
      // steady, the rerun runs past its start-up's slope and settles better; drifting, it never does
      expect(decided[0]!.outcome === 'better', `${drift * 100}%/h`).toBe(drift === 0);
    }
  }, 180_000);
});
