// Topology moves, each one of AlpaSim's tuning rules applied to the parent's evidence. A move
// returns the new topology plus the words that justify it; whether it fits in memory, was tried
// before or is valid is decided by the caller (suggest.ts), so every rule stays small.
import { RUNTIME_IDLE, type ServiceName } from '../catalog/alpasim.js';
import type { Topology } from '../types/generated/topology.js';
import { type Evidence, fmt, queueSentence } from './evidence.js';
import {
  activeServices,
  cacheSize,
  capacity,
  clone,
  concurrency,
  containers,
  gpusOf,
  inFlight,
  instances,
  nrWorkers,
  replicas,
  setCacheSize,
  setConcurrency,
  setGpus,
  setReplicas,
} from './topology-ops.js';
import type { GpuPrediction, MoveKind } from './types.js';

export interface MoveContext {
  gpusPerNode: number;
  gpuMemoryGiB: number;
  cpusPerNode: number;
  /** Conservative GiB per GPU in use (margin included). */
  predict: (t: Topology) => GpuPrediction[];
  /** Fraction of GPU memory a proposal may be predicted to use. */
  memoryLimit: number;
}

export interface Move {
  kind: MoveKind;
  service?: ServiceName;
  topology: Topology;
  change: string;
  hypothesis: string;
  expectedEffect: string;
  /** How strongly the evidence calls for this move, 0..1. */
  priority: number;
}

/** Renderer (NRE) cannot run several replicas in one container: it scales by repeated GPU entries. */
const NO_REPLICAS: readonly ServiceName[] = ['renderer'];

/** Sets the service's concurrency so its capacity is at least `target`, keeping its cache at the same ratio. */
export function retarget(
  t: Topology,
  svc: ServiceName,
  target: number,
  spreadOver = instances(t, svc),
): void {
  const before = concurrency(t, svc);
  const after = Math.max(1, Math.ceil(target / spreadOver));
  setConcurrency(t, svc, after);
  if (svc === 'renderer' || svc === 'physics') {
    const cache = cacheSize(t, svc);
    // Keep the cache-to-concurrency ratio the preset chose (n+1, or (n+1) × cameras).
    if (cache !== undefined && after !== before) {
      setCacheSize(t, svc, Math.max(after + 1, Math.ceil((cache * (after + 1)) / (before + 1))));
    }
  }
}

function fits(t: Topology, ctx: MoveContext): boolean {
  return ctx.predict(t).every((p) => p.gib <= ctx.memoryLimit * ctx.gpuMemoryGiB);
}

/**
 * The GPU where one more container of `svc` fits best, judged after the service's concurrency
 * (and cache) are re-spread to hold `target` rollouts: GPUs where it fits first, then fewest
 * containers of that service already there (spreading), lowest measured utilisation, most headroom.
 */
export function freestGpu(
  t: Topology,
  svc: ServiceName,
  evidence: Evidence,
  ctx: MoveContext,
  target = inFlight(t),
  finalInstances?: number,
): number | undefined {
  const current = gpusOf(t, svc) ?? [];
  const options: { gpu: number; fitsNow: number; own: number; util: number; fraction: number }[] = [];
  for (let gpu = 0; gpu < ctx.gpusPerNode; gpu++) {
    const trial = clone(t);
    setGpus(trial, svc, [...current, gpu]);
    retarget(trial, svc, target, finalInstances);
    const fraction = ctx.predict(trial).find((p) => p.gpu === gpu)?.fraction ?? 0;
    options.push({
      gpu,
      fitsNow: fits(trial, ctx) ? 0 : 1,
      own: current.filter((g) => g === gpu).length,
      util: evidence.gpus.get(gpu)?.utilisation ?? 0,
      fraction,
    });
  }
  // Free compute first (in 10-point steps), then spreading: a GPU that is short of memory can
  // often be freed by makeRoom(); a busy GPU cannot be made faster.
  const bucket = (u: number) => Math.floor(u / 10);
  options.sort(
    (a, b) =>
      bucket(a.util) - bucket(b.util) ||
      a.own - b.own ||
      a.fitsNow - b.fitsNow ||
      a.fraction - b.fraction ||
      a.gpu - b.gpu,
  );
  return options[0]?.gpu;
}

function overLimit(t: Topology, ctx: MoveContext): { gpu: number; gib: number }[] {
  return ctx
    .predict(t)
    .filter((p) => p.gib > ctx.memoryLimit * ctx.gpuMemoryGiB)
    .sort((a, b) => b.gib - a.gib);
}

