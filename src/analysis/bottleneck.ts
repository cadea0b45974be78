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
  /** Process-group CPU in percent of one core (100 = one core busy): the group's total. */
  processCpu?: Record<string, number | null>;
  /**
   * CPU of each group's hottest single process, percent of one core
   * (alpasim:process_cpu_utilization_percent:max_by_group:rate30s). A group is CPU-bound when its hottest
   * process saturates a core, whatever the total; without it the group total is used, said so.
   */
  processCpuHottest?: Record<string, number | null>;
  /** alpasim:rpc_blocking_seconds:p95, the largest over methods: event-loop blocking after I/O completes. */
  rpcBlockingP95?: number | null;
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
/** A process using this much of one core is CPU-bound. */
const CPU_BOUND_PERCENT = 90;
/** Min queue depth below this on every service, with a low max: not enough load (AlpaSim's guide: 3-5). */
const LOW_MIN_DEPTH = 3;
/** ... and no max above this. */
const LOW_MAX_DEPTH = 5;
/** RPC blocking p95 above this (seconds) marks the runtime's event loop as congested. */
const HIGH_BLOCKING_S = 0.05;

/** Evidence lines for CPU-bound process groups: the hottest process when known, else the group total. */
function cpuBoundEvidence(input: BottleneckInput): string[] {
  const hottest = Object.entries(input.processCpuHottest ?? {}).filter(
    (e): e is [string, number] => typeof e[1] === 'number' && Number.isFinite(e[1]),
  );
  if (hottest.length) {
    return hottest
      .filter(([, v]) => v >= CPU_BOUND_PERCENT)
      .map(
        ([g, v]) =>
          `process group ${g}: its hottest process at ${round(v, 0)}% CPU: CPU-bound (one process saturates a core), scaling ${g} helps even when the node average looks fine`,
      );
  }
  return Object.entries(input.processCpu ?? {})
    .filter(([, v]) => typeof v === 'number' && v >= CPU_BOUND_PERCENT)
    .map(
      ([g, v]) =>
        `process group ${g} at ${round(v as number, 0)}% CPU (group total; the per-process maximum is not available, so this may be several processes): possibly CPU-bound`,
    );
}

/** The runtime's own readings: event-loop idle fraction and RPC blocking p95. */
function runtimeEvidence(input: BottleneckInput): string[] {
  const evidence: string[] = [];
  const idle = input.idleFraction;
  if (typeof idle === 'number' && Number.isFinite(idle))
    evidence.push(`runtime event-loop idle ${round(100 * idle, 0)}%`);
  const blocking = input.rpcBlockingP95;
  if (typeof blocking === 'number' && Number.isFinite(blocking))
    evidence.push(
      `RPC blocking p95 ${round(1000 * blocking, 1)} ms${blocking > HIGH_BLOCKING_S ? ' (high: coroutines wait for the event loop after their I/O completes)' : ''}`,
    );
  return evidence;
}

/** The services' queues, deepest first, and those holding a high share of the rollouts in flight. */
interface Queues {
  max: (s: ServiceName) => number;
  min: (s: ServiceName) => number | null;
  ranked: ServiceName[];
  high: ServiceName[];
}

function queuesOf(input: BottleneckInput, services: ServiceName[]): Queues {
  const max = (s: ServiceName) => input.queueMax[s] as number;
  const min = (s: ServiceName) => input.queueMin[s] ?? null;
  const ranked = [...services].sort((a, b) => max(b) - max(a));
  const reference = input.inFlight && input.inFlight > 0 ? input.inFlight : max(ranked[0] as ServiceName);
  const high = ranked.filter((s) => max(s) >= HIGH_SHARE * reference && max(s) > LOW_DEPTH);
  return { max, min, ranked, high };
}

/** A bottleneck of `kind` with its lines of evidence (after the readings, before CPU-bound groups). */
type Conclude = (
  kind: Bottleneck['kind'],
  service: ServiceName | null,
  lines: string[],
  confidence: Bottleneck['confidence'],
) => Bottleneck;

