// Resources per GPU and host memory, with the services the topology puts on each GPU, and the
// opportunities they show. Pure.
import { GPU_MEMORY_LIMITS, type ServiceName } from '../catalog/alpasim.js';
import type { Bottleneck, GpuUsage, StableMetrics } from '../types/generated/metrics.js';
import { minMeanMax, round } from './series.js';

export type ResourceUsage = NonNullable<StableMetrics['resource_usage']>;

export interface GpuSamples {
  utilization?: number[];
  memoryUsedGb?: number[];
  memoryTotalGb?: number[];
  /** DCGM_FI_DEV_FB_FREE (GB): what a new allocation can still get. */
  memoryFreeGb?: number[];
  pressurePercent?: number[];
}

export interface ResourcesInput {
  gpus: Map<string, GpuSamples>;
  /** gpuMap(topology): services on each GPU index. */
  services?: Map<number, ServiceName[]>;
  hostAvailableGb?: number[];
  hostTotalGb?: number[];
  processCpu?: Map<string, number[]>;
}

export function analyseResources(input: ResourcesInput): ResourceUsage {
  const gpu_by_index: Record<string, GpuUsage> = {};
  const indices = new Set<string>([...input.gpus.keys(), ...[...(input.services?.keys() ?? [])].map(String)]);
  for (const gpu of [...indices].sort((a, b) => Number(a) - Number(b))) {
    const s = input.gpus.get(gpu) ?? {};
    const used = minMeanMax(s.memoryUsedGb ?? []);
    const totals = (s.memoryTotalGb ?? []).filter(Number.isFinite);
    const total = totals.length ? round(Math.max(...totals)) : null;
    // DCGM's free framebuffer when exported; total − used overstates it by the driver-reserved memory
    const free = (s.memoryFreeGb ?? []).filter(Number.isFinite);
    const headroom = free.length
      ? round(Math.min(...free))
      : total !== null && used.max !== null
        ? round(total - used.max)
        : null;
    gpu_by_index[gpu] = {
      topology_services: input.services?.get(Number(gpu)) ?? [],
      utilization_percent: minMeanMax(s.utilization ?? []),
      memory_used_gb: used,
      memory_total_gb: total,
      memory_pressure_percent: minMeanMax(s.pressurePercent ?? []),
      memory_headroom_gb_min: headroom,
    };
  }
  const avail = (input.hostAvailableGb ?? []).filter(Number.isFinite);
  const totals = (input.hostTotalGb ?? []).filter(Number.isFinite);
  const cpu: Record<string, ReturnType<typeof minMeanMax>> = {};
  for (const [g, v] of [...(input.processCpu ?? new Map()).entries()].sort()) cpu[g] = minMeanMax(v);
  return {
    process_cpu_utilization_percent_by_group: cpu,
    gpu_by_index,
    host_memory: {
      available_gb_min: avail.length ? round(Math.min(...avail)) : null,
      total_gb: totals.length ? round(Math.max(...totals)) : null,
    },
  };
}

/** Spare memory next to a bottleneck, idle GPUs, memory at the out-of-memory limit. */
export function opportunities(usage: ResourceUsage, bottleneck?: Bottleneck): string[] {
  const out: string[] = [];
  for (const [gpu, u] of Object.entries(usage.gpu_by_index ?? {})) {
    const total = u.memory_total_gb ?? null;
    const peak = u.memory_used_gb?.max ?? null;
    const util = u.utilization_percent?.mean ?? null;
    const services = u.topology_services ?? [];
    if (total && peak !== null && peak / total > GPU_MEMORY_LIMITS.error)
      out.push(
        `GPU ${gpu} peaks at ${round((100 * peak) / total, 0)}% memory (> ${100 * GPU_MEMORY_LIMITS.error}%): out-of-memory risk, do not add to it`,
      );
    else if (!services.length && (util === null || util < 5))
      out.push(
        `GPU ${gpu} runs no service${util !== null ? ` (${round(util, 0)}% busy)` : ''}: place instances of the bottleneck service there`,
      );
    else if (total && peak !== null && util !== null && util < 50 && peak / total < 0.6) {
      const headroom = round(total - peak, 1);
      const target =
        bottleneck?.kind === 'service' && bottleneck.service
          ? `the bottleneck ${bottleneck.service}`
          : 'the bottleneck service';
      out.push(
        `GPU ${gpu} (${services.join(', ') || 'no services'}) is ${round(util, 0)}% busy with ${headroom} GB free: room for instances of ${target}`,
      );
    }
  }
  const host = usage.host_memory;
  if (host?.available_gb_min != null && host.total_gb && host.available_gb_min / host.total_gb < 0.1)
    out.push(
      `host memory down to ${host.available_gb_min} GB free of ${host.total_gb} GB: host out-of-memory risk`,
    );
  return out;
}
