// Bottleneck analysis after AlpaSim's tuning rules (docs/alpasim.md): queue depth max and min by
// service, the runtime's event-loop idle fraction and process CPU. Pure.
import { RUNTIME_IDLE, SERVICES, type ServiceName } from '../catalog/alpasim.js';
import type { Bottleneck } from '../types/generated/metrics.js';
import { round } from './series.js';

export interface BottleneckInput {
  /** Queue depth at RPC start, max over workers, averaged over the steady window; keyed by topology service. */
  queueMax: Partial<Record<ServiceName, number | null>>;
  queueMin: Partial<Record<ServiceName, number | null>>;
  idleFraction?: number | null;
  /** Process-group CPU in percent of one core (100 = one core busy). */
  processCpu?: Record<string, number | null>;
  /** Capacity per service from the topology, and rollouts in flight (their minimum). */
  capacity?: Partial<Record<ServiceName, number>>;
  inFlight?: number;
}

/** A queue is "high" when it holds at least this share of the rollouts in flight (or of the largest queue). */
const HIGH_SHARE = 0.5;
/** Max queue depth at or below this is "low": rollouts barely wait anywhere. */
const LOW_DEPTH = 1;
/** Min below this share of max on the bottleneck service: workers see uneven load. */
const IMBALANCE_SHARE = 0.25;
/** A process group using this much of one core is CPU-bound. */
const CPU_BOUND_PERCENT = 90;

export function analyseBottleneck(input: BottleneckInput): Bottleneck {
  const evidence: string[] = [];
  const services = SERVICES.filter(
    (s) => typeof input.queueMax[s] === 'number' && Number.isFinite(input.queueMax[s]),
  );
  const cpuBound = Object.entries(input.processCpu ?? {})
    .filter(([, v]) => typeof v === 'number' && v >= CPU_BOUND_PERCENT)
    .map(
      ([g, v]) =>
        `process group ${g} at ${round(v as number, 0)}% CPU: CPU-bound, scaling it helps even when the node average looks fine`,
    );
  const idle = input.idleFraction;
  const runtimeBusy = typeof idle === 'number' && Number.isFinite(idle) && idle < RUNTIME_IDLE.low;
  if (typeof idle === 'number' && Number.isFinite(idle))
    evidence.push(`runtime event-loop idle ${round(100 * idle, 0)}%`);
  if (!services.length) {
    return {
      kind: runtimeBusy ? 'runtime-bound' : 'unknown',
      service: null,
      evidence: [
        ...evidence,
        'no queue-depth samples (alpasim:rpc_queue_depth_at_start_latest:max)',
        ...cpuBound,
      ],
      confidence: 'low',
    };
  }
  const max = (s: ServiceName) => input.queueMax[s] as number;
  const min = (s: ServiceName) => input.queueMin[s] ?? null;
  const ranked = [...services].sort((a, b) => max(b) - max(a));
  const top = ranked[0] as ServiceName;
  const second = ranked[1];
  for (const s of ranked)
    evidence.push(
      `${s}: queue depth max ${round(max(s), 1)}, min ${min(s) === null ? 'n/a' : round(min(s) as number, 1)}${input.capacity?.[s] ? ` (capacity ${input.capacity[s]})` : ''}`,
    );
  const reference = input.inFlight && input.inFlight > 0 ? input.inFlight : max(top);
  const high = ranked.filter((s) => max(s) >= HIGH_SHARE * reference && max(s) > LOW_DEPTH);

  if (runtimeBusy) {
    return {
      kind: 'runtime-bound',
      service: null,
      evidence: [
        ...evidence,
        `idle ${round(100 * (idle as number), 0)}% < ${100 * RUNTIME_IDLE.low}%: the runtime's event loop is the contention point; raise runtime.nr_workers (aim for ${100 * RUNTIME_IDLE.target[0]}-${100 * RUNTIME_IDLE.target[1]}% idle)`,
        ...cpuBound,
      ],
      confidence: high.length === 0 ? 'high' : 'medium',
    };
  }
  if (max(top) <= LOW_DEPTH) {
    return {
      kind: 'not-enough-load',
      service: null,
      evidence: [
        ...evidence,
        `every queue max ≤ ${LOW_DEPTH}: not enough load, or a bottleneck upstream of the services`,
        ...cpuBound,
      ],
      confidence: 'medium',
    };
  }
  if (high.length >= 2) {
    return {
      kind: 'total-capacity-too-high',
      service: null,
      evidence: [
        ...evidence,
        `high queue max on ${high.join(', ')}: total capacity is too high; lower n_concurrent_rollouts (it also saves cache memory)`,
        ...cpuBound,
      ],
      confidence: 'medium',
    };
  }
  const topMin = min(top);
  if (topMin !== null && topMin < IMBALANCE_SHARE * max(top)) {
    return {
      kind: 'imbalance',
      service: top,
      evidence: [
        ...evidence,
        `${top}: min ${round(topMin, 1)} ≪ max ${round(max(top), 1)}: uneven load between workers`,
        ...cpuBound,
      ],
      confidence: 'medium',
    };
  }
  const dominance = second && max(second) > 0 ? max(top) / max(second) : Number.POSITIVE_INFINITY;
  return {
    kind: 'service',
    service: top,
    evidence: [
      ...evidence,
      `${top} holds the queue (${Number.isFinite(dominance) ? `${round(dominance, 1)}× the next service` : 'the only queue'}): add containers or replicas for it, or lower its n_concurrent_rollouts keeping capacity`,
      ...cpuBound,
    ],
    confidence: dominance >= 2 ? 'high' : dominance >= 1.3 ? 'medium' : 'low',
  };
}
