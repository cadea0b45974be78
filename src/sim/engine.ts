// The twin's time line: a discrete-event simulation of one run at rollout-chunk granularity, driven by the
// queueing network of model.ts. Time is simulated seconds since the runtime started (when targets appear).
// All rollouts start at once behind serial scene loading; a warm-up slowdown decays; completions come in
// waves until per-rollout noise desynchronises them. Deterministic for a seed.
import { METRIC_SERVICE_LABEL, type ServiceName } from '../catalog/alpasim.js';
import type { Topology } from '../types/generated/topology.js';
import type { TwinProfile } from '../types/generated/twin-profile.js';
import type { Layout } from './layout.js';
import {
  depthSeenAtStart,
  type Network,
  pointAt,
  type SteadyState,
  solveNetwork,
  steadyFromNetwork,
} from './model.js';
import { createRng, type Rng } from './rng.js';
import { BUCKETS, CPU_MODES, DISPATCH_KIND, METHODS, PROCESS_GROUPS } from './spec.js';

/** Steps simulated as one event of a rollout. */
const CHUNK_STEPS = 20;
/** Integration step of the continuous counters, simulated seconds. */
const TICK_S = 5;
const GIB = 1024 ** 3;

export interface Hist {
  /** Non-cumulative count per bucket, plus the +Inf overflow as the last entry. */
  counts: number[];
  sum: number;
  count: number;
}

export interface WorkerState {
  worker: number;
  completed: number;
  failed: number;
  /** alpasim_simulation_elapsed_seconds: simulated seconds since start, sampled at each rollout end. */
  elapsed: number;
  queueDepth: Record<string, number>;
  /** Keyed by `${serviceLabel}|${method}`. */
  rpcDuration: Record<string, Hist>;
  rpcBlocking: Record<string, Hist>;
  rolloutDuration: Hist;
  stepDuration: Hist;
  idle: number;
  poll: number;
  work: number;
  /** alpasim_renderer_active_rollouts: this worker's rollouts in flight (loading or stepping). */
  activeRollouts: number;
  /** alpasim_renderer_rollouts_started_total by scheduling `kind`. */
  rolloutsStarted: Record<string, number>;
  /** alpasim_renderer_scheduler_wait_seconds by `kind`. */
  schedulerWait: Record<string, Hist>;
  observationBarrier: Hist;
  /** alpasim_job_queue_depth: rollout jobs waiting for a worker. */
  jobQueueDepth: number;
  gc: { totalSeconds: number; maxSeconds: number; collections: number };
}

/** One process the process exporter sees (a service instance or a runtime worker). */
export interface ProcessInfo {
  group: string;
  pid: string;
  port: string;
  gpus: number[];
  /** This process's share of its group's CPU seconds. */
  share: number;
}

export interface SimState {
  t: number;
  workers: WorkerState[];
  gpuUtil: number[];
  fbUsedMiB: number[];
  fbTotalMiB: number;
  processCpu: Record<string, number>;
  processMemory: Record<string, number>;
  processes: ProcessInfo[];
  nodeMemTotal: number;
  nodeMemAvailable: number;
  /** node_cpu_seconds_total by cpu index then mode. */
  nodeCpu: Record<string, number>[];
  ended?: { reason: 'completed' | 'crash' | 'host-oom'; at: number };
}

export interface SimulationOptions {
  seed?: number;
  /** Rollouts to run before the run completes (scenes × n_rollouts). */
  totalRollouts?: number;
}

interface Slot {
  index: number;
  worker: number;
  /** When the current chunk (or loading) ends. */
  due: number;
  phase: 'loading' | 'stepping' | 'idle';
  stepsDone: number;
  startedAt: number;
  /** Per-rollout speed factor (noise). */
  factor: number;
  chunkStep: number;
}

export class Simulation {
  readonly net: Network;
  readonly steady: SteadyState;
  readonly state: SimState;
  private readonly rng: Rng;
  /** Noise of the continuous counters: separate, so event order does not depend on how often we advance. */
  private readonly noise: Rng;
  /** Noise of the metrics AlpaSim added later (barrier, scheduler wait): their own stream, so the rest is unchanged. */
  private readonly extra: Rng;
  private readonly slots: Slot[];
  private readonly totalRollouts: number;
  private dispatched = 0;
  private readonly profile: TwinProfile;
  private readonly cores: number;
  private readonly modelGb: number[];
  private readonly cacheGb: number[];