/** A service's queue is "idle" when it barely holds rollouts: shrinking it costs no throughput. */
function idleService(evidence: Evidence, svc: ServiceName): boolean {
  const q = evidence.queues[svc]?.max;
  const top = Math.max(0, ...Object.values(evidence.queues).map((v) => v?.max ?? 0));
  return q !== undefined && (q <= 2 || q < 0.25 * top);
}

/** A GPU over the memory limit in `current`: its GiB before a step, and the services on it (least loaded first). */
interface Crowded {
  current: Topology;
  gpu: number;
  before: number;
  onGpu: ServiceName[];
}

/** One step towards room on a crowded GPU: the topology, its note, its rank (shrink first) and GiB saved. */
interface RoomOption {
  topology: Topology;
  note: string;
  rank: number;
  saved: number;
}

const gibOn = (ctx: MoveContext, trial: Topology, gpu: number) =>
  ctx.predict(trial).find((p) => p.gpu === gpu)?.gib ?? 0;

/** Fewer replicas of each idle service on the GPU (same capacity), where that frees memory there only. */
function shrinkOptions(room: Crowded, evidence: Evidence, ctx: MoveContext, target: number): RoomOption[] {
  const { current, gpu, before, onGpu } = room;
  const options: RoomOption[] = [];
  for (const svc of onGpu) {
    const r = replicas(current, svc);
    if (!idleService(evidence, svc) || r < 2 || NO_REPLICAS.includes(svc)) continue;
    const trial = clone(current);
    const fewer = Math.max(1, Math.floor((r * 3) / 4));
    setReplicas(trial, svc, fewer);
    retarget(trial, svc, target);
    const saved = before - gibOn(ctx, trial, gpu);
    if (saved > 0 && overLimit(trial, ctx).every((o) => o.gpu === gpu)) {
      options.push({
        topology: trial,
        note: `${svc} replicas_per_container ${r} → ${fewer} (queue-depth max ${fmt(evidence.queues[svc]?.max ?? 0)}: idle capacity)`,
        rank: 0,
        saved,
      });
    }
  }
  return options;
}

/** One container of each service on the GPU moved to the emptiest GPU that can take it. */
function moveOptions(room: Crowded, ctx: MoveContext): RoomOption[] {
  const { current, gpu, before, onGpu } = room;
  const options: RoomOption[] = [];
  const headroom = ctx.predict(current);
  const fraction = (g: number) => headroom.find((p) => p.gpu === g)?.fraction ?? 0;
  const targets = [...Array(ctx.gpusPerNode).keys()]
    .filter((g) => g !== gpu)
    .sort((a, b) => fraction(a) - fraction(b));
  for (const svc of onGpu) {
    const gpus = gpusOf(current, svc) ?? [];
    for (const to of targets) {
      const trial = clone(current);
      const moved = [...gpus];
      moved.splice(moved.indexOf(gpu), 1, to);
      setGpus(trial, svc, moved);
      const destination = ctx.predict(trial).find((p) => p.gpu === to);
      if (!destination || destination.gib > ctx.memoryLimit * ctx.gpuMemoryGiB) continue;
      options.push({
        topology: trial,
        note: `one ${svc} container moved from GPU ${gpu} to GPU ${to} (memory headroom)`,
        rank: 1,
        saved: before - gibOn(ctx, trial, gpu),
      });
      break;
    }
  }
  return options;
}

/**
 * Brings every GPU under the memory limit by shrinking idle services (fewer replicas, same
 * capacity) or moving a container of the least loaded service to the GPU with most headroom.
 * Returns what it did, or undefined when it cannot (the move is then not made).
 */
export function makeRoom(
  t: Topology,
  keep: ServiceName | undefined,
  evidence: Evidence,
  ctx: MoveContext,
): { topology: Topology; notes: string[] } | undefined {
  let current = clone(t);
  const notes: string[] = [];
  const target = inFlight(t);
  for (let step = 0; step < 12; step++) {
    const over = overLimit(current, ctx);
    if (over.length === 0) return { topology: current, notes: coalesce(t, current, notes) };
    const gpu = over[0]!.gpu;
    const before = over[0]!.gib;
    const onGpu = activeServices(current)
      .filter((svc) => svc !== keep && (gpusOf(current, svc) ?? []).includes(gpu))
      .sort((a, b) => (evidence.queues[a]?.max ?? 0) - (evidence.queues[b]?.max ?? 0));
    // Shrinking an idle service costs no throughput; moving a container adds load elsewhere.
    const room = { current, gpu, before, onGpu };
    const options = [...shrinkOptions(room, evidence, ctx, target), ...moveOptions(room, ctx)];
    options.sort((a, b) => a.rank - b.rank || b.saved - a.saved);
    const next = options.find((o) => o.saved > 0);
    if (!next) return undefined;
    current = next.topology;
    notes.push(next.note);
  }
  return overLimit(current, ctx).length === 0
    ? { topology: current, notes: coalesce(t, current, notes) }
    : undefined;
}

