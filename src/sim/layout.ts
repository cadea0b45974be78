// Where the twin's service instances sit and how much memory they take: pure, from a topology and a profile.
import { CACHE_KEYS, DEFAULT_PHYSICS_CACHE_SIZE, type ServiceName } from '../catalog/alpasim.js';
import { activeServices } from '../topology/capacity.js';
import type { Topology } from '../types/generated/topology.js';
import type { TwinProfile } from '../types/generated/twin-profile.js';

/** One service instance (a replica inside a container). */
export interface Instance {
  service: ServiceName;
  /** GPU index, or null for a CPU container. */
  gpu: number | null;
  container: number;
}

export interface ServiceLayout {
  service: ServiceName;
  containers: number;
  replicasPerContainer: number;
  concurrency: number;
  /** containers × replicas × concurrency (AlpaSim's rule). */
  capacity: number;
  instances: Instance[];
  /** Scenes the service keeps loaded per instance (renderer, physics), else undefined. */
  cacheSize?: number;
}

export interface GpuMemory {
  gpu: number;
  totalGb: number;
  usedGb: number;
  /** What sits on the GPU: `<service>×<instances>` entries. */
  parts: { service: ServiceName; instances: number; gb: number }[];
  /** Containers sharing the GPU (time slicing). */
  containers: number;
}

export interface Layout {
  services: ServiceLayout[];
  inFlight: number;
  nrWorkers: number;
  gpus: GpuMemory[];
  hostMemoryGb: number;
}

export function cacheSize(topology: Topology, svc: ServiceName): number | undefined {
  if (svc === 'renderer') return topology.defines?.[CACHE_KEYS.renderer] ?? undefined;
  if (svc === 'physics') return topology.defines?.[CACHE_KEYS.physics] ?? DEFAULT_PHYSICS_CACHE_SIZE;
  return undefined;
}

export function layout(topology: Topology, profile: TwinProfile): Layout {
  const services: ServiceLayout[] = [];
  for (const svc of activeServices(topology)) {
    const spec = topology.services?.[svc];
    const gpus = Array.isArray(spec?.gpus) ? spec.gpus : [null];
    const replicas = spec?.replicas_per_container ?? 1;
    const concurrency = topology.runtime?.endpoints?.[svc]?.n_concurrent_rollouts ?? 1;
    const instances: Instance[] = [];
    gpus.forEach((gpu, container) => {
      for (let r = 0; r < replicas; r++) instances.push({ service: svc, gpu, container });
    });
    const cache = cacheSize(topology, svc);
    services.push({
      service: svc,
      containers: gpus.length,
      replicasPerContainer: replicas,
      concurrency,
      capacity: gpus.length * replicas * concurrency,
      instances,
      ...(cache !== undefined ? { cacheSize: cache } : {}),
    });
  }
  const inFlight = services.length ? Math.min(...services.map((s) => s.capacity)) : 0;
  const gpus: GpuMemory[] = [];
  for (let g = 0; g < profile.gpu.count; g++) {
    gpus.push({ gpu: g, totalGb: profile.gpu.memory_gb, usedGb: 0, parts: [], containers: 0 });
  }
  let hostMemoryGb =
    (profile.host.base_used_gb ?? 0) + (profile.runtime.memory_gb ?? 0) * nrWorkers(topology);
  for (const s of services) {
    const cost = profile.services[s.service];
    const perInstance = (cost.memory_gb ?? 0) + (s.cacheSize ?? 0) * (cost.scene_memory_gb ?? 0);
    hostMemoryGb += (cost.host_memory_gb ?? 0) * s.instances.length;
    const containersOn = new Map<number, number>();
    const instancesOn = new Map<number, number>();
    for (const inst of s.instances) {
      if (inst.gpu === null) continue;
      instancesOn.set(inst.gpu, (instancesOn.get(inst.gpu) ?? 0) + 1);
    }
    const spec = topology.services?.[s.service];
    if (Array.isArray(spec?.gpus))
      for (const g of spec.gpus) containersOn.set(g, (containersOn.get(g) ?? 0) + 1);
    for (const [g, n] of instancesOn) {
      const entry = gpus[g];
      if (!entry) continue; // index beyond the node: refused earlier by the override parser
      const gb = n * perInstance + (containersOn.get(g) ?? 0) * (profile.gpu.context_gb ?? 0);
      entry.parts.push({ service: s.service, instances: n, gb });
      entry.usedGb += gb;
      entry.containers += containersOn.get(g) ?? 0;
    }
  }
  return { services, inFlight, nrWorkers: nrWorkers(topology), gpus, hostMemoryGb };
}

export function nrWorkers(topology: Topology): number {
  return Math.max(1, topology.runtime?.nr_workers ?? 1);
}

/** The first GPU whose predicted memory exceeds its size, with the allocation that tips it over. */
export function predictedOom(
  l: Layout,
): { gpu: number; triedGb: number; usedGb: number; totalGb: number } | undefined {
  for (const g of l.gpus) {
    if (g.usedGb <= g.totalGb) continue;
    let acc = 0;
    for (const p of g.parts) {
      const per = p.gb / Math.max(1, p.instances);
      for (let i = 0; i < p.instances; i++) {
        if (acc + per > g.totalGb) return { gpu: g.gpu, triedGb: per, usedGb: acc, totalGb: g.totalGb };
        acc += per;
      }
    }
    return { gpu: g.gpu, triedGb: g.usedGb - g.totalGb, usedGb: g.totalGb, totalGb: g.totalGb };
  }
  return undefined;
}
