// Hand-made inputs for the suggest core: presets from topologies/presets, observations built
// from a "true" memory model so the fit has something to recover.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { ServiceName } from '../../../src/catalog/alpasim.js';
import { predictMemory } from '../../../src/suggest/memory-model.js';
import type { SuggestInput, TriedCandidate } from '../../../src/suggest/types.js';
import { expandPreset } from '../../../src/topology/expand.js';
import type { MemoryModel } from '../../../src/types/generated/clusters.js';
import type { CandidateObservation } from '../../../src/types/generated/metrics.js';
import type { Topology } from '../../../src/types/generated/topology.js';

export function preset(name: string): Topology {
  const text = readFileSync(new URL(`../../../topologies/presets/${name}.yaml`, import.meta.url), 'utf8');
  return expandPreset(parse(text) as Topology);
}

export const TRUE_MODEL: MemoryModel = {
  per_replica_gib: { renderer: 8, driver: 4, physics: 1.5, controller: 0, trafficsim: 6 },
  per_cached_scene_gib: { renderer: 2, physics: 0.5 },
  per_gpu_overhead_gib: 0.5,
};

export interface ObservationSpec {
  seconds: number;
  queues?: Partial<Record<ServiceName, [min: number, max: number]>>;
  idle?: number;
  util?: Record<number, number>;
  bottleneck?: NonNullable<CandidateObservation['stable_metrics']['bottleneck']>;
  decision?: CandidateObservation['decision'];
  memoryModel?: MemoryModel;
  gpuMemoryGiB?: number;
}

export function observe(topology: Topology, spec: ObservationSpec): TriedCandidate['observation'] {
  const total = spec.gpuMemoryGiB ?? 80;
  const gpuByIndex: Record<
    string,
    NonNullable<NonNullable<CandidateObservation['stable_metrics']['resource_usage']>['gpu_by_index']>[string]
  > = {};
  for (const p of predictMemory(topology, spec.memoryModel ?? TRUE_MODEL, total)) {
    gpuByIndex[String(p.gpu)] = {
      memory_used_gb: { min: p.gib * 0.9, mean: p.gib * 0.95, max: p.gib },
      memory_total_gb: total,
      utilization_percent: { min: 0, mean: spec.util?.[p.gpu] ?? 50, max: 100 },
    };
  }
  const queues: Record<string, { worker_min: number; worker_max: number }> = {};
  for (const [svc, [min, max]] of Object.entries(spec.queues ?? {}))
    queues[svc] = { worker_min: min, worker_max: max };
  return {
    verdict: {
      state: 'stable',
      value: { value: spec.seconds, low: spec.seconds * 0.99, high: spec.seconds * 1.01 },
      evidence: [],
    },
    stable_metrics: {
      seconds_per_rollout_full_run: spec.seconds,
      rpc_queue_depth_at_start_latest_by_service: queues,
      ...(spec.idle !== undefined ? { runtime_idle_fraction: spec.idle } : {}),
      resource_usage: { gpu_by_index: gpuByIndex },
      ...(spec.bottleneck ? { bottleneck: spec.bottleneck } : {}),
    },
    ...(spec.decision ? { decision: spec.decision } : {}),
  };
}

export function input(tried: TriedCandidate[], over: Partial<SuggestInput> = {}): SuggestInput {
  return {
    experimentId: 'topology-opt-vam-local-20261202',
    baseTopology: tried[0]?.topology ?? preset('8gpu_64rollouts'),
    cluster: { gpusPerNode: 8, gpuMemoryGiB: 80, cpusPerNode: 64 },
    maxParallel: 3,
    tried,
    ...over,
  };
}
