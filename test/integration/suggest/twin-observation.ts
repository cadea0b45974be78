// The twin's steady state turned into the observation the monitor would post for a stable run:
// queue depths by service (max/min over workers around the model's mean), runtime idle fraction,
// per-GPU utilisation and memory, the analysis' bottleneck verdict, and the comparison with the
// current best. Shared by the suggest benchmark and the suggest integration tests.
import { analyseBottleneck } from '../../../src/analysis/bottleneck.js';
import { METRIC_SERVICE_LABEL, type ServiceName } from '../../../src/catalog/alpasim.js';
import { type SteadyState, steadyState } from '../../../src/sim/model.js';
import type { TriedCandidate } from '../../../src/suggest/types.js';
import { activeServices, capacity, gpuMap } from '../../../src/topology/capacity.js';
import type { Decision, Interval } from '../../../src/types/generated/metrics.js';
import type { Topology } from '../../../src/types/generated/topology.js';
import type { TwinProfile } from '../../../src/types/generated/twin-profile.js';

/** Relative half-width of the detector's 95% interval on a stable value. */
export const CI = 0.015;

export interface Measured {
  seconds?: number;
  oom: boolean;
  observation: NonNullable<TriedCandidate['observation']>;
}

export function interval(v: number): Interval {
  return { value: v, low: v * (1 - CI), high: v * (1 + CI) };
}

export function measure(
  topology: Topology,
  profile: TwinProfile,
  best?: { name: string; seconds: number },
): Measured {
  const ss: SteadyState = steadyState(topology, profile);
  if (ss.oom) {
    return {
      oom: true,
      observation: {
        failure: {
          kind: 'gpu-oom',
          message: `CUDA out of memory on GPU ${ss.oom.gpu} (${ss.oom.usedGb.toFixed(1)} of ${ss.oom.totalGb} GiB in use)`,
          gpu: ss.oom.gpu,
        },
      },
    };
  }
  const queueMax: Partial<Record<ServiceName, number>> = {};
  const queueMin: Partial<Record<ServiceName, number>> = {};
  const queues: Record<string, { worker_min: number; worker_max: number }> = {};
  for (const svc of activeServices(topology)) {
    const depth = ss.queueDepth[METRIC_SERVICE_LABEL[svc]] ?? 0;
    // The recording rules' max/min over workers of the latest gauge, around the mean the model gives.
    queueMax[svc] = Math.round(depth * 1.2 * 10) / 10;
    queueMin[svc] = Math.round(depth * 0.8 * 10) / 10;
    queues[svc] = { worker_min: queueMin[svc]!, worker_max: queueMax[svc]! };
  }
  const processCpu: Record<string, number> = {};
  for (const [group, cores] of Object.entries(ss.cpuCores)) processCpu[group] = cores * 100;
  const capacities: Partial<Record<ServiceName, number>> = {};
  for (const svc of activeServices(topology)) capacities[svc] = capacity(topology, svc);
  const bottleneck = analyseBottleneck({
    queueMax,
    queueMin,
    idleFraction: ss.idleFraction,
    capacity: capacities,
    inFlight: ss.inFlight,
  });
  const services = gpuMap(topology);
  const gpuByIndex: Record<string, object> = {};
  ss.gpuMemoryGb.forEach((gb, gpu) => {
    if (!services.has(gpu)) return;
    gpuByIndex[String(gpu)] = {
      topology_services: services.get(gpu),
      utilization_percent: { min: 0, mean: (ss.gpuUtilization[gpu] ?? 0) * 100, max: 100 },
      memory_used_gb: { min: gb, mean: gb, max: gb },
      memory_total_gb: ss.gpuMemoryTotalGb,
      memory_headroom_gb_min: ss.gpuMemoryTotalGb - gb,
    };
  });
  const value = interval(ss.secondsPerRollout);
  return {
    seconds: ss.secondsPerRollout,
    oom: false,
    observation: {
      verdict: { state: 'stable', value, projected_full_run: value, evidence: [] },
      stable_metrics: {
        seconds_per_rollout_full_run: ss.secondsPerRollout,
        rpc_queue_depth_at_start_latest_by_service: queues,
        runtime_idle_fraction: ss.idleFraction,
        resource_usage: { gpu_by_index: gpuByIndex },
        bottleneck,
      },
      ...(best ? { decision: decisionAgainst(value, interval(best.seconds), best.name) } : {}),
    },
  };
}

/**
 * The decision the measured value reads as against the best (both 95% intervals combined on the
 * log scale): better when the whole interval of the change is below 0, worse above, else equivalent.
 */
function decisionAgainst(candidate: Interval, best: Interval, name: string): Decision {
  const rel = (i: Interval) => Math.max(i.high - i.value, i.value - i.low, 0) / 1.96 / i.value;
  const ratio = candidate.value / best.value;
  const s = Math.hypot(rel(candidate), rel(best));
  const change = {
    value: ratio - 1,
    low: ratio * Math.exp(-1.96 * s) - 1,
    high: ratio * Math.exp(1.96 * s) - 1,
  };
  return {
    state: change.high < 0 ? 'better' : change.low > 0 ? 'worse' : 'equivalent',
    reference: { role: 'current best', name, pr: null },
    relative_change: change,
    min_improvement: 0,
    evidence: [],
  };
}