/** One note per shrunk service ("physics replicas_per_container 4 → 1") instead of one per step. */
function coalesce(from: Topology, to: Topology, notes: string[]): string[] {
  const out: string[] = [];
  const shrunk = new Set<ServiceName>();
  for (const note of notes) {
    const m = /^(\w+) replicas_per_container \d+ → \d+ (\(.*\))$/.exec(note);
    if (!m) {
      out.push(note);
      continue;
    }
    const svc = m[1] as ServiceName;
    if (shrunk.has(svc)) continue;
    shrunk.add(svc);
    out.push(`${svc} replicas_per_container ${replicas(from, svc)} → ${replicas(to, svc)} ${m[2]}`);
  }
  return out;
}

function pct(value: number): string {
  return `${Math.round(value * 100)}%`;
}

/** "key a → b", or nothing when the value does not change (a change text lists only changes). */
export function changeText(key: string, from: number | undefined, to: number | undefined): string {
  return from === to ? '' : `${key} ${from ?? 'unset'} → ${to ?? 'unset'}`;
}

function bottleneckWords(evidence: Evidence, svc: ServiceName): string {
  const queue = queueSentence(evidence, svc);
  const named = evidence.bottleneck.service === svc;
  return `${queue || `${svc} has the deepest queue`}: ${svc} is the bottleneck${named ? ` (confidence ${evidence.bottleneck.confidence})` : ''}`;
}

/** What scaling the bottleneck `svc` from `parent` to `t` changes, why, and what it should do. */
function scaleDescription(
  parent: Topology,
  t: Topology,
  svc: ServiceName,
  evidence: Evidence,
  how: string,
): Pick<Move, 'change' | 'hypothesis' | 'expectedEffect'> {
  const before = instances(parent, svc);
  const after = instances(t, svc);
  const gain = 1 - before / after;
  const parts = [
    how,
    changeText('n_concurrent_rollouts', concurrency(parent, svc), concurrency(t, svc)),
    changeText('capacity', capacity(parent, svc), capacity(t, svc)),
  ].filter(Boolean);
  return {
    change: `${svc}: ${parts.join('; ')}`,
    hypothesis: `${bottleneckWords(evidence, svc)}. Spreading its ${inFlight(parent)} rollouts in flight over ${after} instances instead of ${before} gives each fewer concurrent rollouts, so its RPCs wait less.`,
    expectedEffect: `${svc} queue-depth max falls toward the other services'; seconds per rollout down by up to ${pct(gain)} while ${svc} stays the limit, less once another service binds.`,
  };
}

/** Scale the bottleneck: more containers (or replicas) over which its rollouts are spread. */
export function scaleBottleneck(
  parent: Topology,
  svc: ServiceName,
  evidence: Evidence,
  ctx: MoveContext,
): Move[] {
  const moves: Move[] = [];
  const target = inFlight(parent);
  const describe = (t: Topology, how: string) => scaleDescription(parent, t, svc, evidence, how);

  const gpus = gpusOf(parent, svc);
  if (gpus) {
    // One more container, and twice as many: two step sizes so one round can bracket the need; the
    // doubling spreads evenly (the runtime shares rollouts equally among instances, so an uneven
    // placement makes the most loaded GPU the new limit).
    for (const add of [...new Set([1, Math.max(2, gpus.length)])]) {
      const t = clone(parent);
      const placed: number[] = [];
      for (let i = 0; i < add; i++) {
        // Intermediate steps may not fit yet: the final re-spread shrinks every instance's cache.
        const gpu = freestGpu(t, svc, evidence, ctx, target, (gpus.length + add) * replicas(t, svc));
        if (gpu === undefined) break;
        setGpus(t, svc, [...(gpusOf(t, svc) ?? []), gpu]);
        placed.push(gpu);
      }
      if (placed.length < add) continue;
      retarget(t, svc, target);
      const repeated = placed.some((g) => gpus.includes(g));
      moves.push({
        kind: 'scale-bottleneck',
        service: svc,
        topology: t,
        priority: (add === 1 ? 0.95 : 0.9) * (evidence.saturated ? 0.7 : 1),
        ...describe(
          t,
          `${containers(parent, svc)} → ${containers(t, svc)} containers (new on GPU ${placed.join(', ')}${repeated && svc === 'renderer' ? ', a repeated GPU entry' : ''})`,
        ),
      });
    }
  }
  if (!NO_REPLICAS.includes(svc)) {
    const r = replicas(parent, svc);
    for (const next of [...new Set([r + 1, Math.ceil(r * 1.5)])]) {
      const t = clone(parent);
      setReplicas(t, svc, next);
      retarget(t, svc, target);
      moves.push({
        kind: 'scale-bottleneck',
        service: svc,
        topology: t,
        priority: (gpus ? 0.85 : 0.95) * (evidence.saturated && gpus ? 0.7 : 1),
        ...describe(t, `replicas_per_container ${r} → ${next}`),
      });
    }
  }
  return moves;
}

