// GPU memory model learned from measured runs, in the MemoryModel shape src/topology/memory.ts
// predicts with. Per GPU in use:
//   GiB = overhead + Σ_svc instances_on_gpu(svc) × per_replica(svc)
//                  + Σ_{renderer,physics} instances_on_gpu(svc) × cache_size(svc) × per_cached_scene(svc)
// fitted by non-negative least squares over every (run, GPU) with a DCGM memory reading, with a
// ridge pull toward clusters.yaml's memory_model so directions the runs never varied (e.g. the
// cache size when all runs used 17) keep the prior's value instead of an arbitrary split.
import { SERVICES, type ServiceName } from '../catalog/alpasim.js';
import { predictGpuMemory } from '../topology/memory.js';
import type { MemoryModel } from '../types/generated/clusters.js';
import type { Topology } from '../types/generated/topology.js';
import { cacheSize, instancesByGpu } from './topology-ops.js';
import type { FittedMemoryModel, GpuPrediction, TriedCandidate } from './types.js';

/** Used when neither the runs nor clusters.yaml say anything: deliberately pessimistic. */
export const DEFAULT_MEMORY_MODEL: MemoryModel = {
  per_replica_gib: { renderer: 8, driver: 6, physics: 2, controller: 0, trafficsim: 4 },
  per_cached_scene_gib: { renderer: 1, physics: 0.25 },
  per_gpu_overhead_gib: 1,
};

const CACHED: readonly ('renderer' | 'physics')[] = ['renderer', 'physics'];

/** The services on one GPU of a topology, sorted and joined ("driver+physics"). */
export function serviceSet(t: Topology, gpu: number): string {
  const row = instancesByGpu(t).get(gpu) ?? {};
  return (Object.keys(row) as ServiceName[])
    .filter((svc) => (row[svc] ?? 0) > 0)
    .sort()
    .join('+');
}

/** Feature vector of one GPU: [overhead, per-replica × 5 services, per-scene × 2]. */
function features(t: Topology, gpu: number): number[] {
  const row = instancesByGpu(t).get(gpu);
  if (!row) return new Array(1 + SERVICES.length + CACHED.length).fill(0);
  return [
    1,
    ...SERVICES.map((s) => row[s] ?? 0),
    ...CACHED.map((s) => (row[s] ?? 0) * (cacheSize(t, s) ?? 0)),
  ];
}

function toVector(model: MemoryModel): number[] {
  return [
    model.per_gpu_overhead_gib ?? 0,
    ...SERVICES.map((s) => model.per_replica_gib[s] ?? 0),
    ...CACHED.map((s) => model.per_cached_scene_gib?.[s] ?? 0),
  ];
}

function fromVector(x: number[]): MemoryModel {
  const round = (v: number) => Math.round(v * 1000) / 1000;
  const perReplica: MemoryModel['per_replica_gib'] = {};
  SERVICES.forEach((s, i) => {
    perReplica[s as ServiceName] = round(x[1 + i] ?? 0);
  });
  return {
    per_replica_gib: perReplica,
    per_cached_scene_gib: {
      renderer: round(x[1 + SERVICES.length] ?? 0),
      physics: round(x[2 + SERVICES.length] ?? 0),
    },
    per_gpu_overhead_gib: round(x[0] ?? 0),
  };
}

/** Predicted GiB on every GPU the topology uses: the validator's predictGpuMemory, so both agree. */
export function predictMemory(t: Topology, model: MemoryModel, gpuMemoryGiB: number): GpuPrediction[] {
  return predictGpuMemory(t, model, gpuMemoryGiB).map((p) => ({
    gpu: p.gpu,
    gib: p.totalGiB,
    fraction: p.fraction,
  }));
}

/** Solves the square system A x = b by Gaussian elimination with partial pivoting. */
function solve(a: number[][], b: number[]): number[] | undefined {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i] as number]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(m[r]![col]!) > Math.abs(m[pivot]![col]!)) pivot = r;
    if (Math.abs(m[pivot]![col]!) < 1e-12) return undefined;
    [m[col], m[pivot]] = [m[pivot]!, m[col]!];
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const factor = m[r]![col]! / m[col]![col]!;
      for (let c = col; c <= n; c++) m[r]![c]! -= factor * m[col]![c]!;
    }
  }
  return m.map((row, i) => row[n]! / row[i]!);
}

/**
 * Non-negative least squares min ‖A x − b‖² subject to x ≥ 0, exact by enumerating the
 * free set (8 unknowns: 256 small solves), which needs no iteration tolerance.
 */
