// A failed baseline is a start: when it ran out of GPU memory (AlpaSim's 8-GPU presets on 40 GiB
// GPUs, say), the next candidate is the largest topology the memory model says fits, shrunk from the
// failed one by its two memory knobs (fewer rollouts in flight, caches following; fewer replicas per
// container, capacity kept). "Largest" is the most rollouts in flight, then the most service
// instances (the compute the node keeps), then the least memory. Pure.
import { GPU_MEMORY_LIMITS, type ServiceName } from '../catalog/alpasim.js';
import type { Topology } from '../types/generated/topology.js';
import { retarget } from './moves.js';
import { activeServices, clone, gpusOf, inFlight, instances, replicas, setReplicas } from './topology-ops.js';
import type { GpuPrediction } from './types.js';

/** Rollouts in flight kept, as a share of the failed topology's. */
const TOTAL_STEPS = [1, 7 / 8, 3 / 4, 5 / 8, 1 / 2, 3 / 8, 1 / 4, 1 / 8];
/** Replicas per container kept, as a share (services on a GPU; the renderer has one anyway). */
const REPLICA_STEPS = [1, 3 / 4, 1 / 2, 1 / 4];

export interface FitInput {
  failed: Topology;
  /** Conservative GiB per GPU in use (the suggester's limitView). */
  predict: (t: Topology) => GpuPrediction[];
  gpuMemoryGiB: number;
  /** Validation problems of a topology (empty when valid). */
  problems: (t: Topology) => string[];
}

export interface Fitted {
  topology: Topology;
  change: string;
  /** Peak conservative prediction of the failed topology and of the fitted one. */
  before: GpuPrediction;
  after: GpuPrediction;
}

const peakOf = (ps: GpuPrediction[]): GpuPrediction =>
  ps.reduce((a, b) => (b.gib > a.gib ? b : a), { gpu: -1, gib: 0, fraction: 0 });

/** The largest topologies (up to `count`, largest first) predicted within the 90% line. */
export function fitInMemory(input: FitInput, count = 1): Fitted[] {
  const limit = GPU_MEMORY_LIMITS.error * input.gpuMemoryGiB;
  const failed = input.failed;
  const onGpu = activeServices(failed).filter((s) => gpusOf(failed, s) !== null && replicas(failed, s) > 1);
  const total = inFlight(failed);
  const found: { t: Topology; flight: number; inst: number; gib: number; change: string }[] = [];
  const seen = new Set<string>();
  for (const keepTotal of TOTAL_STEPS) {
    for (const keepReplicas of REPLICA_STEPS) {
      if (keepReplicas < 1 && onGpu.length === 0) continue;
      const t = clone(failed);
      const target = Math.max(1, Math.round(total * keepTotal));
      const changes: string[] = [];
      for (const svc of onGpu) {
        const r = replicas(t, svc);
        const next = Math.max(1, Math.round(r * keepReplicas));
        if (next !== r) {
          setReplicas(t, svc, next);
          changes.push(`${svc} replicas_per_container ${r} → ${next}`);
        }
      }
      for (const svc of activeServices(t)) retarget(t, svc, target);
      if (inFlight(t) !== total) changes.unshift(`rollouts in flight ${total} → ${inFlight(t)}`);
      const key = JSON.stringify(t);
      if (changes.length === 0 || seen.has(key)) continue;
      seen.add(key);
      const predicted = input.predict(t);
      const peak = peakOf(predicted);
      if (peak.gib > limit || input.problems(t).length > 0) continue;
      const inst = activeServices(t).reduce((a, s) => a + instances(t, s as ServiceName), 0);
      found.push({ t, flight: inFlight(t), inst, gib: peak.gib, change: changes.join(', ') });
    }
  }
  found.sort((a, b) => b.flight - a.flight || b.inst - a.inst || a.gib - b.gib);
  // one per size: the largest, then the largest with fewer rollouts in flight (a hedge on the model)
  const picked = found.filter((f, i) => found.findIndex((g) => g.flight === f.flight) === i);
  const before = peakOf(input.predict(failed));
  return picked.slice(0, count).map((f) => ({
    topology: f.t,
    change: f.change,
    before,
    after: peakOf(input.predict(f.t)),
  }));
}