export function analyseBottleneck(input: BottleneckInput): Bottleneck {
  const evidence = runtimeEvidence(input);
  const cpuBound = cpuBoundEvidence(input);
  const verdict: Conclude = (kind, service, lines, confidence) => ({
    kind,
    service,
    evidence: [...evidence, ...lines, ...cpuBound],
    confidence,
  });
  const services = SERVICES.filter(
    (s) => typeof input.queueMax[s] === 'number' && Number.isFinite(input.queueMax[s]),
  );
  const idle = input.idleFraction;
  const runtimeBusy = typeof idle === 'number' && Number.isFinite(idle) && idle < RUNTIME_IDLE.low;
  if (!services.length)
    return verdict(
      runtimeBusy ? 'runtime-bound' : 'unknown',
      null,
      ['no queue-depth samples (alpasim:rpc_queue_depth_at_start_latest:max)'],
      'low',
    );
  const q = queuesOf(input, services);
  for (const s of q.ranked)
    evidence.push(
      `${s}: queue depth max ${round(q.max(s), 1)}, min ${q.min(s) === null ? 'n/a' : round(q.min(s) as number, 1)}${input.capacity?.[s] ? ` (capacity ${input.capacity[s]})` : ''}`,
    );
  if (runtimeBusy)
    return verdict(
      'runtime-bound',
      null,
      [
        `idle ${round(100 * (idle as number), 0)}% < ${100 * RUNTIME_IDLE.low}%: the runtime's event loop is the contention point; raise runtime.nr_workers (aim for ${100 * RUNTIME_IDLE.target[0]}-${100 * RUNTIME_IDLE.target[1]}% idle)`,
      ],
      q.high.length === 0 ? 'high' : 'medium',
    );
  return queueVerdict(q, services, verdict);
}

/** The reading of the queues, after AlpaSim's rules: load, total capacity, imbalance, one service. */
function queueVerdict(q: Queues, services: ServiceName[], verdict: Conclude): Bottleneck {
  const { max, min, high } = q;
  const top = q.ranked[0] as ServiceName;
  const second = q.ranked[1];
  const minsLow = services.map(min).every((m) => m !== null && m < LOW_MIN_DEPTH);
  if (max(top) <= LOW_DEPTH || (minsLow && high.length === 0 && max(top) <= LOW_MAX_DEPTH))
    return verdict(
      'not-enough-load',
      null,
      [
        max(top) <= LOW_DEPTH
          ? `every queue max ≤ ${LOW_DEPTH}: not enough load, or a bottleneck upstream of the services`
          : `queue depth min below ${LOW_MIN_DEPTH} on every service with max ≤ ${LOW_MAX_DEPTH}: the services starve; raise total capacity (more instances or n_concurrent_rollouts on every service), or look upstream`,
      ],
      'medium',
    );
  if (high.length >= 2)
    return verdict(
      'total-capacity-too-high',
      null,
      [
        `high queue max on ${high.join(', ')}: total capacity is too high; lower n_concurrent_rollouts (it also saves cache memory)`,
      ],
      'medium',
    );
  const topMin = min(top);
  if (topMin !== null && topMin < IMBALANCE_SHARE * max(top))
    return verdict(
      'imbalance',
      top,
      [`${top}: min ${round(topMin, 1)} ≪ max ${round(max(top), 1)}: uneven load between workers`],
      'medium',
    );
  const dominance = second && max(second) > 0 ? max(top) / max(second) : Number.POSITIVE_INFINITY;
  return verdict(
    'service',
    top,
    [
      `${top} holds the queue (${Number.isFinite(dominance) ? `${round(dominance, 1)}× the next service` : 'the only queue'}): add containers or replicas for it, or lower its n_concurrent_rollouts keeping capacity`,
    ],
    dominance >= 2 ? 'high' : dominance >= 1.3 ? 'medium' : 'low',
  );
}