  constructor(topology: Topology, profile: TwinProfile, opts: SimulationOptions = {}) {
    this.profile = profile;
    this.net = solveNetwork(topology, profile);
    this.steady = steadyFromNetwork(this.net, profile);
    this.rng = createRng(opts.seed ?? profile.seed ?? 1);
    this.noise = createRng((opts.seed ?? profile.seed ?? 1) ^ 0x5bd1e995);
    this.extra = createRng((opts.seed ?? profile.seed ?? 1) ^ 0x27d4eb2f);
    this.totalRollouts = opts.totalRollouts ?? Number.POSITIVE_INFINITY;
    const l = this.net.layout;
    this.cores = profile.cpu.cores;
    // GPU memory: models and contexts are there from the start; cached scenes fill as rollouts load them.
    this.cacheGb = sceneCacheGb(l, profile);
    this.modelGb = l.gpus.map((g, i) => g.usedGb - (this.cacheGb[i] ?? 0));
    this.state = initialState(l, profile, this.modelGb);
    this.slots = [];
    this.startFirstRollouts();
  }

  /** All rollouts start at once; each renderer instance loads its first scenes one after another. */
  private startFirstRollouts(): void {
    const l = this.net.layout;
    const profile = this.profile;
    const active = Math.min(l.inFlight, this.net.steppingLimit);
    const renderer = l.services.find((s) => s.service === 'renderer');
    const rInstances = renderer?.instances.length ?? 1;
    const load = profile.services.renderer.scene_load_s ?? 0;
    for (let i = 0; i < active; i++) {
      const slot: Slot = {
        index: i,
        worker: i % l.nrWorkers,
        due: 0,
        phase: 'idle',
        stepsDone: 0,
        startedAt: 0,
        factor: 1,
        chunkStep: 0,
      };
      this.slots.push(slot);
      if (this.dispatched < this.totalRollouts) {
        this.dispatched++;
        slot.phase = 'loading';
        slot.startedAt = 0;
        this.startRollout(slot, DISPATCH_KIND, 0);
        slot.factor = this.rng.factor(profile.noise?.rollout_cv ?? 0);
        slot.due = (Math.floor(i / rInstances) + 1) * load * (0.9 + 0.2 * this.rng.next());
      }
    }
  }

  /** Slowdown at time t: warm-up (decaying) × the optional cycle. */
  slowdown(t: number): number {
    const tl = this.profile.timeline;
    const warm = 1 + (tl.warmup_factor ?? 0) * Math.exp(-t / (tl.warmup_tau_s ?? 240));
    const f = this.profile.faults;
    const cyc =
      f?.cycle_period_s && f.cycle_amplitude
        ? 1 + f.cycle_amplitude * Math.sin((2 * Math.PI * t) / f.cycle_period_s)
        : 1;
    return warm * cyc;
  }

  private stepping(): number {
    let n = 0;
    for (const s of this.slots) if (s.phase === 'stepping') n++;
    return n;
  }

  /** Advances the simulation to time t (simulated seconds). */
  advanceTo(t: number): SimState {
    while (this.state.t < t && !this.state.ended) {
      const next = Math.min(t, Math.floor(this.state.t / TICK_S + 1) * TICK_S);
      this.runEvents(next);
      if (this.state.ended) break;
      this.integrate(this.state.t, next);
      this.state.t = next;
      this.checkFaults();
    }
    return this.state;
  }

  private checkFaults(): void {
    const f = this.profile.faults;
    const t = this.state.t;
    if (f?.crash_after_s !== undefined && t >= f.crash_after_s) this.state.ended = { reason: 'crash', at: t };
    if (f?.host_oom_after_s !== undefined && t >= f.host_oom_after_s)
      this.state.ended = { reason: 'host-oom', at: t };
  }

  private runEvents(until: number): void {
    for (;;) {
      let slot: Slot | undefined;
      for (const s of this.slots)
        if (s.phase !== 'idle' && s.due <= until && (!slot || s.due < slot.due)) slot = s;
      if (!slot) return;
      this.handle(slot);
      if (this.slots.every((s) => s.phase === 'idle') && this.dispatched >= this.totalRollouts) {
        this.state.ended = { reason: 'completed', at: slot.due };
        this.state.t = slot.due;
        return;
      }
    }
  }

