// What the tried candidates say about moves: which kind of change each one made against its
// parent and how it came out, so the ranking avoids repeating what did not help and follows
// what did; plus the stop rule the seed asks for.
import type { ServiceName } from '../catalog/alpasim.js';
import type { Topology } from '../types/generated/topology.js';
import { secondsPerRollout } from './evidence.js';
import { activeServices, inFlight, instances, nrWorkers } from './topology-ops.js';
import type { MoveKind, StopAdvice, TriedCandidate } from './types.js';

export type Outcome = 'better' | 'not-better' | 'failed' | 'unknown';

/** A change below this relative gain is not significant when no comparison verdict is recorded. */
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
  const verdict = run.observation?.comparison?.outcome;
  if (verdict === 'better') return 'better';
  if (verdict === 'worse' || verdict === 'indistinguishable') return 'not-better';
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

/** No significant improvement over the last `patience` finished rounds. */
export function stopForNoProgress(
  tried: readonly TriedCandidate[],
  patience: number,
  maxParallel: number,
): StopAdvice | undefined {
  const byName = new Map(tried.map((r) => [r.name, r]));
  const all = rounds(tried, maxParallel);
  const finished = all.filter((round) =>
    round.every((r) => r.status !== 'pending' && r.status !== 'running'),
  );
  if (finished.length < patience) return undefined;
  const recent = finished.slice(-patience);
  const outcomes = recent.flat().map((r) => `${r.name} ${outcomeOf(r, byName)}`);
  if (recent.some((round) => round.some((r) => outcomeOf(r, byName) === 'better'))) return undefined;
  return {
    stop: true,
    reason: `no significant improvement over the last ${patience} rounds (${outcomes.join(', ')}): further topology changes are unlikely to pay for their GPU-hours`,
  };
}
