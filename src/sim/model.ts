// The twin's queueing model of one AlpaSim run, pure and cheap (exact mean-value analysis of a closed
// network). Each rollout in flight cycles through one control step: a call to every active service, plus
// the runtime worker's event-loop work. Stations: each service instance (its serial part), each GPU (the
// shared part of the calls of every instance on it, slowed by time slicing), the node's CPU cores, and each
// runtime worker's event loop. Scene-cache misses add loading stalls; a cache smaller than the concurrency
// limits how many rollouts an instance can step at once.
import { METRIC_SERVICE_LABEL, type ServiceName } from '../catalog/alpasim.js';
import type { Topology } from '../types/generated/topology.js';
import type { TwinProfile } from '../types/generated/twin-profile.js';
import { type Layout, layout, predictedOom } from './layout.js';

/** Fraction of a scene load that occupies the GPU (the rest is I/O and decoding). */
const LOAD_GPU_FRACTION = 0.1;

export interface Station {
  kind: 'queue' | 'delay';
  /** Seconds of this station per rollout step (visit ratio × service time). */
  demand: number;
  /** Share of the demand that belongs to each service (for per-service residence and queue depth). */
  owners: Partial<Record<ServiceName | 'runtime', number>>;
  worker?: number;
  gpu?: number;
}

/** Residence and queue figures of the closed network with n rollouts stepping. */
export interface NetworkPoint {
  n: number;
  /** Seconds of one control step (the cycle time). */
  stepSeconds: number;
  /** Steps per second over all rollouts. */
  stepsPerSecond: number;
  /** Mean seconds per call at each service (what the RPC duration histogram observes). */
  rpcSeconds: Partial<Record<ServiceName, number>>;
  /** Mean rollouts in flight at each service (Little's law over its stations). */
  atService: Partial<Record<ServiceName, number>>;
  /** Utilisation of each runtime worker's event loop, 0-1. */
  workerUtilization: number;
  /** Utilisation of each GPU, 0-1. */
  gpuUtilization: number[];
  /** CPU cores busy per process group. */
  cpuCores: Record<string, number>;
}

/** The network solved for every population 0..N (index n). */
export interface Network {
  layout: Layout;
  /** Summaries by population, computed on first use (see pointAt). */
  points: NetworkPoint[];
  /** Cycle time, throughput and per-station residence by population. */
  raw: { cycle: number; x: number; r: Float64Array }[];
  stations: Station[];
  profile: TwinProfile;
  /** Rollouts that can step at once (cache limits included). */
  steppingLimit: number;
  /** Seconds a rollout waits at its start for scene loading (cache too small for prefetch). */
  stallSecondsPerRollout: number;
}

/**
 * The stations of the network. `cpuScale` slows CPU-side work (node CPU contention, see
 * solveNetwork); a profile's `effects.gpu_interference` slows a GPU's shared work per other
 * service on it.
 */