  private handle(slot: Slot): void {
    const now = slot.due;
    const steps = this.profile.steps_per_rollout;
    if (slot.phase === 'stepping') {
      this.recordChunk(slot, now);
      slot.stepsDone += slot.chunkStep;
      if (slot.stepsDone >= steps) {
        this.finishRollout(slot, now);
        return;
      }
    }
    // Start (or continue) stepping: the chunk's step time follows the current load.
    slot.phase = 'stepping';
    const n = this.stepping();
    const p = pointAt(this.net, Math.max(1, n));
    slot.chunkStep = Math.min(CHUNK_STEPS, steps - slot.stepsDone);
    const stepSeconds = p.stepSeconds * this.slowdown(now) * slot.factor;
    slot.due = now + slot.chunkStep * stepSeconds;
  }

  private recordChunk(slot: Slot, now: number): void {
    const w = this.state.workers[slot.worker]!;
    const k = slot.chunkStep;
    const n = Math.max(1, this.stepping());
    const p = pointAt(this.net, n);
    const slow = this.slowdown(now) * slot.factor;
    const cv = this.profile.noise?.rpc_cv ?? 0.5;
    observe(w.stepDuration, BUCKETS.stepDuration, p.stepSeconds * slow, 0.15, k, this.rng);
    const barrier = (p.rpcSeconds.renderer ?? 0) * slow;
    observe(w.observationBarrier, BUCKETS.observationBarrier, Math.max(0.001, barrier), cv, k, this.extra);
    const l = this.net.layout;
    const workerLoad = p.workerUtilization;
    const workPerCall = this.profile.runtime.step_work_ms / 1000 / 6;
    const blocking = workPerCall * (workerLoad / Math.max(0.02, 1 - workerLoad)) + 0.0002;
    for (const s of l.services) {
      const label = METRIC_SERVICE_LABEL[s.service];
      const rpc = (p.rpcSeconds[s.service] ?? 0) * slow;
      for (const m of METHODS[s.service]) {
        const key = `${label}|${m.method}`;
        w.rpcDuration[key] ??= emptyHist(BUCKETS.rpcDuration);
        w.rpcBlocking[key] ??= emptyHist(BUCKETS.rpcBlocking);
        observe(w.rpcDuration[key], BUCKETS.rpcDuration, rpc * m.share, cv, k, this.rng);
        observe(w.rpcBlocking[key], BUCKETS.rpcBlocking, blocking, 1, k, this.rng);
      }
      let mean = depthSeenAtStart(this.net, n, s.service);
      if (s.service === 'renderer') mean += this.waitingAtRenderer() / l.nrWorkers;
      w.queueDepth[label] = Math.max(0, Math.round(mean + Math.sqrt(mean) * this.rng.normal()));
    }
  }

  /** A rollout starts on a slot: AlpaSim counts it by scheduling kind and times its wait for the scheduler. */
  private startRollout(slot: Slot, kind: string, waitS: number): void {
    const w = this.state.workers[slot.worker]!;
    w.activeRollouts++;
    w.rolloutsStarted[kind] = (w.rolloutsStarted[kind] ?? 0) + 1;
    w.schedulerWait[kind] ??= emptyHist(BUCKETS.schedulerWait);
    observe(w.schedulerWait[kind], BUCKETS.schedulerWait, Math.max(0.005, waitS), 0.3, 1, this.extra);
    this.updateJobQueue();
  }

  /** Rollout jobs not yet started, spread over the workers (0 when the run is unbounded). */
  private updateJobQueue(): void {
    const left = Number.isFinite(this.totalRollouts) ? this.totalRollouts - this.dispatched : 0;
    const n = this.state.workers.length;
    this.state.workers.forEach((w, i) => {
      w.jobQueueDepth = Math.max(0, Math.floor(left / n) + (i < left % n ? 1 : 0));
    });
  }

  private waitingAtRenderer(): number {
    let loading = 0;
    for (const s of this.slots) if (s.phase === 'loading') loading++;
    return loading + Math.max(0, this.net.layout.inFlight - this.slots.length);
  }