/** Runtime busy: more workers, aiming at the middle of the 70-80% idle band. */
export function raiseWorkers(parent: Topology, evidence: Evidence, ctx: MoveContext): Move[] {
  const idle = evidence.idleFraction;
  const runtimeBound = evidence.bottleneck.kind === 'runtime-bound';
  if (!runtimeBound && (idle === undefined || idle >= RUNTIME_IDLE.low)) return [];
  const n = nrWorkers(parent);
  const busy = idle === undefined ? 0.5 : 1 - idle;
  const aim = 1 - (RUNTIME_IDLE.target[0] + RUNTIME_IDLE.target[1]) / 2;
  const limit = Math.max(1, Math.min(inFlight(parent), Math.floor(ctx.cpusPerNode / 2)));
  // Each added worker is one more busy process: only as many as the node's idle cores allow,
  // keeping a tenth of them free (a CPU-bound node gets slower with more workers, not faster).
  const spare =
    evidence.cpuBusyCores === undefined
      ? Number.POSITIVE_INFINITY
      : Math.floor(ctx.cpusPerNode * 0.9 - evidence.cpuBusyCores);
  const next = Math.min(limit, n + Math.max(0, spare), Math.max(n + 1, Math.ceil((n * busy) / aim)));
  if (next <= n) return [];
  const t = clone(parent);
  t.runtime ??= {};
  t.runtime.nr_workers = next;
  const idleText =
    idle === undefined
      ? 'runtime-bound verdict'
      : `runtime idle fraction ${pct(idle)} < ${pct(RUNTIME_IDLE.low)}`;
  return [
    {
      kind: 'raise-workers',
      topology: t,
      priority: 0.93,
      change: `runtime.nr_workers ${n} → ${next}`,
      hypothesis: `${idleText}: the runtime's event loop is the contention point, so spreading the ${inFlight(parent)} rollouts over ${next} workers lets it accept service results sooner.`,
      expectedEffect: `runtime idle fraction up toward 70-80%; RPC blocking p95 and seconds per rollout down; services' queue depths unchanged or higher.`,
    },
  ];
}

/** Change total capacity (every service at once) by `factor`, caches following. */
function scaleTotal(parent: Topology, factor: number): Topology | undefined {
  const now = inFlight(parent);
  const target = Math.max(1, Math.round(now * factor));
  if (target === now) return undefined;
  const t = clone(parent);
  for (const svc of activeServices(t)) retarget(t, svc, target);
  return inFlight(t) === now ? undefined : t;
}

/** Several services queue: too many rollouts in flight; fewer also frees cache memory. */
export function lowerTotal(parent: Topology, evidence: Evidence): Move[] {
  const several = evidence.bottleneck.kind === 'total-capacity-too-high' || evidence.queued.length >= 2;
  if (!several) return [];
  const t = scaleTotal(parent, 0.75);
  if (!t) return [];
  const queues = evidence.queued.map((s) => `${s} ${fmt(evidence.queues[s]?.max ?? 0)}`).join(', ');
  return [
    {
      kind: 'lower-total',
      topology: t,
      priority: evidence.bottleneck.kind === 'total-capacity-too-high' ? 0.92 : 0.7,
      change: `rollouts in flight ${inFlight(parent)} → ${inFlight(t)} (every service's n_concurrent_rollouts lowered, caches with them)`,
      hypothesis: `queue-depth max high on several services (${queues || evidence.bottleneck.evidence.join('; ')}): total capacity is higher than the services can serve, so rollouts only wait longer.`,
      expectedEffect: `queue depths fall on every service at about the same seconds per rollout or better; smaller caches free GPU memory for the next move.`,
    },
  ];
}