export function buildStations(l: Layout, profile: TwinProfile, cpuScale = 1): Station[] {
  const stations: Station[] = [];
  const gpuShared = new Map<number, Station>();
  const contention = profile.gpu.contention ?? 0;
  const interference = profile.effects?.gpu_interference ?? 0;
  const cpu: Station = { kind: 'queue', demand: 0, owners: {} };
  const cpuDelay: Station = { kind: 'delay', demand: 0, owners: {} };
  const latency: Station = { kind: 'delay', demand: 0, owners: {} };
  const cores = profile.cpu.cores;
  for (const s of l.services) {
    const cost = profile.services[s.service];
    const call = cost.call_ms / 1000;
    const share = cost.gpu_share ?? 0;
    const visits = 1 / s.instances.length;
    for (const inst of s.instances) {
      const onGpu = inst.gpu !== null;
      const serial = onGpu ? call * (1 - share) : call * cpuScale;
      stations.push({ kind: 'queue', demand: visits * serial, owners: { [s.service]: 1 } });
      if (onGpu && share > 0) {
        const g = inst.gpu as number;
        const st = gpuShared.get(g) ?? { kind: 'queue', demand: 0, owners: {}, gpu: g };
        const others = Math.max(0, (l.gpus[g]?.parts.length ?? 1) - 1);
        const slowdown =
          1 + contention * Math.max(0, (l.gpus[g]?.containers ?? 1) - 1) + interference * others;
        let d = visits * call * share * slowdown;
        const load = cost.scene_load_s ?? 0;
        if (load > 0) d += (visits * load * LOAD_GPU_FRACTION) / profile.steps_per_rollout;
        st.demand += d;
        st.owners[s.service] = (st.owners[s.service] ?? 0) + d;
        gpuShared.set(g, st);
      }
    }
    // CPU work on the node's shared cores (Seidmann: a c-server station ≈ a queue of D/c plus a delay).
    const cpuS = ((cost.cpu_ms ?? 0) / 1000) * cpuScale;
    if (cpuS > 0) {
      cpu.demand += cpuS / cores;
      cpu.owners[s.service] = (cpu.owners[s.service] ?? 0) + cpuS / cores;
      cpuDelay.demand += (cpuS * (cores - 1)) / cores;
      cpuDelay.owners[s.service] = (cpuDelay.owners[s.service] ?? 0) + (cpuS * (cores - 1)) / cores;
    }
    const lat = (profile.runtime.rpc_latency_ms ?? 0) / 1000;
    latency.demand += lat;
    latency.owners[s.service] = (latency.owners[s.service] ?? 0) + lat;
  }
  for (const st of gpuShared.values()) {
    // owners hold absolute demands so far: normalise to shares
    for (const k of Object.keys(st.owners) as ServiceName[]) st.owners[k] = (st.owners[k] ?? 0) / st.demand;
    stations.push(st);
  }
  for (const st of [cpu, cpuDelay, latency]) {
    if (st.demand <= 0) continue;
    for (const k of Object.keys(st.owners) as ServiceName[]) st.owners[k] = (st.owners[k] ?? 0) / st.demand;
    stations.push(st);
  }
  const work = (profile.runtime.step_work_ms / 1000) * cpuScale;
  for (let w = 0; w < l.nrWorkers; w++) {
    stations.push({ kind: 'queue', demand: work / l.nrWorkers, owners: { runtime: 1 }, worker: w });
  }
  return stations;
}

/**
 * Exact MVA of the closed network for populations 0..maxN. With `effects.cpu_contention`, CPU-side
 * work slows with the node's CPU utilisation at the operating point (a fixed point, damped).
 */
export function solveNetwork(topology: Topology, profile: TwinProfile, maxN?: number): Network {
  const l = layout(topology, profile);
  const contention = profile.effects?.cpu_contention ?? 0;
  let net = solveWith(l, profile, 1, maxN);
  if (contention <= 0) return net;
  // CPU seconds per step (what summarise's cpuCores adds up), so busy cores = steps/s × this
  let perStep = profile.runtime.step_work_ms / 1000;
  for (const s of l.services) {
    const cost = profile.services[s.service];
    const own = s.instances.every((i) => i.gpu === null) ? cost.call_ms : 0.15 * cost.call_ms;
    perStep += ((cost.cpu_ms ?? 0) + own) / 1000;
  }
  const top = Math.min(net.raw.length - 1, Math.floor(Math.min(l.inFlight, net.steppingLimit)));
  const gap = (scale: number, n: Network) => {
    const u = Math.min(1, ((n.raw[top]?.x ?? 0) * perStep) / profile.cpu.cores);
    return 1 + contention * u * u - scale;
  };
  // secant on scale − (1 + c·u(scale)²): the gap falls as the scale grows (a slower CPU, less load)
  let a = 1;
  let ga = gap(a, net);
  let b = 1 + ga;
  let nb = solveWith(l, profile, b, maxN);
  let gb = gap(b, nb);
  for (let i = 0; i < 8 && Math.abs(gb) > 1e-4 && gb !== ga; i++) {
    const c = Math.max(1, b - (gb * (b - a)) / (gb - ga));
    [a, ga] = [b, gb];
    b = c;
    nb = solveWith(l, profile, b, maxN);
    gb = gap(b, nb);
  }
  net = nb;
  return net;
}

