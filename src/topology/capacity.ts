// Capacity as AlpaSim's runtime computes it: containers × replicas_per_container × n_concurrent_rollouts.
import { SERVICES, type ServiceName } from '../catalog/alpasim.js';
import type { Topology } from '../types/generated/topology.js';

/** Containers of a service: the length of `gpus`, or 1 for a CPU container (`gpus: null`). */
export function containers(topology: Topology, svc: ServiceName): number {
  const gpus = topology.services?.[svc]?.gpus;
  return Array.isArray(gpus) ? gpus.length : 1;
}

/** True when the service is disabled (`runtime.endpoints.<svc>.skip`). */
export function isSkipped(topology: Topology, svc: ServiceName): boolean {
  return topology.runtime?.endpoints?.[svc]?.skip === true;
}

/** Services present in the topology and not skipped. */
export function activeServices(topology: Topology): ServiceName[] {
  return SERVICES.filter((svc) => topology.services?.[svc] !== undefined && !isSkipped(topology, svc));
}

/** Rollouts a service can hold in flight. */
export function capacity(topology: Topology, svc: ServiceName): number {
  const replicas = topology.services?.[svc]?.replicas_per_container ?? 1;
  const concurrency = topology.runtime?.endpoints?.[svc]?.n_concurrent_rollouts ?? 1;
  return containers(topology, svc) * replicas * concurrency;
}

export interface CapacitySummary {
  byService: Partial<Record<ServiceName, number>>;
  /** Rollouts in flight: the minimum capacity over active services. */
  inFlight: number;
  /** The service(s) whose capacity binds. */
  binding: ServiceName[];
  /** Largest ÷ smallest capacity over active services. */
  imbalance: number;
}

export function capacitySummary(topology: Topology): CapacitySummary {
  const byService: Partial<Record<ServiceName, number>> = {};
  for (const svc of activeServices(topology)) byService[svc] = capacity(topology, svc);
  const values = Object.values(byService);
  const inFlight = values.length ? Math.min(...values) : 0;
  const max = values.length ? Math.max(...values) : 0;
  return {
    byService,
    inFlight,
    binding: activeServices(topology).filter((s) => byService[s] === inFlight),
    imbalance: inFlight > 0 ? max / inFlight : Number.POSITIVE_INFINITY,
  };
}

/** Which services sit on each GPU index (a service appears once per GPU even when repeated). */
export function gpuMap(topology: Topology): Map<number, ServiceName[]> {
  const map = new Map<number, ServiceName[]>();
  for (const svc of activeServices(topology)) {
    const gpus = topology.services?.[svc]?.gpus;
    if (!Array.isArray(gpus)) continue;
    for (const gpu of gpus) {
      const list = map.get(gpu) ?? [];
      if (!list.includes(svc)) list.push(svc);
      map.set(gpu, list);
    }
  }
  return new Map([...map.entries()].sort((a, b) => a[0] - b[0]));
}
