// What the monitor posts for a run of the twin, from the twin's steady state with the noise of its
// gauges: queue depth max/min over workers (each worker's gauge draws round(m + √m·Z), floored at 0,
// as the twin's engine writes it; averaged over the steady scrapes), idle fraction, GPU utilisation
// and memory, process CPU, the analysis' bottleneck. The seconds per rollout come from the run's own
// trace (its verdict), not from here.
import { analyseBottleneck } from '../../src/analysis/bottleneck.js';
import { METRIC_SERVICE_LABEL, type ServiceName } from '../../src/catalog/alpasim.js';
import type { SteadyState } from '../../src/sim/model.js';
import type { Rng } from '../../src/sim/rng.js';
import { activeServices, capacity, gpuMap } from '../../src/topology/capacity.js';
import type { StableMetrics } from '../../src/types/generated/metrics.js';
import type { Topology } from '../../src/types/generated/topology.js';

const SCRAPES = 40;

type GpuUsage = NonNullable<NonNullable<StableMetrics['resource_usage']>['gpu_by_index']>;

/**
 * The twin's gauges as the monitor posts them. The draws keep one order (queues, CPU, idle, GPUs), so
 * a seed gives the same metrics.
 */
export function stableMetrics(topology: Topology, ss: SteadyState, rng: Rng): StableMetrics {
  const { queueMax, queueMin, queues } = queueDepths(topology, ss, rng);
  const { processCpu, cpuMean } = processCpuUsage(ss, rng);
  const idle = round(Math.min(1, Math.max(0, ss.idleFraction + 0.005 * rng.normal())));
  const capacities: Partial<Record<ServiceName, number>> = {};
  for (const svc of activeServices(topology)) capacities[svc] = capacity(topology, svc);
  const bottleneck = analyseBottleneck({
    queueMax,
    queueMin,
    idleFraction: idle,
    processCpu: cpuMean,
    capacity: capacities,
    inFlight: ss.inFlight,
  });
  return {
    rpc_queue_depth_at_start_latest_by_service: queues,
    runtime_idle_fraction: idle,
    resource_usage: {
      gpu_by_index: gpuUsage(topology, ss, rng),
      process_cpu_utilization_percent_by_group: processCpu,
    },
    bottleneck,
  };
}

/** Per service, the max and min over workers of each scrape's queue depth, averaged over the scrapes. */
function queueDepths(topology: Topology, ss: SteadyState, rng: Rng) {
  const workers = Math.max(1, topology.runtime?.nr_workers ?? 1);
  const queueMax: Partial<Record<ServiceName, number>> = {};
  const queueMin: Partial<Record<ServiceName, number>> = {};
  const queues: Record<string, { worker_min: number; worker_max: number }> = {};
  for (const svc of activeServices(topology)) {
    const m = ss.queueDepth[METRIC_SERVICE_LABEL[svc]] ?? 0;
    let max = 0;
    let min = 0;
    for (let k = 0; k < SCRAPES; k++) {
      let hi = 0;
      let lo = Number.POSITIVE_INFINITY;
      for (let w = 0; w < workers; w++) {
        const d = Math.max(0, Math.round(m + Math.sqrt(m) * rng.normal()));
        hi = Math.max(hi, d);
        lo = Math.min(lo, d);
      }
      max += hi / SCRAPES;
      min += lo / SCRAPES;
    }
    queueMax[svc] = round(max);
    queueMin[svc] = round(min);
    queues[svc] = { worker_min: queueMin[svc]!, worker_max: queueMax[svc]! };
  }
  return { queueMax, queueMin, queues };
}

/** Each process group's CPU (percent of a core), with 3% noise. */
function processCpuUsage(ss: SteadyState, rng: Rng) {
  const processCpu: Record<string, { min: number; mean: number; max: number }> = {};
  const cpuMean: Record<string, number> = {};
  for (const [group, cores] of Object.entries(ss.cpuCores)) {
    const mean = round(100 * cores * (1 + 0.03 * rng.normal()));
    processCpu[group] = { min: round(mean * 0.9), mean, max: round(mean * 1.1) };
    cpuMean[group] = mean;
  }
  return { processCpu, cpuMean };
}

/** Utilisation and memory of each GPU a service uses. */
function gpuUsage(topology: Topology, ss: SteadyState, rng: Rng): GpuUsage {
  const services = gpuMap(topology);
  const gpuByIndex: GpuUsage = {};
  ss.gpuMemoryGb.forEach((gb, gpu) => {
    if (!services.has(gpu)) return;
    const util = Math.min(100, Math.max(0, 100 * (ss.gpuUtilization[gpu] ?? 0) + 1.5 * rng.normal()));
    gpuByIndex[String(gpu)] = {
      topology_services: services.get(gpu) ?? [],
      utilization_percent: {
        min: round(Math.max(0, util - 8)),
        mean: round(util),
        max: round(Math.min(100, util + 8)),
      },
      memory_used_gb: { min: round(gb * 0.9), mean: round(gb), max: round(gb) },
      memory_total_gb: ss.gpuMemoryTotalGb,
      memory_headroom_gb_min: round(ss.gpuMemoryTotalGb * 0.994 - gb),
    };
  });
  return gpuByIndex;
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