function solveWith(l: Layout, profile: TwinProfile, cpuScale: number, maxN?: number): Network {
  const stations = buildStations(l, profile, cpuScale);
  const { steppingLimit, stall } = cacheEffects(l, profile);
  const top = Math.max(1, Math.min(maxN ?? l.inFlight, l.inFlight));
  const q = new Float64Array(stations.length);
  const r = new Float64Array(stations.length);
  const points: NetworkPoint[] = [emptyPoint(l)];
  const raw: Network['raw'] = [{ cycle: 0, x: 0, r: new Float64Array(stations.length) }];
  for (let n = 1; n <= top; n++) {
    let cycle = 0;
    for (let k = 0; k < stations.length; k++) {
      const st = stations[k]!;
      r[k] = st.kind === 'queue' ? st.demand * (1 + q[k]!) : st.demand;
      cycle += r[k]!;
    }
    const x = n / cycle;
    for (let k = 0; k < stations.length; k++) q[k] = x * r[k]!;
    raw.push({ cycle, x, r: r.slice() });
  }
  return { layout: l, points, raw, stations, profile, steppingLimit, stallSecondsPerRollout: stall };
}

function emptyPoint(l: Layout): NetworkPoint {
  return {
    n: 0,
    stepSeconds: 0,
    stepsPerSecond: 0,
    rpcSeconds: {},
    atService: {},
    workerUtilization: 0,
    gpuUtilization: l.gpus.map(() => 0),
    cpuCores: {},
  };
}

function summarise(
  n: number,
  cycle: number,
  x: number,
  stations: Station[],
  r: Float64Array,
  l: Layout,
  profile: TwinProfile,
): NetworkPoint {
  const rpcSeconds: Partial<Record<ServiceName, number>> = {};
  const gpuUtilization = l.gpus.map(() => 0);
  let workerUtilization = 0;
  stations.forEach((st, k) => {
    for (const [owner, share] of Object.entries(st.owners)) {
      if (owner === 'runtime') continue;
      const svc = owner as ServiceName;
      rpcSeconds[svc] = (rpcSeconds[svc] ?? 0) + r[k]! * (share ?? 0);
    }
    if (st.gpu !== undefined) gpuUtilization[st.gpu] = Math.min(1, x * st.demand);
    if (st.worker !== undefined) workerUtilization = Math.min(1, x * st.demand);
  });
  // GPUs that host only serial parts still show activity.
  for (const s of l.services) {
    const cost = profile.services[s.service];
    for (const inst of s.instances) {
      if (inst.gpu === null) continue;
      const busy = (x / s.instances.length) * (cost.call_ms / 1000) * (1 - (cost.gpu_share ?? 0)) * 0.3;
      gpuUtilization[inst.gpu] = Math.min(1, (gpuUtilization[inst.gpu] ?? 0) + busy);
    }
  }
  const atService: Partial<Record<ServiceName, number>> = {};
  for (const [svc, sec] of Object.entries(rpcSeconds)) atService[svc as ServiceName] = x * (sec ?? 0);
  const cpuCores: Record<string, number> = { runtime: x * (profile.runtime.step_work_ms / 1000) };
  for (const s of l.services) {
    const cost = profile.services[s.service];
    const own = s.instances.every((i) => i.gpu === null) ? cost.call_ms : 0.15 * cost.call_ms;
    cpuCores[s.service] = (x * ((cost.cpu_ms ?? 0) + own)) / 1000;
  }
  return {
    n,
    stepSeconds: cycle,
    stepsPerSecond: x,
    rpcSeconds,
    atService,
    workerUtilization,
    gpuUtilization,
    cpuCores,
  };
}

/**
 * Cache effects (renderer and physics): prefetch needs concurrency + 1 slots; fewer than concurrency
 * limits stepping. A profile's `effects.cache_miss_exponent` k adds misses above that line: a
 * rollout loads its scene with probability (rollouts per instance ÷ cache)^k.
 */
