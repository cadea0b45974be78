// What the tried candidates say about moves: which kind of change each one made against its
// parent and how it came out, so the ranking avoids repeating what did not help and follows
// what did; plus the stop rule the seed asks for, the campaign's own (src/campaign/rounds.ts).

import { isSettled, outcomeOf as runOutcome } from '../analysis/outcome.js';
import {
  type CampaignState,
  closeRound,
  type RunOutcome,
  startCampaign,
  stopRule,
} from '../campaign/rounds.js';
import type { ServiceName } from '../catalog/alpasim.js';
import { EXPERIMENT_DEFAULTS } from '../topology/settings.js';
import type { Topology } from '../types/generated/topology.js';
import { secondsPerRollout } from './evidence.js';
import { activeServices, inFlight, instances, nrWorkers } from './topology-ops.js';
import type { MoveKind, StopAdvice, TriedCandidate } from './types.js';

export type Outcome = 'better' | 'not-better' | 'failed' | 'unknown';

/** A change below this relative gain is not significant when no decision is recorded. */
export const SIGNIFICANT_GAIN = 0.01;

/** Move tags ("scale-bottleneck:driver", "raise-workers", ...) that describe child against parent. */
export function classifyChange(parent: Topology, child: Topology): string[] {
  const tags: string[] = [];
  for (const svc of activeServices(child)) {
    if (instances(child, svc) > instances(parent, svc)) tags.push(`scale-bottleneck:${svc}`);
  }
  if (nrWorkers(child) > nrWorkers(parent)) tags.push('raise-workers');
  if (inFlight(child) < inFlight(parent)) tags.push('lower-total');
  if (inFlight(child) > inFlight(parent)) tags.push('raise-total');
  return tags;
}

export function moveTag(kind: MoveKind, service?: ServiceName): string {
  return kind === 'scale-bottleneck' || kind === 'place-free' ? `${kind}:${service}` : kind;
}

/** How a tried candidate came out against its parent. */
export function outcomeOf(run: TriedCandidate, byName: Map<string, TriedCandidate>): Outcome {
  if (run.status === 'failed' || run.observation?.failure) return 'failed';
  // its one decision's outcome (src/analysis/outcome.ts), when it settled the run
  const decided = runOutcome({ decision: run.observation?.decision, ended: true });
  if (decided === 'better') return 'better';
  if (isSettled(decided)) return 'not-better';
  const own = secondsPerRollout(run);
  const parent = run.parent ? byName.get(run.parent) : undefined;
  const reference = parent ? secondsPerRollout(parent) : undefined;
  if (own === undefined || reference === undefined) return 'unknown';
  return own < reference * (1 - SIGNIFICANT_GAIN) ? 'better' : 'not-better';
}

/**
 * Groups candidates into rounds: consecutive candidates sharing one parent, at most
 * `maxParallel` each (a parent that stays best across rounds gets several).
 */
export function rounds(tried: readonly TriedCandidate[], maxParallel: number): TriedCandidate[][] {
  const out: TriedCandidate[][] = [];
  for (const run of tried) {
    if (!run.parent) continue;
    const last = out[out.length - 1];
    if (last && last[0]?.parent === run.parent && last.length < maxParallel) last.push(run);
    else out.push([run]);
  }
  return out;
}

/** The record's tried candidates as the campaign loop's state (src/campaign/rounds.ts): baseline, finished rounds. */
export function campaignOf(tried: readonly TriedCandidate[], maxParallel: number): CampaignState | null {
  const byName = new Map(tried.map((r) => [r.name, r]));
  const first = tried.find((r) => !r.parent);
  if (!first) return null;
  const ok = outcomeOf(first, byName) !== 'failed';
  let state = startCampaign({
    name: first.name,
    seconds: ok ? (secondsPerRollout(first) ?? null) : null,
    gpuHours: 0,
  });
  const finished = rounds(tried, maxParallel).filter((round) =>
    round.every((r) => r.status !== 'pending' && r.status !== 'running'),
  );
  finished.forEach((round, i) => {
    const runs = round.map((r) => {
      const o = outcomeOf(r, byName);
      const seconds = secondsPerRollout(r);
      return {
        name: r.name,
        outcome: (o === 'unknown' ? 'undecided' : o) as RunOutcome,
        ...(o !== 'failed' && seconds !== undefined ? { seconds } : {}),
        gpuHours: 0,
      };
    });
    state = closeRound(state, { index: i + 1, parent: round[0]?.parent ?? first.name, runs });
  });
  return state;
}

/**
 * The campaign's stop rule (src/campaign/rounds.ts stopRule) on the record: no new best over the last
 * `patience` finished rounds, unless the model predicts a gain of min_improvement elsewhere with
 * confidence (`outlook`).
 */
export function stopForNoProgress(
  tried: readonly TriedCandidate[],
  patience: number,
  maxParallel: number,
  outlook?: { minImprovement: number; gainLow: number } | null,
): StopAdvice | undefined {
  const state = campaignOf(tried, maxParallel);
  if (!state) return undefined;
  const m = outlook?.minImprovement ?? EXPERIMENT_DEFAULTS.minImprovement;
  const stop = stopRule(state, { stopAfter: patience, minImprovement: m }, outlook ?? null);
  if (!stop) return undefined;
  const byName = new Map(tried.map((r) => [r.name, r]));
  const recent = state.rounds.slice(-patience).flatMap((round) => round.runs);
  const outcomes = recent.map((r) => `${r.name} ${outcomeOf(byName.get(r.name)!, byName)}`);
  return {
    stop: true,
    reason: `no significant improvement over the last ${patience} rounds (${outcomes.join(', ')}): further topology changes are unlikely to pay for their GPU-hours (${stop})`,
  };
}