/**
 * More rollouts in flight: when the queues are empty everywhere (not enough load), or when every
 * GPU is saturated and only a fuller pipeline can still fill the gaps between calls.
 */
export function raiseTotal(parent: Topology, evidence: Evidence): Move[] {
  const lowLoad = evidence.bottleneck.kind === 'not-enough-load';
  if (!lowLoad && !evidence.saturated) return [];
  const moves: Move[] = [];
  const queues = Object.entries(evidence.queues)
    .map(([s, q]) => `${s} ${fmt(q?.max ?? 0)}`)
    .join(', ');
  const utilisation = [...evidence.gpus.values()].map((g) => Math.round(g.utilisation ?? 0));
  for (const factor of lowLoad ? [1.5, 2] : [1.25, 1.5]) {
    const t = scaleTotal(parent, factor);
    if (!t) continue;
    moves.push({
      kind: 'raise-total',
      topology: t,
      priority: lowLoad ? (factor === 1.5 ? 0.9 : 0.85) : factor === 1.25 ? 0.8 : 0.75,
      change: `rollouts in flight ${inFlight(parent)} → ${inFlight(t)} (every service's n_concurrent_rollouts raised, caches with them)`,
      hypothesis: lowLoad
        ? `queue-depth max low on every service (${queues}): the services idle between requests, so more rollouts in flight keep them busy.`
        : `every GPU is saturated (utilisation ${Math.min(...utilisation)}-${Math.max(...utilisation)}%): the node is compute-bound, so more instances cannot help, but more rollouts in flight fill the gaps between calls.`,
      expectedEffect: lowLoad
        ? `higher GPU utilisation and queue depths of a few rollouts; seconds per rollout down by up to ${pct(1 - 1 / factor)} until a service saturates.`
        : `a small gain (a few percent) in seconds per rollout at the cost of cache memory; if none, the topology has reached what this node can do.`,
    });
  }
  return moves;
}

/** Capacities far apart: the excess is wasted memory. */
export function rebalance(parent: Topology): Move[] {
  const now = inFlight(parent);
  const t = clone(parent);
  const changed: string[] = [];
  for (const svc of activeServices(t)) {
    if (capacity(t, svc) > now * 1.25) {
      const before = capacity(t, svc);
      retarget(t, svc, now);
      if (capacity(t, svc) < before) changed.push(`${svc} ${before} → ${capacity(t, svc)}`);
    }
  }
  if (changed.length === 0) return [];
  return [
    {
      kind: 'rebalance',
      topology: t,
      priority: 0.5,
      change: `capacities lowered to the ${now} rollouts in flight: ${changed.join(', ')}`,
      hypothesis: `capacities differ by more than 25% (${changed.join(', ')} against ${now} in flight): the excess is never used but costs cache memory.`,
      expectedEffect: `same seconds per rollout, less GPU memory on the rebalanced services' GPUs.`,
    },
  ];
}

/**
 * Caches below the tuning guide's n_concurrent_rollouts + 1 grow to it. A larger cache is kept: the
 * presets size it (n + 1) × cameras (8gpu_12rollouts' renderer cache 16 = (3 + 1) × 4), and this
 * move cannot know the camera count, so it never cuts one.
 */
export function resizeCaches(parent: Topology): Move[] {
  const t = clone(parent);
  const changed: string[] = [];
  for (const svc of ['renderer', 'physics'] as const) {
    if (!activeServices(t).includes(svc)) continue;
    const want = concurrency(t, svc) + 1;
    const have = cacheSize(t, svc);
    if (have !== undefined && have < want) {
      setCacheSize(t, svc, want);
      changed.push(`${svc === 'renderer' ? 'nre_cache_size' : 'physics_cache_size'} ${have} → ${want}`);
    }
  }
  if (changed.length === 0) return [];
  return [
    {
      kind: 'resize-caches',
      topology: t,
      priority: 0.4,
      change: changed.join(', '),
      hypothesis: `cache sizes below n_concurrent_rollouts + 1 (${changed.join(', ')}): a cache smaller than the rollouts it serves reloads scenes (~10 s each).`,
      expectedEffect: `fewer scene loads; seconds per rollout equal or better, at the cost of the added scenes' GPU memory.`,
    },
  ];
}

