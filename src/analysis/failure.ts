// Failures (classified by the Slurm adapter) turned into a message with evidence and a likely fix. Pure.
import { CACHE_KEYS, GPU_MEMORY_LIMITS, type ServiceName } from '../catalog/alpasim.js';
import { activeServices, gpuMap } from '../topology/capacity.js';
import type { Failure, GpuUsage } from '../types/generated/metrics.js';
import type { Topology } from '../types/generated/topology.js';
import { round } from './series.js';

export interface GpuShare {
  service: ServiceName;
  instances: number;
  /** Share of the GPU's service instances (a proxy for its memory share when no profile is known). */
  share: number;
}

/** Service instances on one GPU: repeated entries × replicas_per_container, and their shares. */
export function instancesOnGpu(topology: Topology, gpu: number): GpuShare[] {
  const rows: Array<{ service: ServiceName; instances: number }> = [];
  for (const svc of activeServices(topology)) {
    const gpus = topology.services?.[svc]?.gpus;
    if (!Array.isArray(gpus)) continue;
    const containers = gpus.filter((g) => g === gpu).length;
    if (!containers) continue;
    rows.push({
      service: svc,
      instances: containers * (topology.services?.[svc]?.replicas_per_container ?? 1),
    });
  }
  const total = rows.reduce((a, r) => a + r.instances, 0);
  return rows.map((r) => ({ ...r, share: total ? round(r.instances / total, 3) : 0 }));
}

export interface FailureContext {
  topology?: Topology;
  /** Last known per-GPU usage, keyed by GPU index. */
  gpus?: Record<string, GpuUsage>;
}

const FIXES: Record<Failure['kind'], string> = {
  'gpu-oom': 'lower the instances or cache sizes on that GPU, or move a service to a GPU with headroom',
  'host-oom': 'fewer CPU replicas or runtime workers, or smaller scene caches (host memory holds them too)',
  crash:
    'read the service logs under txt-logs/ in the run directory; a crash unrelated to topology is not a verdict on it',
  'node-failure': 'resubmit: the node failed, not the topology',
  'time-limit': 'the run hit its wall time; the verdict uses the data up to then',
  cancelled: 'cancelled by a person or by stop_when_stable; resubmit if the data is not enough',
  preempted: 'preempted by Slurm; AlpaSim requeues: wait for the requeued job',
  'no-telemetry':
    'no metrics appeared: check the file-SD folder and that Prometheus reaches the compute node',
};

export function explainFailure(failure: Failure, ctx: FailureContext = {}): Failure {
  const evidence = [...(failure.evidence ?? [])];
  if (failure.slurm_state)
    evidence.push(
      `Slurm state ${failure.slurm_state}${failure.exit_code ? `, exit code ${failure.exit_code}` : ''}`,
    );
  let message = failure.message;
  let fix = failure.likely_fix ?? FIXES[failure.kind];
  if (failure.kind === 'gpu-oom' && ctx.topology) {
    const map = gpuMap(ctx.topology);
    const gpu = failure.gpu ?? null;
    if (gpu !== null) {
      const shares = instancesOnGpu(ctx.topology, gpu);
      const list = shares.map((s) => `${s.service} ×${s.instances} (${round(100 * s.share, 0)}%)`).join(', ');
      message = `GPU ${gpu} ran out of memory; it holds ${list || 'no service of the topology'}.`;
      const usage = ctx.gpus?.[String(gpu)];
      if (usage?.memory_used_gb?.max != null && usage.memory_total_gb)
        evidence.push(
          `GPU ${gpu} memory peaked at ${usage.memory_used_gb.max} of ${usage.memory_total_gb} GB`,
        );
      const biggest = [...shares].sort((a, b) => b.instances - a.instances)[0];
      const spare = [...map.keys()].filter((g) => g !== gpu && isSpare(ctx.gpus?.[String(g)]));
      const cacheKey =
        biggest && biggest.service in CACHE_KEYS
          ? CACHE_KEYS[biggest.service as keyof typeof CACHE_KEYS]
          : undefined;
      fix = biggest
        ? `reduce ${biggest.service} on GPU ${gpu} (${biggest.instances} instances${cacheKey ? `, or defines.${cacheKey}` : ''})${spare.length ? ` or move one to GPU ${spare.join('/')} which has headroom` : ''}`
        : fix;
    } else {
      const loaded = [...map.entries()].sort((a, b) => b[1].length - a[1].length)[0];
      message = `a GPU ran out of memory (the log does not say which)${loaded ? `; the most shared is GPU ${loaded[0]} with ${loaded[1].join(', ')}` : ''}.`;
    }
  }
  return { ...failure, message, evidence, likely_fix: fix };
}

function isSpare(u: GpuUsage | undefined): boolean {
  if (!u?.memory_total_gb || u.memory_used_gb?.max == null) return false;
  return u.memory_used_gb.max / u.memory_total_gb < GPU_MEMORY_LIMITS.warning - 0.2;
}
