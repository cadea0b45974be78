// Small pure helpers the moves are written with: expanding a candidate over its base preset,
// reading and writing a service's knobs, and the per-GPU instance counts.
import { CACHE_KEYS, DEFAULT_PHYSICS_CACHE_SIZE, SERVICES, type ServiceName } from '../catalog/alpasim.js';
import { activeServices, capacity, capacitySummary, containers } from '../topology/capacity.js';
import type { Topology } from '../types/generated/topology.js';

export function clone<T>(value: T): T {
  return structuredClone(value);
}

export function replicas(t: Topology, svc: ServiceName): number {
  return t.services?.[svc]?.replicas_per_container ?? 1;
}

export function concurrency(t: Topology, svc: ServiceName): number {
  return t.runtime?.endpoints?.[svc]?.n_concurrent_rollouts ?? 1;
}

/** Service instances: containers × replicas per container. */
export function instances(t: Topology, svc: ServiceName): number {
  return containers(t, svc) * replicas(t, svc);
}

export function gpusOf(t: Topology, svc: ServiceName): number[] | null {
  const gpus = t.services?.[svc]?.gpus;
  return Array.isArray(gpus) ? [...gpus] : null;
}

export function setGpus(t: Topology, svc: ServiceName, gpus: number[]): void {
  const service = t.services?.[svc];
  if (!service) throw new Error(`service ${svc} is not in the topology`);
  service.gpus = [...gpus].sort((a, b) => a - b) as [number, ...number[]];
}

export function setReplicas(t: Topology, svc: ServiceName, value: number): void {
  const service = t.services?.[svc];
  if (!service) throw new Error(`service ${svc} is not in the topology`);
  service.replicas_per_container = value;
}

export function setConcurrency(t: Topology, svc: ServiceName, value: number): void {
  t.runtime ??= {};
  t.runtime.endpoints ??= {};
  t.runtime.endpoints[svc] = { ...(t.runtime.endpoints[svc] ?? {}), n_concurrent_rollouts: value };
}

export function cacheSize(t: Topology, svc: 'renderer' | 'physics'): number | undefined {
  const value = t.defines?.[CACHE_KEYS[svc]];
  if (value !== undefined) return value;
  return svc === 'physics' ? DEFAULT_PHYSICS_CACHE_SIZE : undefined;
}

export function setCacheSize(t: Topology, svc: 'renderer' | 'physics', value: number): void {
  t.defines ??= {};
  t.defines[CACHE_KEYS[svc]] = value;
}

export function nrWorkers(t: Topology): number {
  return t.runtime?.nr_workers ?? 1;
}

export function inFlight(t: Topology): number {
  return capacitySummary(t).inFlight;
}

/** Instances of each service on each GPU (repeated entries and replicas counted). */
export function instancesByGpu(t: Topology): Map<number, Partial<Record<ServiceName, number>>> {
  const out = new Map<number, Partial<Record<ServiceName, number>>>();
  for (const svc of activeServices(t)) {
    const gpus = gpusOf(t, svc);
    if (!gpus) continue;
    for (const gpu of gpus) {
      const row = out.get(gpu) ?? {};
      row[svc] = (row[svc] ?? 0) + replicas(t, svc);
      out.set(gpu, row);
    }
  }
  return out;
}

/** Services that can take a GPU (everything but CPU-only ones currently on CPU). */
export function isGpuService(t: Topology, svc: ServiceName): boolean {
  return gpusOf(t, svc) !== null;
}

export { activeServices, capacity, containers, SERVICES };
