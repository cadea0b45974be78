// What a decision reads of one run, from its rollouts reconstructed from the per-worker duration
// histogram: its start cohorts (src/analysis/cohorts.ts: the contrast decisions read) and its own
// estimate (src/analysis/rollouts.ts: the projection every surface shows, with its per-minute
// trajectory). observe.ts calls it for every verdict; the benches call it too, so what they decide
// is what the product reads. Pure.
import { type CohortTable, cohortTable } from './cohorts.js';
import type { EstimateTrajectory } from './rollouts.js';
import {
  estimateTrajectory,
  type RolloutEstimate,
  type RolloutEstimateInput,
  rolloutEstimate,
} from './rollouts.js';
import type { Sample } from './series.js';

export interface ReadingInput extends RolloutEstimateInput {
  /** Each worker's last reading (run-minutes). */
  lastSeen?: ReadonlyMap<string, number>;
  /** The in-flight gauge over run-minutes. */
  active?: readonly Sample[];
  /** The suite's rollouts in all (scene_count × rollouts_per_scene). */
  expectedRollouts?: number | null;
  /** The run's job ended. */
  final?: boolean;
  /** Unix seconds of run-minute 0 (whether a reference shared the candidate's wall clock). */
  startedAt?: number | null;
  /** Keep the estimate's per-minute trajectory (records written before cohorts compare through it). */
  trajectory?: boolean;
}

export interface Reading {
  estimate: (RolloutEstimate & { trajectory?: EstimateTrajectory | null }) | null;
  cohorts: CohortTable | null;
}

/** The run's reading as of `now`. The cohorts use the gauge's steady level (its largest reading), not a drained one. */
export function decisionReading(i: ReadingInput): Reading {
  const level = Math.max(
    0,
    ...(i.active ?? []).filter((p) => p.t <= i.now && Number.isFinite(p.v)).map((p) => p.v),
  );
  const inFlight = level > 0 ? level : i.inFlight;
  const cohorts =
    inFlight && inFlight > 0
      ? cohortTable({
          batches: i.batches,
          now: i.now,
          step: i.step,
          inFlight,
          ...(i.lastSeen ? { lastSeen: i.lastSeen } : {}),
          ...(i.active ? { active: i.active } : {}),
          expectedRollouts: i.expectedRollouts ?? null,
          final: !!i.final,
          startedAt: i.startedAt ?? null,
        })
      : null;
  const est = rolloutEstimate(i);
  const estimate = est && i.trajectory !== false ? { ...est, trajectory: estimateTrajectory(i) } : est;
  return { estimate, cohorts };
}