  private finishRollout(slot: Slot, now: number): void {
    const w = this.state.workers[slot.worker]!;
    const failed = this.rng.next() < (this.profile.faults?.failure_rate ?? 0);
    if (failed) w.failed++;
    else w.completed++;
    w.elapsed = now;
    observe(w.rolloutDuration, BUCKETS.rolloutDuration, now - slot.startedAt, 0, 1, this.rng);
    w.activeRollouts = Math.max(0, w.activeRollouts - 1);
    if (this.dispatched >= this.totalRollouts) {
      slot.phase = 'idle';
      this.updateJobQueue();
      return;
    }
    this.dispatched++;
    slot.startedAt = now;
    slot.stepsDone = 0;
    this.startRollout(slot, DISPATCH_KIND, 0);
    slot.factor = this.rng.factor(this.profile.noise?.rollout_cv ?? 0);
    // Loading: a stall when the cache leaves no slot to prefetch the next scene, else none.
    slot.phase = 'loading';
    slot.due = now + this.net.stallSecondsPerRollout * (0.9 + 0.2 * this.rng.next());
  }

  /** Continuous counters over [from, to): event loops, GPU, CPU, memory. */
  private integrate(from: number, to: number): void {
    const dt = to - from;
    if (dt <= 0) return;
    const st = this.state;
    const n = this.stepping();
    const p = pointAt(this.net, n);
    const slow = this.slowdown(to);
    const busyScale = n > 0 ? 1 / slow : 0;
    const l = this.net.layout;
    for (const w of st.workers) {
      const u = Math.min(0.98, p.workerUtilization * busyScale * (0.95 + 0.1 * this.noise.next()));
      w.work += u * dt;
      w.poll += 0.03 * (1 - u) * dt;
      w.idle += 0.97 * (1 - u) * dt;
      // Python's collector: a few collections per busy second, each a millisecond or so.
      const collections = Math.round(3 * u * dt);
      w.gc.collections += collections;
      w.gc.totalSeconds += collections * 0.0012;
      if (collections > 0) w.gc.maxSeconds = Math.max(w.gc.maxSeconds, 0.002 + 0.01 * u);
    }
    // Scene caches fill as the first rollouts load their scenes.
    const fill = Math.min(1, this.dispatched / Math.max(1, l.inFlight + 1));
    for (let g = 0; g < st.gpuUtil.length; g++) {
      const u = (p.gpuUtilization[g] ?? 0) * busyScale;
      st.gpuUtil[g] = u > 0 ? Math.max(0, Math.min(100, Math.round(100 * u + 3 * this.noise.normal()))) : 0;
      st.fbUsedMiB[g] = Math.round(((this.modelGb[g] ?? 0) + (this.cacheGb[g] ?? 0) * fill) * 1024);
    }
    let busyCores = 0;
    for (const group of PROCESS_GROUPS) {
      const cores = (p.cpuCores[group] ?? 0) * busyScale * (0.95 + 0.1 * this.noise.next());
      st.processCpu[group] = (st.processCpu[group] ?? 0) + cores * dt;
      busyCores += cores;
    }
    const perCore = Math.min(1, busyCores / this.cores);
    for (const cpu of st.nodeCpu) {
      cpu.user = (cpu.user ?? 0) + 0.85 * perCore * dt;
      cpu.system = (cpu.system ?? 0) + 0.15 * perCore * dt;
      cpu.idle = (cpu.idle ?? 0) + (1 - perCore) * dt;
    }
    const usedGb = l.hostMemoryGb;
    let avail = (this.profile.host.memory_gb - usedGb) * GIB;
    const oomAt = this.profile.faults?.host_oom_after_s;
    if (oomAt !== undefined) {
      const startLeak = 0.5 * oomAt;
      if (to > startLeak) avail *= Math.max(0, 1 - (to - startLeak) / (oomAt - startLeak));
    }
    st.nodeMemAvailable = Math.max(0, avail);
  }
}

/** GPU memory the scene caches fill, per GPU, once every cache is full. */
function sceneCacheGb(l: Layout, profile: TwinProfile): number[] {
  const cacheGb = l.gpus.map(() => 0);
  for (const s of l.services) {
    const per = (s.cacheSize ?? 0) * (profile.services[s.service].scene_memory_gb ?? 0);
    for (const inst of s.instances)
      if (inst.gpu !== null && cacheGb[inst.gpu] !== undefined) cacheGb[inst.gpu]! += per;
  }
  return cacheGb;
}

