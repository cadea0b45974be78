// The evidence a suggestion cites, read from one candidate's observation: the bottleneck (the
// monitor's verdict when present, else the queue-depth rule of AlpaSim's tuning guide), the
// runtime's idle fraction and per-GPU utilisation and memory.

import { runFigure } from '../analysis/figure.js';
import { SERVICES, type ServiceName } from '../catalog/alpasim.js';
import type { Bottleneck } from '../types/generated/metrics.js';
import type { TriedCandidate } from './types.js';

export interface QueueReading {
  max: number;
  min: number;
}

export interface GpuReading {
  utilisation?: number;
  memoryGiB?: number;
  totalGiB?: number;
}

export interface Evidence {
  secondsPerRollout?: number;
  bottleneck: Bottleneck;
  queues: Partial<Record<ServiceName, QueueReading>>;
  idleFraction?: number;
  gpus: Map<number, GpuReading>;
  /** Services whose queue max is high (≥ half of the highest and ≥ 4): several means too much capacity. */
  queued: ServiceName[];
  /** Every measured GPU at or above SATURATED_UTILISATION: the node is compute-bound. */
  saturated: boolean;
  /** Cores busy on the node (sum of every process group's peak CPU), when measured. */
  cpuBusyCores?: number;
}

/** Mean GPU utilisation (%) from which a GPU has no compute to spare. */
export const SATURATED_UTILISATION = 90;

/**
 * The seconds per rollout every surface shows for a tried run (src/analysis/figure.ts runFigure):
 * its decision's figure when its decision settled it, else its own value. What suggest names the
 * parent at and ranks measured runs by, as the record ranks its best.
 */
export function figureOfTried(run: TriedCandidate): number | undefined {
  if (run.figure !== undefined && Number.isFinite(run.figure) && run.figure > 0) return run.figure;
  const o = run.observation;
  const f = runFigure({
    decision: o?.decision ?? null,
    verdict: o?.verdict ?? null,
    reading: o?.stable_metrics?.seconds_per_rollout_full_run ?? null,
  })?.value;
  return f !== undefined && Number.isFinite(f) && f > 0 ? f : secondsPerRollout(run);
}

/**
 * The value candidates are compared on: the figure the surfaces show (the record's decision figure),
 * else the projected full run, else the stable value, else the full-run reading.
 */
export function secondsPerRollout(run: TriedCandidate): number | undefined {
  if (run.figure !== undefined && Number.isFinite(run.figure) && run.figure > 0) return run.figure;
  const o = run.observation;
  const value =
    o?.verdict?.projected_full_run?.value ??
    o?.verdict?.value?.value ??
    o?.stable_metrics?.seconds_per_rollout_full_run ??
    o?.verdict?.current_full_run ??
    undefined;
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

function isService(name: string): name is ServiceName {
  return (SERVICES as readonly string[]).includes(name);
}

export function queueReadings(run: TriedCandidate): Partial<Record<ServiceName, QueueReading>> {
  const out: Partial<Record<ServiceName, QueueReading>> = {};
  const byService = run.observation?.stable_metrics?.rpc_queue_depth_at_start_latest_by_service ?? {};
  for (const [name, q] of Object.entries(byService)) {
    if (!isService(name)) continue;
    out[name] = { max: q.worker_max ?? 0, min: q.worker_min ?? 0 };
  }
  return out;
}

const HIGH_QUEUE = 4;

/** The tuning guide's rule on queue maxima, used when the monitor gave no bottleneck. */
export function bottleneckFromQueues(queues: Partial<Record<ServiceName, QueueReading>>): Bottleneck {
  const entries = Object.entries(queues) as [ServiceName, QueueReading][];
  if (entries.length === 0)
    return { kind: 'unknown', evidence: ['no queue-depth readings'], confidence: 'low' };
  entries.sort((a, b) => b[1].max - a[1].max);
  const [top, second] = entries;
  const text = entries.map(([s, q]) => `${s} ${q.max}`).join(', ');
  if (!top || top[1].max < HIGH_QUEUE) {
    return {
      kind: 'not-enough-load',
      evidence: [`queue-depth max low everywhere (${text})`],
      confidence: 'medium',
    };
  }
  if (second && second[1].max >= Math.max(HIGH_QUEUE, top[1].max / 2)) {
    return {
      kind: 'total-capacity-too-high',
      evidence: [`queue-depth max high on several services (${text})`],
      confidence: 'medium',
    };
  }
  return {
    kind: 'service',
    service: top[0],
    evidence: [
      `queue-depth max ${top[0]} ${top[1].max} vs ${second ? `${second[0]} ${second[1].max}` : 'no other'}`,
    ],
    confidence: 'medium',
  };
}

export function readEvidence(run: TriedCandidate): Evidence {
  const m = run.observation?.stable_metrics;
  const queues = queueReadings(run);
  const given = m?.bottleneck;
  const bottleneck = given && given.kind !== 'unknown' ? given : bottleneckFromQueues(queues);
  const gpus = new Map<number, GpuReading>();
  for (const [index, usage] of Object.entries(m?.resource_usage?.gpu_by_index ?? {})) {
    const gpu = Number(index);
    if (!Number.isInteger(gpu)) continue;
    gpus.set(gpu, {
      utilisation: usage.utilization_percent?.mean ?? undefined,
      memoryGiB: usage.memory_used_gb?.max ?? usage.memory_used_gb?.mean ?? undefined,
      totalGiB: usage.memory_total_gb ?? undefined,
    });
  }
  const maxima = Object.values(queues).map((q) => q.max);
  const top = maxima.length ? Math.max(...maxima) : 0;
  const queued = (Object.entries(queues) as [ServiceName, QueueReading][])
    .filter(([, q]) => q.max >= HIGH_QUEUE && q.max >= top / 2)
    .map(([s]) => s);
  const utilisations = [...gpus.values()]
    .map((g) => g.utilisation)
    .filter((u): u is number => typeof u === 'number');
  const cpuGroups = Object.values(m?.resource_usage?.process_cpu_utilization_percent_by_group ?? {});
  const cpuPercents = cpuGroups
    .map((g) => g.max ?? g.mean)
    .filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  return {
    ...(cpuPercents.length ? { cpuBusyCores: cpuPercents.reduce((a, b) => a + b, 0) / 100 } : {}),
    saturated: utilisations.length > 0 && utilisations.every((u) => u >= SATURATED_UTILISATION),
    secondsPerRollout: secondsPerRollout(run),
    bottleneck,
    queues,
    idleFraction: m?.runtime_idle_fraction ?? undefined,
    gpus,
    queued,
  };
}

/** "driver queue-depth max 41 vs renderer 3" — the comparison a hypothesis cites. */
export function queueSentence(evidence: Evidence, service: ServiceName): string {
  const own = evidence.queues[service];
  if (!own) return '';
  const others = (Object.entries(evidence.queues) as [ServiceName, QueueReading][])
    .filter(([s]) => s !== service)
    .sort((a, b) => b[1].max - a[1].max);
  const next = others[0];
  return `${service} queue-depth max ${fmt(own.max)} vs ${next ? `${next[0]} ${fmt(next[1].max)}` : 'no other service'}`;
}

export function fmt(value: number, digits = 2): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(digits).replace(/\.?0+$/, '');
}