export function cacheEffects(l: Layout, profile: TwinProfile): { steppingLimit: number; stall: number } {
  let steppingLimit = l.inFlight;
  let stall = 0;
  const k = profile.effects?.cache_miss_exponent ?? 0;
  for (const s of l.services) {
    if (s.cacheSize === undefined) continue;
    const load = profile.services[s.service].scene_load_s ?? 0;
    const perInstanceInFlight = l.inFlight / s.instances.length;
    if (s.cacheSize < s.concurrency + 1 && s.cacheSize < perInstanceInFlight + 1) stall += load;
    else if (k > 0) stall += load * Math.min(1, (perInstanceInFlight / Math.max(1, s.cacheSize)) ** k);
    if (s.cacheSize < perInstanceInFlight) {
      steppingLimit = Math.min(steppingLimit, Math.max(1, s.cacheSize) * s.instances.length);
    }
  }
  return { steppingLimit, stall };
}

export interface SteadyState {
  inFlight: number;
  capacities: Partial<Record<ServiceName, number>>;
  /** Rollouts stepping at once (≤ inFlight; less when a cache is too small). */
  stepping: number;
  stepSeconds: number;
  /** Wall seconds of one rollout (steps × step + loading stall). */
  rolloutSeconds: number;
  stallSecondsPerRollout: number;
  rolloutsPerSecond: number;
  /** The objective: wall seconds per completed rollout, lower is better. */
  secondsPerRollout: number;
  /** Mean queue depth at an RPC's start per service (AlpaSim's gauge: in flight before it in its worker), by metric label. */
  queueDepth: Record<string, number>;
  rpcSeconds: Partial<Record<ServiceName, number>>;
  idleFraction: number;
  gpuUtilization: number[];
  gpuMemoryGb: number[];
  gpuMemoryTotalGb: number;
  cpuCores: Record<string, number>;
  hostMemoryGb: number;
  /** Set when the topology does not fit a GPU: the run dies at start-up. */
  oom?: { gpu: number; triedGb: number; usedGb: number; totalGb: number };
  /** The service whose rollouts-in-flight is largest (the queue-depth bottleneck). */
  bottleneck: ServiceName | undefined;
}

/** Steady state of a topology on a profile (no start-up, no noise): cheap enough to call thousands of times. */
export function steadyState(topology: Topology, profile: TwinProfile): SteadyState {
  return steadyFromNetwork(solveNetwork(topology, profile), profile);
}

export function steadyFromNetwork(net: Network, profile: TwinProfile): SteadyState {
  const l = net.layout;
  const stepping = steppingRollouts(net, profile, 1);
  const p = pointAt(net, stepping);
  const steps = profile.steps_per_rollout;
  const rolloutSeconds = steps * p.stepSeconds + net.stallSecondsPerRollout;
  // Rollouts/s = (rollouts that can step) / (wall seconds of one rollout, loading included).
  const rps = l.inFlight > 0 ? Math.min(l.inFlight, net.steppingLimit) / rolloutSeconds : 0;
  const queueDepth: Record<string, number> = {};
  for (const s of l.services) {
    let depth = depthSeenAtStart(net, stepping, s.service);
    if (s.service === 'renderer') depth += waitingForScenes(net, stepping) / l.nrWorkers;
    queueDepth[METRIC_SERVICE_LABEL[s.service]] = depth;
  }
  const oom = predictedOom(l);
  let bottleneck: ServiceName | undefined;
  let best = -1;
  for (const s of l.services) {
    const d = queueDepth[METRIC_SERVICE_LABEL[s.service]] ?? 0;
    if (d > best) {
      best = d;
      bottleneck = s.service;
    }
  }
  const capacities: Partial<Record<ServiceName, number>> = {};
  for (const s of l.services) capacities[s.service] = s.capacity;
  return {
    inFlight: l.inFlight,
    capacities,
    stepping,
    stepSeconds: p.stepSeconds,
    rolloutSeconds,
    stallSecondsPerRollout: net.stallSecondsPerRollout,
    rolloutsPerSecond: rps,
    secondsPerRollout: rps > 0 ? 1 / rps : Number.POSITIVE_INFINITY,
    queueDepth,
    rpcSeconds: p.rpcSeconds,
    idleFraction: 1 - p.workerUtilization,
    gpuUtilization: p.gpuUtilization,
    gpuMemoryGb: l.gpus.map((g) => g.usedGb),
    gpuMemoryTotalGb: profile.gpu.memory_gb,
    cpuCores: p.cpuCores,
    hostMemoryGb: l.hostMemoryGb,
    ...(oom ? { oom } : {}),
    bottleneck,
  };
}