/** The state at t = 0: idle workers, the models in GPU memory, each service's host memory. */
function initialState(l: Layout, profile: TwinProfile, modelGb: readonly number[]): SimState {
  const cores = profile.cpu.cores;
  const state: SimState = {
    t: 0,
    workers: Array.from({ length: l.nrWorkers }, (_, w) =>
      emptyWorker(
        w,
        l.services.map((s) => s.service),
      ),
    ),
    gpuUtil: l.gpus.map(() => 0),
    fbUsedMiB: modelGb.map((g) => g * 1024),
    fbTotalMiB: profile.gpu.memory_gb * 1024,
    processCpu: Object.fromEntries(PROCESS_GROUPS.map((g) => [g, 0])),
    processMemory: Object.fromEntries(PROCESS_GROUPS.map((g) => [g, 0])),
    processes: processList(l),
    nodeMemTotal: profile.host.memory_gb * GIB,
    nodeMemAvailable: (profile.host.memory_gb - (profile.host.base_used_gb ?? 0)) * GIB,
    nodeCpu: Array.from({ length: cores }, () => Object.fromEntries(CPU_MODES.map((m) => [m, 0]))),
  };
  for (const s of l.services)
    state.processMemory[s.service] =
      (profile.services[s.service].host_memory_gb ?? 0) * s.instances.length * GIB;
  state.processMemory.runtime = (profile.runtime.memory_gb ?? 0) * l.nrWorkers * GIB;
  return state;
}

function emptyHist(buckets: readonly number[]): Hist {
  return { counts: new Array(buckets.length + 1).fill(0), sum: 0, count: 0 };
}

function emptyWorker(worker: number, services: ServiceName[]): WorkerState {
  return {
    worker,
    completed: 0,
    failed: 0,
    elapsed: 0,
    queueDepth: Object.fromEntries(services.map((s) => [METRIC_SERVICE_LABEL[s], 0])),
    rpcDuration: {},
    rpcBlocking: {},
    rolloutDuration: emptyHist(BUCKETS.rolloutDuration),
    stepDuration: emptyHist(BUCKETS.stepDuration),
    idle: 0,
    poll: 0,
    work: 0,
    activeRollouts: 0,
    rolloutsStarted: {},
    schedulerWait: {},
    observationBarrier: emptyHist(BUCKETS.observationBarrier),
    jobQueueDepth: 0,
    gc: { totalSeconds: 0, maxSeconds: 0, collections: 0 },
  };
}

/** The processes the exporter would see: one per service instance (own port) and one per runtime worker. */
function processList(l: Layout): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  let pid = 4100;
  let port = 6000;
  for (const s of l.services)
    for (const inst of s.instances)
      out.push({
        group: s.service,
        pid: String(pid++),
        port: String(port++),
        gpus: inst.gpu === null ? [] : [inst.gpu],
        share: 1 / s.instances.length,
      });
  for (let w = 0; w < l.nrWorkers; w++)
    out.push({ group: 'runtime', pid: String(pid++), port: '', gpus: [], share: 1 / l.nrWorkers });
  return out;
}

/** Adds `count` observations around `mean` (log-normal, cv) as a few weighted draws: cheap, right in aggregate. */
export function observe(
  h: Hist,
  buckets: readonly number[],
  mean: number,
  cv: number,
  count: number,
  rng: Rng,
): void {
  if (count <= 0) return;
  const draws = cv > 0 ? Math.min(count, 3) : 1;
  let left = count;
  for (let d = 0; d < draws; d++) {
    const weight = d === draws - 1 ? left : Math.floor(count / draws);
    left -= weight;
    const v = mean * rng.factor(cv);
    let b = buckets.findIndex((le) => v <= le);
    if (b < 0) b = buckets.length;
    h.counts[b]! += weight;
    h.sum += v * weight;
  }
  h.count += count;
}

/** A deep copy of the state (for time series). */
export function snapshot(s: SimState): SimState {
  return structuredClone(s);
}

export interface SimulationResult {
  steady: SteadyState;
  /** State every `intervalS` simulated seconds from 0 (inclusive) to the end. */
  samples: SimState[];
  ended?: SimState['ended'];
}

/** A whole run's history: pure and deterministic for a seed. */
export function simulate(
  topology: Topology,
  profile: TwinProfile,
  options: SimulationOptions & { durationS: number; intervalS?: number },
): SimulationResult {
  const sim = new Simulation(topology, profile, options);
  const interval = options.intervalS ?? 5;
  const samples: SimState[] = [snapshot(sim.state)];
  for (let t = interval; t <= options.durationS + 1e-9; t += interval) {
    sim.advanceTo(t);
    samples.push(snapshot(sim.state));
    if (sim.state.ended) break;
  }
  return { steady: sim.steady, samples, ...(sim.state.ended ? { ended: sim.state.ended } : {}) };
}
