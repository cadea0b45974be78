// Serves the twin's state through prom-client registries with AlpaSim's metric names, types and labels:
// one registry per runtime worker, plus DCGM, process-exporter and node-exporter registries.
import { Counter, Gauge, Registry } from 'prom-client';
import { RAW_METRICS } from '../catalog/alpasim.js';
import type { Hist, SimState, WorkerState } from './engine.js';
import { BUCKETS } from './spec.js';

type Labels = Record<string, string>;

/** A histogram whose cumulative buckets come from the twin's state; prom-client formats it. */
class StateHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: readonly number[],
    private readonly read: () => { labels: Labels; hist: Hist }[],
  ) {}
  async get() {
    const values: { metricName: string; labels: Labels; value: number }[] = [];
    for (const { labels, hist } of this.read()) {
      let acc = 0;
      this.buckets.forEach((le, i) => {
        acc += hist.counts[i] ?? 0;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: String(le) }, value: acc });
      });
      values.push({
        metricName: `${this.name}_bucket`,
        labels: { ...labels, le: '+Inf' },
        value: hist.count,
      });
      values.push({ metricName: `${this.name}_sum`, labels, value: hist.sum });
      values.push({ metricName: `${this.name}_count`, labels, value: hist.count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}

function register(registry: Registry, metric: StateHistogram): void {
  registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
}

/** Sets a prom-client counter to an absolute cumulative value. */
function setCounter(c: Counter<string>, labels: Labels, value: number, last: Map<string, number>): void {
  const key = JSON.stringify(labels);
  const prev = last.get(key) ?? 0;
  if (value > prev) c.inc(labels, value - prev);
  else if (!last.has(key)) c.inc(labels, 0);
  last.set(key, Math.max(prev, value));
}

export interface TwinRegistries {
  workers: Registry[];
  dcgm: Registry;
  process: Registry;
  node: Registry;
  /** Copies the state into the prom-client metrics (call before serving a scrape). */
  update(state: SimState): void;
}

export function createRegistries(state: SimState, opts: { hostname: string }): TwinRegistries {
  let current = state;
  const workers = state.workers.map((w) => workerRegistry(w.worker, () => current.workers[w.worker]!));
  const dcgm = dcgmExporter(opts.hostname);
  const process = processExporter();
  const node = nodeExporter();
  const registries: TwinRegistries = {
    workers: workers.map((w) => w.registry),
    dcgm: dcgm.registry,
    process: process.registry,
    node: node.registry,
    update(s) {
      current = s;
      for (const w of workers) w.update(s.workers[w.worker]!);
      dcgm.update(s);
      process.update(s);
      node.update(s);
    },
  };
  registries.update(state);
  return registries;
}

/** One exporter's registry and how it copies the twin's state into its metrics. */
interface Exporter {
  registry: Registry;
  update(s: SimState): void;
}

/** DCGM's GPU gauges: utilisation, framebuffer memory and the profiling ratios. */
function dcgmExporter(hostname: string): Exporter {
  const registry = new Registry();
  const gpuGauge = (name: string, help: string) =>
    new Gauge({ name, help, labelNames: GPU_LABELS, registers: [registry] });
  const util = gpuGauge(RAW_METRICS.gpuUtil, 'GPU utilization (in %).');
  const used = gpuGauge(RAW_METRICS.fbUsed, 'Framebuffer memory used (in MiB).');
  const free = gpuGauge(RAW_METRICS.fbFree, 'Framebuffer memory free (in MiB).');
  const total = gpuGauge(RAW_METRICS.fbTotal, 'Framebuffer memory total (in MiB).');
  const dcgmExtra = DCGM_EXTRA.map(([name, help]) => gpuGauge(name, help));
  return {
    registry,
    update(s) {
      s.gpuUtil.forEach((u, g) => {
        const labels = gpuLabels(g, hostname);
        util.set(labels, u);
        used.set(labels, s.fbUsedMiB[g] ?? 0);
        const reserved = Math.round(s.fbTotalMiB * RESERVED_FRACTION);
        free.set(labels, Math.max(0, s.fbTotalMiB - reserved - (s.fbUsedMiB[g] ?? 0)));
        total.set(labels, s.fbTotalMiB);
        // FB_RESERVED, then the profiling ratios: rough fractions of the utilisation.
        dcgmExtra[0]!.set(labels, reserved);
        for (const [i, r] of PROF_RATIOS.entries()) dcgmExtra[i + 1]!.set(labels, Math.min(1, (u / 100) * r));
      });
    },
  };
}

/** The Slurm process exporter: CPU and memory per service group and per process, the GPUs AlpaSim owns. */
function processExporter(): Exporter {
  const registry = new Registry();
  const registers = [registry];
  const pcpu = new Counter({
    name: RAW_METRICS.processCpu,
    help: 'Cpu usage in seconds',
    labelNames: ['groupname'],
    registers,
  });
  const pmem = new Gauge({
    name: RAW_METRICS.processMemory,
    help: 'Memory usage in bytes',
    labelNames: ['groupname', 'memtype'],
    registers,
  });
  const perProcess = new Counter({
    name: 'alpasim_process_cpu_seconds_total',
    help: 'Cpu usage in seconds by process',
    labelNames: ['groupname', 'pid', 'port'],
    registers,
  });
  const workload = new Gauge({
    name: 'alpasim_gpu_workload_info',
    help: 'Physical GPUs owned by AlpaSim processes',
    labelNames: ['gpu'],
    registers,
  });
  const scrape = new Gauge({
    name: 'alpasim_slurm_process_exporter_scrape_duration_seconds',
    help: 'Time spent collecting Slurm process metrics',
    registers,
  });
  const last = new Map<string, number>();
  return {
    registry,
    update(s) {
      for (const [group, sec] of Object.entries(s.processCpu)) {
        setCounter(pcpu, { groupname: group }, sec, last);
        for (const p of s.processes)
          if (p.group === group)
            setCounter(perProcess, { groupname: group, pid: p.pid, port: p.port }, sec * p.share, last);
      }
      for (const [group, bytes] of Object.entries(s.processMemory))
        pmem.set({ groupname: group, memtype: 'resident' }, bytes);
      for (const g of new Set(s.processes.flatMap((p) => p.gpus))) workload.set({ gpu: String(g) }, 1);
      scrape.set(0.004);
    },
  };
}

/** node-exporter: the host's memory and CPU seconds per mode. */
function nodeExporter(): Exporter {
  const registry = new Registry();
  const memTotal = new Gauge({
    name: RAW_METRICS.hostMemTotal,
    help: 'Memory information field MemTotal_bytes.',
    registers: [registry],
  });
  const memAvail = new Gauge({
    name: RAW_METRICS.hostMemAvailable,
    help: 'Memory information field MemAvailable_bytes.',
    registers: [registry],
  });
  const ncpu = new Counter({
    name: RAW_METRICS.hostCpu,
    help: 'Seconds the CPUs spent in each mode.',
    labelNames: ['cpu', 'mode'],
    registers: [registry],
  });
  const last = new Map<string, number>();
  return {
    registry,
    update(s) {
      memTotal.set(s.nodeMemTotal);
      memAvail.set(s.nodeMemAvailable);
      s.nodeCpu.forEach((modes, cpu) => {
        for (const [mode, sec] of Object.entries(modes))
          setCounter(ncpu, { cpu: String(cpu), mode }, sec, last);
      });
    },
  };
}

const GPU_LABELS = ['gpu', 'UUID', 'device', 'modelName', 'Hostname'];
/** Share of the framebuffer the driver reserves (DCGM_FI_DEV_FB_RESERVED). */
const RESERVED_FRACTION = 0.006;
/** The counters AlpaSim's dcgm-counters.csv adds beyond utilisation and FB used/free/total. */
const DCGM_EXTRA: [string, string][] = [
  ['DCGM_FI_DEV_FB_RESERVED', 'Reserved framebuffer memory (in MiB).'],
  ['DCGM_FI_PROF_SM_ACTIVE', 'Ratio of cycles at least one warp was resident on an SM.'],
  ['DCGM_FI_PROF_SM_OCCUPANCY', 'Ratio of resident warps to maximum resident warps.'],
  ['DCGM_FI_PROF_PIPE_TENSOR_ACTIVE', 'Ratio of cycles the tensor core pipe was active.'],
  ['DCGM_FI_PROF_DRAM_ACTIVE', 'Ratio of cycles the device memory interface was active.'],
];
/** Profiling ratio per unit of utilisation, in DCGM_EXTRA's order after FB_RESERVED. */
const PROF_RATIOS = [0.85, 0.45, 0.3, 0.5];
function gpuLabels(g: number, hostname: string): Labels {
  const uuid = `GPU-7717${String(g).padStart(4, '0')}-twin-0000-0000-00000000000${g % 10}`;
  return {
    gpu: String(g),
    UUID: uuid,
    device: `nvidia${g}`,
    modelName: 'NVIDIA Twin GPU',
    Hostname: hostname,
  };
}

/** A runtime worker's histograms, read from its state at scrape time (in AlpaSim's registration order). */
const WORKER_HISTOGRAMS: {
  name: string;
  help: string;
  buckets: readonly number[];
  read: (w: WorkerState, id: string) => { labels: Labels; hist: Hist }[];
}[] = [
  {
    name: RAW_METRICS.rpcDuration,
    help: 'RPC call duration',
    buckets: BUCKETS.rpcDuration,
    read: (w, id) => rpcHists(w.rpcDuration, id),
  },
  {
    name: RAW_METRICS.rpcBlocking,
    help: 'Time between gRPC I/O completion and coroutine resumption',
    buckets: BUCKETS.rpcBlocking,
    read: (w, id) => rpcHists(w.rpcBlocking, id),
  },
  {
    name: RAW_METRICS.rolloutDuration,
    help: 'Total rollout execution time',
    buckets: BUCKETS.rolloutDuration,
    read: (w, id) => [{ labels: { worker_id: id }, hist: w.rolloutDuration }],
  },
  {
    name: RAW_METRICS.stepDuration,
    help: 'Per-step execution time',
    buckets: BUCKETS.stepDuration,
    read: (w, id) => [{ labels: { worker_id: id }, hist: w.stepDuration }],
  },
  {
    name: 'alpasim_observation_barrier_seconds',
    help: 'Wall time awaiting the pre-drive observation barrier',
    buckets: BUCKETS.observationBarrier,
    read: (w, id) => [{ labels: { worker_id: id }, hist: w.observationBarrier }],
  },
  {
    name: 'alpasim_renderer_scheduler_wait_seconds',
    help: 'Time a renderer-backed rollout waited for scheduler assignment',
    buckets: BUCKETS.schedulerWait,
    read: (w, id) =>
      Object.entries(w.schedulerWait).map(([kind, hist]) => ({ labels: { kind, worker_id: id }, hist })),
  },
];

/** RPC histograms are kept under "service|method". */
function rpcHists(hists: Record<string, Hist>, id: string): { labels: Labels; hist: Hist }[] {
  return Object.entries(hists).map(([k, hist]) => {
    const [service, method] = k.split('|') as [string, string];
    return { labels: { service, method, worker_id: id }, hist };
  });
}

function workerRegistry(worker: number, read: () => WorkerState) {
  const registry = new Registry();
  const id = String(worker);
  const metrics = workerMetrics(registry, id, read);
  const last = new Map<string, number>();
  return { worker, registry, update: (w: WorkerState) => updateWorker(metrics, id, w, last) };
}

/** Registers a runtime worker's metrics, in the order AlpaSim's runtime registers them. */
function workerMetrics(registry: Registry, id: string, read: () => WorkerState) {
  const counter = (name: string, help: string, labelNames: string[]) =>
    new Counter({ name, help, labelNames, registers: [registry] });
  const gauge = (name: string, help: string, labelNames: string[] = ['worker_id']) =>
    new Gauge({ name, help, labelNames, registers: [registry] });
  const rollouts = counter(RAW_METRICS.rolloutsTotal, 'Number of rollouts reaching a terminal status', [
    'status',
    'worker_id',
  ]);
  const elapsed = gauge(
    RAW_METRICS.simulationElapsed,
    'Simulation worker elapsed time sampled when rollouts finish',
  );
  const depth = gauge(RAW_METRICS.queueDepth, 'Latest observed queue depth when an RPC was initiated', [
    'service',
    'worker_id',
  ]);
  const idle = gauge(RAW_METRICS.eventLoopIdle, 'Total event loop idle time (blocking waits for I/O)');
  const poll = gauge(RAW_METRICS.eventLoopPoll, 'Total event loop poll time (non-blocking I/O checks)');
  const work = gauge(RAW_METRICS.eventLoopWork, 'Total event loop work time (executing Python code)');
  for (const h of WORKER_HISTOGRAMS)
    register(registry, new StateHistogram(h.name, h.help, h.buckets, () => h.read(read(), id)));
  const started = counter(
    'alpasim_renderer_rollouts_started_total',
    'Renderer-backed rollouts started by scheduling decision',
    ['kind', 'worker_id'],
  );
  return {
    rollouts,
    elapsed,
    depth,
    idle,
    poll,
    work,
    started,
    active: gauge('alpasim_renderer_active_rollouts', 'Renderer-backed rollouts currently executing'),
    jobs: gauge('alpasim_job_queue_depth', 'Runtime rollout jobs waiting for a worker'),
    gcTotal: gauge('alpasim_gc_total_duration_seconds', 'Total time spent in garbage collection'),
    gcMax: gauge('alpasim_gc_max_duration_seconds', 'Longest single garbage collection pause'),
    gcCount: gauge('alpasim_gc_collection_count_total', 'Total number of GC collections'),
  };
}

function updateWorker(
  m: ReturnType<typeof workerMetrics>,
  id: string,
  w: WorkerState,
  last: Map<string, number>,
): void {
  setCounter(m.rollouts, { status: 'completed', worker_id: id }, w.completed, last);
  setCounter(m.rollouts, { status: 'failed', worker_id: id }, w.failed, last);
  m.elapsed.set({ worker_id: id }, w.elapsed);
  for (const [service, d] of Object.entries(w.queueDepth)) m.depth.set({ service, worker_id: id }, d);
  m.idle.set({ worker_id: id }, w.idle);
  m.poll.set({ worker_id: id }, w.poll);
  m.work.set({ worker_id: id }, w.work);
  for (const [kind, n] of Object.entries(w.rolloutsStarted))
    setCounter(m.started, { kind, worker_id: id }, n, last);
  m.active.set({ worker_id: id }, w.activeRollouts);
  m.jobs.set({ worker_id: id }, w.jobQueueDepth);
  m.gcTotal.set({ worker_id: id }, w.gc.totalSeconds);
  m.gcMax.set({ worker_id: id }, w.gc.maxSeconds);
  m.gcCount.set({ worker_id: id }, w.gc.collections);
}