export function nnls(rows: number[][], b: number[]): number[] {
  const n = rows[0]?.length ?? 0;
  let best: { x: number[]; residual: number } | undefined;
  for (let mask = 0; mask < 1 << n; mask++) {
    const free = [...Array(n).keys()].filter((j) => mask & (1 << j));
    const x = new Array(n).fill(0);
    if (free.length > 0) {
      const ata = free.map((i) => free.map((j) => rows.reduce((s, r) => s + r[i]! * r[j]!, 0)));
      const atb = free.map((i) => rows.reduce((s, r, k) => s + r[i]! * b[k]!, 0));
      const sol = solve(ata, atb);
      if (!sol || sol.some((v) => v < -1e-9)) continue;
      free.forEach((j, k) => {
        x[j] = Math.max(0, sol[k]!);
      });
    }
    const residual = rows.reduce((s, r, k) => s + (r.reduce((t, f, j) => t + f * x[j], 0) - b[k]!) ** 2, 0);
    if (!best || residual < best.residual - 1e-12) best = { x, residual };
  }
  return best?.x ?? new Array(n).fill(0);
}

export interface MemorySample {
  run: string;
  gpu: number;
  topology: Topology;
  gib: number;
}

/** Peak DCGM memory per GPU of every measured run (failed runs included when they reported). */
export function memorySamples(tried: readonly TriedCandidate[]): MemorySample[] {
  const out: MemorySample[] = [];
  for (const run of tried) {
    const byGpu = run.observation?.stable_metrics?.resource_usage?.gpu_by_index ?? {};
    for (const [index, usage] of Object.entries(byGpu)) {
      const gib = usage.memory_used_gb?.max ?? usage.memory_used_gb?.mean;
      const gpu = Number(index);
      if (typeof gib !== 'number' || !Number.isInteger(gpu)) continue;
      out.push({ run: run.name, gpu, topology: run.topology, gib });
    }
  }
  return out;
}

/** Ridge-regularised NNLS toward `prior` (a coefficient vector). */
function fitWithPrior(informative: readonly MemorySample[], prior: readonly number[]): number[] {
  // Ridge weight: small next to the data (each sample weighs 1) but enough to pin unvaried directions.
  const lambda = 0.05;
  const rows: number[][] = [];
  const b: number[] = [];
  for (const s of informative) {
    rows.push(features(s.topology, s.gpu));
    b.push(s.gib);
  }
  prior.forEach((value, j) => {
    const row = new Array(prior.length).fill(0);
    // Features are counts of order 1..100; scale the pull by the column's typical size.
    const colScale = Math.max(1, ...rows.map((r) => Math.abs(r[j]!)));
    row[j] = Math.sqrt(lambda) * colScale;
    rows.push(row);
    b.push(Math.sqrt(lambda) * colScale * value);
  });
  return nnls(rows, b);
}

/** Per GPU, the largest prediction of the fitted model and its envelope: what limits are checked against. */
export function predictConservative(
  t: Topology,
  fitted: FittedMemoryModel,
  gpuMemoryGiB: number,
): GpuPrediction[] {
  const all = [fitted.model, ...(fitted.envelope ?? [])].map((m) => predictMemory(t, m, gpuMemoryGiB));
  return all[0]!.map((row, i) => {
    const gib = Math.max(...all.map((rows) => rows[i]?.gib ?? 0)) + fitted.marginGiB;
    return { gpu: row.gpu, gib, fraction: gib / gpuMemoryGiB };
  });
}