/** Move one container of the bottleneck off its busiest GPU onto the idlest one. */
export function placeFree(parent: Topology, svc: ServiceName, evidence: Evidence, ctx: MoveContext): Move[] {
  const gpus = gpusOf(parent, svc);
  if (!gpus || evidence.gpus.size === 0) return [];
  const util = (g: number) => evidence.gpus.get(g)?.utilisation ?? 0;
  const busiest = [...new Set(gpus)].sort((a, b) => util(b) - util(a))[0];
  if (busiest === undefined) return [];
  const without = clone(parent);
  const rest = [...gpus];
  rest.splice(rest.indexOf(busiest), 1);
  if (rest.length === 0) return [];
  setGpus(without, svc, rest);
  const target = freestGpu(without, svc, evidence, ctx, inFlight(parent));
  if (target === undefined || target === busiest || util(busiest) - util(target) < 30) return [];
  const t = clone(without);
  setGpus(t, svc, [...rest, target]);
  return [
    {
      kind: 'place-free',
      service: svc,
      topology: t,
      priority: 0.6,
      change: `${svc}: one container moved from GPU ${busiest} to GPU ${target}`,
      hypothesis: `GPU ${busiest} runs at ${Math.round(util(busiest))}% utilisation while GPU ${target} runs at ${Math.round(util(target))}%: ${svc}'s container on GPU ${busiest} competes for compute.`,
      expectedEffect: `utilisation evens out between GPU ${busiest} and GPU ${target}; ${svc} RPC p95 and seconds per rollout down.`,
    },
  ];
}

/** Every move the parent's evidence calls for, each made to fit in GPU memory where it can be. */
export function movesFor(parent: Topology, evidence: Evidence, ctx: MoveContext): Move[] {
  return rawMoves(parent, evidence, ctx).map((move) => {
    if (overLimit(move.topology, ctx).length === 0) return move;
    const room = makeRoom(move.topology, move.service, evidence, ctx);
    if (!room) return move; // the caller rejects it with the predicted memory in the reason
    const how = room.notes.join('; ');
    return {
      ...move,
      topology: room.topology,
      change: `${move.change}; to stay under ${Math.round(ctx.memoryLimit * 100)}% GPU memory: ${how}`,
      hypothesis: `${move.hypothesis} Memory is made by ${how}.`,
    };
  });
}

function rawMoves(parent: Topology, evidence: Evidence, ctx: MoveContext): Move[] {
  const moves: Move[] = [];
  const active = activeServices(parent);
  const b = evidence.bottleneck;
  const bottleneck =
    b.kind === 'service' && b.service && active.includes(b.service as ServiceName)
      ? (b.service as ServiceName)
      : undefined;
  if (bottleneck) {
    moves.push(...scaleBottleneck(parent, bottleneck, evidence, ctx));
    moves.push(...placeFree(parent, bottleneck, evidence, ctx));
  }
  moves.push(...raiseWorkers(parent, evidence, ctx));
  moves.push(...lowerTotal(parent, evidence));
  moves.push(...raiseTotal(parent, evidence));
  moves.push(...rebalance(parent));
  moves.push(...resizeCaches(parent));
  // Without a single bottleneck, the service with the deepest queue is still the best bet, weakly.
  const ranked = (Object.entries(evidence.queues) as [ServiceName, { max: number }][])
    .filter(([s, q]) => active.includes(s) && s !== bottleneck && !idleService(evidence, s) && q.max > 0)
    .sort((a, b2) => b2[1].max - a[1].max);
  for (const [svc, i] of ranked.slice(0, bottleneck ? 1 : 2).map(([x], k) => [x, k] as const)) {
    const why = `${queueSentence(evidence, svc)}: ${svc} has the ${bottleneck ? 'next ' : ''}deepest queue without being a clear bottleneck`;
    // with no single bottleneck (uneven load between workers, say), the deepest queue's container on
    // the busiest GPU may still be what binds: the same placement a bottleneck gets, weakly
    const place = !bottleneck && i === 0 ? placeFree(parent, svc, evidence, ctx) : [];
    for (const m of [...scaleBottleneck(parent, svc, evidence, ctx), ...place]) {
      moves.push({
        ...m,
        priority: m.priority * (bottleneck ? 0.5 : 0.65),
        hypothesis: `${why}. ${m.hypothesis.slice(m.hypothesis.indexOf('. ') + 2)}`,
      });
    }
  }
  return moves;
}