/**
 * What AlpaSim's `rpc_queue_depth_at_start_latest` reads for a service: the RPCs to it already in
 * flight in the caller's worker process when a call starts, the call itself excluded (so 0 when the
 * worker's other rollouts are elsewhere). By the arrival theorem a call sees the network with one
 * rollout fewer: the other n/W − 1 rollouts of its worker, each at the service with the share of
 * the cycle it spends there.
 */
export function depthSeenAtStart(net: Network, n: number, service: ServiceName): number {
  const workers = net.layout.nrWorkers;
  const others = Math.max(0, n / workers - 1);
  if (others === 0 || n <= 1) return 0;
  const before = pointAt(net, n - 1);
  return ((before.atService[service] ?? 0) / (n - 1)) * others;
}

/** Rollouts stepping on average when each rollout also spends `stall` seconds loading (fixed point). */
export function steppingRollouts(net: Network, profile: TwinProfile, slowdown: number): number {
  const limit = Math.min(net.layout.inFlight, net.steppingLimit);
  if (net.stallSecondsPerRollout <= 0 || limit <= 0) return limit;
  let n = limit;
  for (let i = 0; i < 30; i++) {
    const p = pointAt(net, n);
    const busy = profile.steps_per_rollout * p.stepSeconds * slowdown;
    n = (limit * busy) / (busy + net.stallSecondsPerRollout);
  }
  return n;
}

/** Rollouts dispatched but waiting for a scene slot or loading (counted at the renderer). */
function waitingForScenes(net: Network, stepping: number): number {
  return Math.max(0, net.layout.inFlight - stepping);
}

/** The network at a (possibly fractional) population, interpolated. */
export function pointAt(net: Network, n: number): NetworkPoint {
  const top = net.raw.length - 1;
  const pts = {
    at(i: number): NetworkPoint {
      let p = net.points[i];
      if (!p) {
        const raw = net.raw[i]!;
        p = summarise(i, raw.cycle, raw.x, net.stations, raw.r, net.layout, net.profile);
        net.points[i] = p;
      }
      return p;
    },
  };
  if (n <= 0) return pts.at(0);
  if (n >= top) return pts.at(top);
  const lo = Math.floor(n);
  const f = n - lo;
  const a = pts.at(lo);
  const b = pts.at(Math.min(top, lo + 1));
  if (f === 0 || lo === 0) return f === 0 ? a : scalePoint(b, n);
  const mix = (x: number, y: number) => x + (y - x) * f;
  const rec = <K extends string>(x: Partial<Record<K, number>>, y: Partial<Record<K, number>>) => {
    const out: Partial<Record<K, number>> = {};
    for (const k of Object.keys(y) as K[]) out[k] = mix(x[k] ?? 0, y[k] ?? 0);
    return out;
  };
  return {
    n,
    stepSeconds: mix(a.stepSeconds, b.stepSeconds),
    stepsPerSecond: mix(a.stepsPerSecond, b.stepsPerSecond),
    rpcSeconds: rec(a.rpcSeconds, b.rpcSeconds),
    atService: rec(a.atService, b.atService),
    workerUtilization: mix(a.workerUtilization, b.workerUtilization),
    gpuUtilization: b.gpuUtilization.map((v, i) => mix(a.gpuUtilization[i] ?? 0, v)),
    cpuCores: rec(a.cpuCores, b.cpuCores) as Record<string, number>,
  };
}

function scalePoint(p: NetworkPoint, n: number): NetworkPoint {
  const f = n / p.n;
  const scale = <K extends string>(x: Partial<Record<K, number>>) => {
    const out: Partial<Record<K, number>> = {};
    for (const k of Object.keys(x) as K[]) out[k] = (x[k] ?? 0) * f;
    return out;
  };
  return {
    ...p,
    n,
    stepsPerSecond: p.stepsPerSecond * f,
    atService: scale(p.atService),
    workerUtilization: p.workerUtilization * f,
    gpuUtilization: p.gpuUtilization.map((v) => v * f),
    cpuCores: scale(p.cpuCores) as Record<string, number>,
  };
}