/** Fits the model to the runs; falls back to the prior (or the default) without measurements. */
export function fitMemoryModel(tried: readonly TriedCandidate[], prior?: MemoryModel): FittedMemoryModel {
  const base = prior ?? DEFAULT_MEMORY_MODEL;
  const samples = memorySamples(tried);
  const fallback: FittedMemoryModel = {
    model: base,
    source: prior ? 'prior' : 'default',
    samples: 0,
    maxResidualGiB: 0,
    marginGiB: 0,
    notes: [
      prior
        ? 'no measured GPU memory yet: using clusters.yaml memory_model'
        : 'no measured GPU memory and no memory_model in clusters.yaml: using a pessimistic default',
    ],
  };
  const informative = samples.filter((s) => features(s.topology, s.gpu)[0] === 1);
  if (informative.length === 0) return fallback;

  const p = toVector(base);
  const scale = Math.max(1, ...informative.map((s) => s.gib));
  const x = fitWithPrior(informative, p);
  const model = fromVector(x);
  // Directions the runs never varied are set by the prior alone: refitting with the prior scaled
  // down and up gives models that explain the same readings but split them differently. Limits are
  // checked against the largest of their predictions (an extrapolation guard).
  const envelope = [0.5, 1.5].map((k) =>
    fromVector(
      fitWithPrior(
        informative,
        p.map((v) => v * k),
      ),
    ),
  );
  const residuals = informative.map((s) => {
    const predicted = features(s.topology, s.gpu).reduce((sum, f, j) => sum + f * x[j]!, 0);
    return s.gib - predicted;
  });
  const maxResidualGiB = Math.max(...residuals.map(Math.abs));
  // Readings above the model's line: the margin a prediction gets before the 90% limit.
  const underPredictionGiB = Math.max(0, ...residuals);
  const runs = new Set(informative.map((s) => s.run)).size;
  return {
    model,
    envelope,
    measuredSets: [...new Set(informative.map((s) => serviceSet(s.topology, s.gpu)))].sort(),
    source: 'fitted',
    samples: informative.length,
    maxResidualGiB: Math.round(maxResidualGiB * 100) / 100,
    marginGiB: Math.round(underPredictionGiB * 100) / 100,
    notes: [
      `fitted from ${informative.length} GPU readings of ${runs} run(s); largest residual ${maxResidualGiB.toFixed(2)} GiB of ${scale.toFixed(1)} GiB`,
    ],
  };
}

/**
 * What CUDA's message proves the GPU needed at least: the memory the process had in use plus what it
 * tried to allocate ("Tried to allocate X GiB … this process has Y GiB memory in use"); null when the
 * message does not say.
 */
export function oomLowerBoundGiB(message: string | undefined): number | null {
  const tried = /tried to allocate ([\d.]+) GiB/i.exec(message ?? '');
  const used = /has ([\d.]+) GiB memory in use/i.exec(message ?? '');
  return tried && used ? Number(tried[1]) + Number(used[1]) : null;
}

/**
 * A run that ran out of memory on a GPU proves that GPU needed more than its size: where the model
 * predicts it lower, the memory of the services on that GPU (per replica and per cached scene) is
 * scaled up until it does (5% beyond, or to what CUDA's message proves). Its evidence is a lower bound the fit of successful runs
 * cannot see.
 */
export function respectFailures(
  fitted: FittedMemoryModel,
  tried: readonly TriedCandidate[],
  gpuMemoryGiB: number,
): FittedMemoryModel {
  let model = fitted.model;
  const notes: string[] = [];
  for (const run of tried) {
    const f = run.observation?.failure;
    if (f?.kind !== 'gpu-oom' || f.gpu == null) continue;
    const row = instancesByGpu(run.topology).get(f.gpu);
    const predicted = predictMemory(run.topology, model, gpuMemoryGiB).find((p) => p.gpu === f.gpu)?.gib;
    const needed = Math.max(1.05 * gpuMemoryGiB, oomLowerBoundGiB(f.message) ?? 0);
    if (!row || predicted === undefined || predicted >= needed) continue;
    const factor = needed / predicted;
    const services = Object.keys(row) as ServiceName[];
    const perReplica = { ...model.per_replica_gib };
    const perScene = { ...(model.per_cached_scene_gib ?? {}) };
    for (const s of services) {
      perReplica[s] = Math.round((perReplica[s] ?? 0) * factor * 1000) / 1000;
      if (s === 'renderer' || s === 'physics')
        perScene[s] = Math.round((perScene[s] ?? 0) * factor * 1000) / 1000;
    }
    model = { ...model, per_replica_gib: perReplica, per_cached_scene_gib: perScene };
    notes.push(
      `${run.name} ran out of memory on GPU ${f.gpu} (${gpuMemoryGiB} GiB) where the model predicted ${predicted.toFixed(1)} GiB: ${services.join(', ')} memory scaled ×${factor.toFixed(2)}`,
    );
  }
  if (!notes.length) return fitted;
  const scale = (m: MemoryModel) => ({
    ...m,
    per_replica_gib: { ...m.per_replica_gib, ...model.per_replica_gib },
  });
  return {
    ...fitted,
    model,
    ...(fitted.envelope ? { envelope: fitted.envelope.map(scale) } : {}),
    notes: [...fitted.notes, ...notes],
  };
}
