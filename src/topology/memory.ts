// Predicted GPU memory per GPU from a memory model (GiB per service replica, GiB per cached scene,
// a fixed overhead per GPU in use). Pure and model-agnostic: the model may come from clusters.yaml or
// be fitted from measurements, as long as it has the MemoryModel shape.
import { CACHE_KEYS, GPU_MEMORY_LIMITS, SERVICES, type ServiceName } from '../catalog/alpasim.js';
import type { MemoryModel } from '../types/generated/clusters.js';
import type { Topology } from '../types/generated/topology.js';
import { activeServices } from './capacity.js';

export interface ServiceMemory {
  service: ServiceName;
  /** Service instances (containers × replicas_per_container) on this GPU. */
  instances: number;
  /** instances × GiB per replica. */
  replicaGiB: number;
  /** Scenes cached by these instances (0 for services without a scene cache). */
  cachedScenes: number;
  /** cachedScenes × GiB per cached scene. */
  cacheGiB: number;
}

export interface GpuMemoryPrediction {
  gpu: number;
  services: ServiceMemory[];
  overheadGiB: number;
  totalGiB: number;
  capacityGiB: number;
  /** totalGiB ÷ capacityGiB. */
  fraction: number;
  level: 'ok' | 'warning' | 'error';
}

/** One row per GPU index used by an active (non-skipped) service, sorted by index. */
export function predictGpuMemory(
  topology: Topology,
  memoryModel: MemoryModel,
  gpuMemoryGiB: number,
): GpuMemoryPrediction[] {
  const perGpu = new Map<number, Map<ServiceName, number>>();
  const active = new Set(activeServices(topology));
  for (const svc of SERVICES) {
    if (!active.has(svc)) continue;
    const gpus = topology.services?.[svc]?.gpus;
    if (!Array.isArray(gpus)) continue;
    const replicas = topology.services?.[svc]?.replicas_per_container ?? 1;
    for (const gpu of gpus) {
      const row = perGpu.get(gpu) ?? new Map<ServiceName, number>();
      row.set(svc, (row.get(svc) ?? 0) + replicas);
      perGpu.set(gpu, row);
    }
  }
  const overhead = memoryModel.per_gpu_overhead_gib ?? 0;
  return [...perGpu.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([gpu, row]) => {
      const services: ServiceMemory[] = [...row.entries()].map(([svc, instances]) => {
        const cacheKey = (
          CACHE_KEYS as Partial<Record<ServiceName, 'nre_cache_size' | 'physics_cache_size'>>
        )[svc];
        const perScene = (
          memoryModel.per_cached_scene_gib as Partial<Record<ServiceName, number>> | undefined
        )?.[svc];
        // Each instance is its own server process with its own scene cache.
        const cachedScenes =
          cacheKey && perScene !== undefined ? instances * (topology.defines?.[cacheKey] ?? 0) : 0;
        return {
          service: svc,
          instances,
          replicaGiB: instances * (memoryModel.per_replica_gib[svc] ?? 0),
          cachedScenes,
          cacheGiB: cachedScenes * (perScene ?? 0),
        };
      });
      const totalGiB = overhead + services.reduce((s, m) => s + m.replicaGiB + m.cacheGiB, 0);
      const fraction = gpuMemoryGiB > 0 ? totalGiB / gpuMemoryGiB : Number.POSITIVE_INFINITY;
      const level: GpuMemoryPrediction['level'] =
        fraction > GPU_MEMORY_LIMITS.error
          ? 'error'
          : fraction > GPU_MEMORY_LIMITS.warning
            ? 'warning'
            : 'ok';
      return { gpu, services, overheadGiB: overhead, totalGiB, capacityGiB: gpuMemoryGiB, fraction, level };
    });
}
