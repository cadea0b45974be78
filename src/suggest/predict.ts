// Proposals that predict their gain: the twin's queueing model (src/sim/model.ts) calibrated on the
// runs measured so far, from their metrics only (throughput, queue depth at an RPC's start, runtime
// idle fraction, GPU utilisation and process CPU), never from a hardware profile. Pure.
//
// The unknowns are per-service rates (seconds per call, the share of a call on the GPU, CPU per
// call), the runtime's work per step, the per-RPC latency and the GPU time-slicing contention. They
// are fitted by regularised least squares (Levenberg-Marquardt on log-parameters, a weak prior
// toward typical values for the directions the runs never varied). A proposal's seconds per rollout
// is the measured parent's value times the model's ratio (proposal ÷ parent), so what the model gets
// wrong about both cancels. Its interval adds: the parameters' uncertainty (delta method on the fit's
// covariance, inflated by the misfit), the parent's measurement, a structural term that grows with
// the size of the predicted change (a model is surer of the direction than of the magnitude), and,
// once runs predicted earlier were measured, their calibration error.
import { METRIC_SERVICE_LABEL, SERVICES, type ServiceName } from '../catalog/alpasim.js';
import { type SteadyState, steadyState } from '../sim/model.js';
import { activeServices } from '../topology/capacity.js';
import type { Topology } from '../types/generated/topology.js';
import type { TwinProfile } from '../types/generated/twin-profile.js';
import { secondsPerRollout } from './evidence.js';
import type { ClusterLimits, TriedCandidate } from './types.js';

/** Two-sided coverage of the predicted interval. */
export const PREDICTION_LEVEL = 0.9;
const Z = 1.645;
/** Relative 1-σ structural error per unit of predicted log change (tuned on the shipped profiles). */
export const STRUCTURAL_ERROR = 0.25;
/** Relative 1-σ floor of any prediction (a model never knows a new topology better than this). */
const FLOOR = 0.01;
/**
 * Relative 1-σ error of putting different services on a GPU together where no measured run had
 * them together, per share of the node's GPUs so shared: co-located inference services interfere
 * beyond time slicing (memory bandwidth, caches; commonly 10-30%), which no run has shown yet.
 */
export const COLOCATION_ERROR = 0.15;
/**
 * Above this reduced chi-square the model cannot reproduce the measured readings: its predictions
 * are shown, but proposals are ranked by the tuning rules and none is dropped on a prediction.
 */
export const MAX_MISFIT = 4;
/** Relative 1-σ error per unit of √(misfit − 1): a model that fits badly extrapolates worse. */
const MISFIT_ERROR = 0.03;

/** Typical rates of an AlpaSim service (the prior the runs pull away from; never a profile's truth). */
const PRIOR: Record<ServiceName, { callMs: number; share: number; cpuMs: number; loadS: number }> = {
  renderer: { callMs: 50, share: 0.8, cpuMs: 2, loadS: 10 },
  driver: { callMs: 80, share: 0.5, cpuMs: 4, loadS: 0 },
  physics: { callMs: 30, share: 0.3, cpuMs: 2, loadS: 2 },
  controller: { callMs: 40, share: 0, cpuMs: 6, loadS: 0 },
  trafficsim: { callMs: 30, share: 0.5, cpuMs: 2, loadS: 0 },
};
const PRIOR_RUNTIME = { workMs: 10, latencyMs: 2, contention: 0.03 };
const STEPS = 200; // the model is scale-free in steps per rollout: any fixed number does

interface Param {
  name: string;
  prior: number;
  sd: number;
  /** Reads the parameter (in its transformed scale) into the profile. */
  set: (p: TwinProfile, x: number) => void;
}

const logit = (p: number) => Math.log(p / (1 - p));
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/** A measured run as the calibration reads it. */
export interface Measurement {
  name: string;
  topology: Topology;
  seconds: number;
  /** Standard error of log(seconds) from its interval (0.01 when unknown). */
  logSe: number;
  /** Queue depth at an RPC's start, worker max and min, by service. */
  queues: Partial<Record<ServiceName, { max: number; min: number }>>;
  idle?: number;
  /** GPU utilisation, 0-1, by GPU index. */
  gpuUtil: Map<number, number>;
  /** Busy cores by process group. */
  cpuCores: Map<string, number>;
}

/** The metrics of a tried candidate, when it was measured (its value and at least one more reading). */
export function measurementOf(run: TriedCandidate): Measurement | undefined {
  if (run.status === 'failed' || run.observation?.failure) return undefined;
  const o = run.observation;
  // the model is a steady state: the verdict's steady rate when it has one (the projected full-run
  // value also carries the start-up, which no topology change predicts)
  const steady = o?.verdict?.steady_seconds_per_rollout;
  const seconds = steady?.value ?? secondsPerRollout(run);
  if (seconds === undefined || !(seconds > 0)) return undefined;
  const iv = steady ?? o?.verdict?.projected_full_run ?? o?.verdict?.value;
  const logSe =
    iv && iv.low > 0 && iv.high > iv.low ? (Math.log(iv.high) - Math.log(iv.low)) / (2 * 1.96) : 0.01;
  const m = o?.stable_metrics;
  const queues: Measurement['queues'] = {};
  for (const [name, q] of Object.entries(m?.rpc_queue_depth_at_start_latest_by_service ?? {})) {
    const svc = (SERVICES as readonly string[]).includes(name) ? (name as ServiceName) : undefined;
    if (svc && q.worker_max != null && q.worker_min != null)
      queues[svc] = { max: q.worker_max, min: q.worker_min };
  }
  const gpuUtil = new Map<number, number>();
  for (const [gpu, u] of Object.entries(m?.resource_usage?.gpu_by_index ?? {})) {
    const mean = u.utilization_percent?.mean;
    if (typeof mean === 'number' && Number.isFinite(mean)) gpuUtil.set(Number(gpu), mean / 100);
  }
  const cpuCores = new Map<string, number>();
  for (const [group, c] of Object.entries(
    m?.resource_usage?.process_cpu_utilization_percent_by_group ?? {},
  )) {
    if (typeof c.mean === 'number' && Number.isFinite(c.mean)) cpuCores.set(group, c.mean / 100);
  }
  const idle = m?.runtime_idle_fraction;
  return {
    name: run.name,
    topology: run.topology,
    seconds,
    logSe: Math.max(0.003, logSe),
    queues,
    ...(typeof idle === 'number' ? { idle } : {}),
    gpuUtil,
    cpuCores,
  };
}

/** Expected maximum of w standard normals (Blom): the spread of a per-worker gauge's max over workers. */
function expectedMaxNormal(w: number): number {
  if (w <= 1) return 0;
  return normalQuantile((w - 0.375) / (w + 0.25));
}

/** Inverse of the standard normal CDF (Acklam's rational approximation, |error| < 1.2e-9). */
export function normalQuantile(p: number): number {
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716,
    2.506628277459239,
  ];
  const b = [
    -54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572,
  ];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (
      (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
      ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1)
    );
  }
  if (p > 1 - lo) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}

function baseProfile(cluster: ClusterLimits): TwinProfile {
  const svc = (s: ServiceName) => ({
    call_ms: PRIOR[s].callMs,
    gpu_share: PRIOR[s].share,
    cpu_ms: PRIOR[s].cpuMs,
    scene_load_s: PRIOR[s].loadS,
  });
  return {
    name: 'calibrated',
    description: 'the twin model calibrated on measured runs',
    gpu: { count: cluster.gpusPerNode, memory_gb: 1e9, contention: PRIOR_RUNTIME.contention },
    cpu: { cores: cluster.cpusPerNode },
    host: { memory_gb: 1e9 },
    steps_per_rollout: STEPS,
    services: {
      renderer: svc('renderer'),
      driver: svc('driver'),
      physics: svc('physics'),
      controller: svc('controller'),
      trafficsim: svc('trafficsim'),
    },
    runtime: { step_work_ms: PRIOR_RUNTIME.workMs, rpc_latency_ms: PRIOR_RUNTIME.latencyMs },
    timeline: { startup_s: 300 },
  };
}

/** The calibration's unknowns for the services the runs use. */
function parameters(services: ServiceName[], onGpu: Set<ServiceName>): Param[] {
  const out: Param[] = [];
  for (const s of services) {
    out.push({
      name: `${s}.call_ms`,
      prior: Math.log(PRIOR[s].callMs),
      sd: Math.log(4),
      set: (p, x) => {
        p.services[s].call_ms = Math.exp(x);
      },
    });
    if (onGpu.has(s))
      out.push({
        name: `${s}.gpu_share`,
        prior: logit(Math.min(0.95, Math.max(0.05, PRIOR[s].share))),
        sd: 1.5,
        set: (p, x) => {
          p.services[s].gpu_share = sigmoid(x);
        },
      });
    out.push({
      name: `${s}.cpu_ms`,
      prior: Math.log(PRIOR[s].cpuMs),
      sd: Math.log(4),
      set: (p, x) => {
        p.services[s].cpu_ms = Math.exp(x);
      },
    });
  }
  out.push(
    {
      name: 'runtime.step_work_ms',
      prior: Math.log(PRIOR_RUNTIME.workMs),
      sd: Math.log(4),
      set: (p, x) => {
        p.runtime.step_work_ms = Math.exp(x);
      },
    },
    {
      name: 'runtime.rpc_latency_ms',
      prior: Math.log(PRIOR_RUNTIME.latencyMs),
      sd: Math.log(3),
      set: (p, x) => {
        p.runtime.rpc_latency_ms = Math.exp(x);
      },
    },
    {
      name: 'gpu.contention',
      prior: Math.log(PRIOR_RUNTIME.contention),
      sd: Math.log(3),
      set: (p, x) => {
        p.gpu.contention = Math.exp(x);
      },
    },
  );
  return out;
}

function profileAt(base: TwinProfile, params: Param[], x: readonly number[]): TwinProfile {
  const p = structuredClone(base);
  for (const [i, q] of params.entries()) q.set(p, x[i]!);
  return p;
}

/** Residuals of one run's readings against the model's steady state (each in units of its noise). */
function runResiduals(m: Measurement, ss: SteadyState, out: number[]): void {
  out.push((Math.log(m.seconds) - Math.log(ss.secondsPerRollout)) / m.logSe);
  if (m.idle !== undefined) out.push((m.idle - ss.idleFraction) / 0.02);
  for (const [gpu, u] of m.gpuUtil) {
    const model = ss.gpuUtilization[gpu];
    if (model === undefined) continue;
    // a saturated reading only says "at least this busy"
    out.push(u >= 0.97 && model >= 0.95 ? 0 : (u - model) / 0.04);
  }
  const workers = Math.max(1, m.topology.runtime?.nr_workers ?? 1);
  const e = expectedMaxNormal(workers);
  for (const [svc, q] of Object.entries(m.queues) as [ServiceName, { max: number; min: number }][]) {
    const mean = ss.queueDepth[METRIC_SERVICE_LABEL[svc]];
    if (mean === undefined) continue;
    const spread = Math.sqrt(Math.max(0, mean)) * e;
    const max = mean + spread;
    const min = Math.max(0, mean - spread);
    out.push((q.max - max) / (0.3 + 0.15 * max), (q.min - min) / (0.3 + 0.15 * max));
  }
  for (const [group, cores] of m.cpuCores) {
    const model = ss.cpuCores[group];
    if (model === undefined || (cores < 0.05 && model < 0.05)) continue;
    out.push((Math.log(cores + 0.05) - Math.log(model + 0.05)) / 0.15);
  }
}

export interface Calibration {
  /** The calibrated model (a profile shape, for the twin's steadyState). */
  profile: TwinProfile;
  /** Runs it was fitted on. */
  runs: string[];
  /** Covariance of the log-parameters (misfit-inflated). */
  covariance: number[][];
  /** Reduced chi-square of the readings (1 when they fit within their noise). */
  misfit: number;
  /** RMS of log(measured ÷ predicted) over runs measured after a prediction (calibration error), or null. */
  calibrationError: number | null;
  params: string[];
  /** Internal: the transformed parameters. */
  x: number[];
  /** Pairs of different services measured together on one GPU ("driver+physics"). */
  colocated: string[];
}

/** Pairs of different services sharing a GPU in a topology ("driver+physics", sorted). */
export function colocatedPairs(t: Topology): Set<string> {
  const onGpu = new Map<number, Set<ServiceName>>();
  for (const svc of activeServices(t)) {
    const gpus = t.services?.[svc]?.gpus;
    if (!Array.isArray(gpus)) continue;
    for (const g of gpus) onGpu.set(g, (onGpu.get(g) ?? new Set()).add(svc));
  }
  const pairs = new Set<string>();
  for (const services of onGpu.values()) {
    const list = [...services].sort();
    for (let i = 0; i < list.length; i++)
      for (let j = i + 1; j < list.length; j++) pairs.add(`${list[i]}+${list[j]}`);
  }
  return pairs;
}

/** Share of the topology's GPUs that hold a pair of services no measured run held together. */
function newlyShared(t: Topology, measured: ReadonlySet<string>): number {
  const onGpu = new Map<number, Set<ServiceName>>();
  for (const svc of activeServices(t)) {
    const gpus = t.services?.[svc]?.gpus;
    if (!Array.isArray(gpus)) continue;
    for (const g of gpus) onGpu.set(g, (onGpu.get(g) ?? new Set()).add(svc));
  }
  if (onGpu.size === 0) return 0;
  let fresh = 0;
  for (const services of onGpu.values()) {
    const list = [...services].sort();
    let isNew = false;
    for (let i = 0; i < list.length; i++)
      for (let j = i + 1; j < list.length; j++) if (!measured.has(`${list[i]}+${list[j]}`)) isNew = true;
    if (isNew) fresh++;
  }
  return fresh / onGpu.size;
}

export interface PriorPrediction {
  name: string;
  predictedSeconds: number;
}

/**
 * Calibrates the model on the measured runs (failed and unmeasured runs are skipped). `previous`
 * (predictions made for runs before they were measured) gives the calibration error; `start` warms
 * the fit from an earlier calibration.
 */
export function calibrate(
  tried: readonly TriedCandidate[],
  cluster: ClusterLimits,
  options: { previous?: readonly PriorPrediction[]; start?: Calibration; maxRuns?: number } = {},
): Calibration | null {
  const measured = tried.map(measurementOf).filter((m): m is Measurement => !!m);
  if (measured.length === 0) return null;
  // the most recent runs carry what the next proposals are near
  const used = measured.slice(-(options.maxRuns ?? 8));
  const services = [...new Set(used.flatMap((m) => activeServices(m.topology)))];
  const onGpu = new Set(
    services.filter((s) => used.some((m) => Array.isArray(m.topology.services?.[s]?.gpus))),
  );
  const base = baseProfile(cluster);
  const params = parameters(services, onGpu);
  const prior = params.map((p) => p.prior);
  const startX =
    options.start && options.start.params.join() === params.map((p) => p.name).join()
      ? options.start.x
      : prior;
  const residuals = (x: readonly number[]): number[] => {
    const profile = profileAt(base, params, x);
    const out: number[] = [];
    for (const m of used) runResiduals(m, steadyState(m.topology, profile), out);
    for (const [i, p] of params.entries()) out.push((x[i]! - p.prior) / p.sd);
    return out;
  };
  const fit = levenbergMarquardt(residuals, startX, options.start ? 8 : 20);
  const dataCount = fit.r.length - params.length;
  const chi2 = fit.r.slice(0, dataCount).reduce((a, v) => a + v * v, 0);
  const misfit = Math.max(1, chi2 / Math.max(1, dataCount - Math.min(params.length, dataCount - 1)));
  const cov = invert(fit.jtj).map((row) => row.map((v) => v * misfit));
  const errors: number[] = [];
  for (const p of options.previous ?? []) {
    const m = measured.find((x) => x.name === p.name);
    if (m && p.predictedSeconds > 0) errors.push(Math.log(m.seconds / p.predictedSeconds));
  }
  return {
    profile: profileAt(base, params, fit.x),
    runs: used.map((m) => m.name),
    covariance: cov,
    misfit,
    calibrationError: errors.length ? Math.sqrt(errors.reduce((a, e) => a + e * e, 0) / errors.length) : null,
    params: params.map((p) => p.name),
    x: fit.x,
    colocated: [...new Set(used.flatMap((m) => [...colocatedPairs(m.topology)]))].sort(),
  };
}

/**
 * Run-minutes a candidate is expected to take to a decision for a true gain g: the warm-up, then a
 * sequential test whose sample size grows like 1/g² (about 25 minutes at 5%), at most 120.
 */
export function expectedDecisionMinutes(gain: number): number {
  const g = Math.abs(gain);
  if (!(g > 0)) return 120;
  return Math.min(120, 15 + 0.025 / (g * g));
}

/**
 * A proposal is dropped when even the optimistic end of a one-sided 80% bound on its gain (z = 0.84)
 * is below min_improvement: the interval shown is the 90% one, the drop rule spends less of the GPU
 * time on marginal candidates (a tie costs the most run-minutes to settle).
 */
export const DROP_Z = 0.84;

export interface Prediction {
  /** Predicted seconds per rollout, with its PREDICTION_LEVEL interval. */
  seconds: number;
  low: number;
  high: number;
  /** Relative gain against the parent's measured value (positive = faster), with its interval. */
  gain: number;
  gainLow: number;
  gainHigh: number;
  /** The parent the prediction is anchored on. */
  parent: string;
  /** Standard deviation of log(seconds): the interval is seconds × exp(±Z × logSd). */
  logSd: number;
}

/**
 * The predicted seconds per rollout of a topology, anchored on its measured parent: parent's value ×
 * model(topology) ÷ model(parent). Null when the model cannot run it (e.g. no rollouts in flight).
 */
export function predictSeconds(
  cal: Calibration,
  topology: Topology,
  parent: { name: string; topology: Topology; seconds: number; logSe?: number },
): Prediction | null {
  const base = cal.profile;
  const model = (p: TwinProfile, t: Topology) => steadyState(t, p).secondsPerRollout;
  const ratioAt = (p: TwinProfile) => Math.log(model(p, topology)) - Math.log(model(p, parent.topology));
  const r = ratioAt(base);
  if (!Number.isFinite(r)) return null;
  // delta method on the log-ratio: gradient by forward differences in the calibrated parameters
  const h = 1e-3;
  const grad = cal.x.map((_, i) => {
    const x = [...cal.x];
    x[i]! += h;
    return (ratioAt(withParam(cal, x)) - r) / h;
  });
  let variance = 0;
  for (let i = 0; i < grad.length; i++)
    for (let j = 0; j < grad.length; j++) variance += grad[i]! * (cal.covariance[i]?.[j] ?? 0) * grad[j]!;
  const structural = STRUCTURAL_ERROR * Math.abs(r);
  const colocation = COLOCATION_ERROR * newlyShared(topology, new Set(cal.colocated));
  const misfit = MISFIT_ERROR * Math.sqrt(Math.max(0, cal.misfit - 1));
  const sd = Math.sqrt(
    Math.max(0, variance) +
      structural ** 2 +
      colocation ** 2 +
      misfit ** 2 +
      (parent.logSe ?? 0) ** 2 +
      (cal.calibrationError ?? 0) ** 2 +
      FLOOR ** 2,
  );
  const seconds = parent.seconds * Math.exp(r);
  const low = seconds * Math.exp(-Z * sd);
  const high = seconds * Math.exp(Z * sd);
  return {
    seconds,
    low,
    high,
    gain: 1 - seconds / parent.seconds,
    gainLow: 1 - high / parent.seconds,
    gainHigh: 1 - low / parent.seconds,
    parent: parent.name,
    logSd: sd,
  };
}

/** The calibration's profile with other transformed parameters (same order as cal.params). */
function withParam(cal: Calibration, x: readonly number[]): TwinProfile {
  const p = structuredClone(cal.profile);
  cal.params.forEach((name, i) => {
    const [head, field] = name.split('.') as [string, string];
    const v = x[i]!;
    if (head === 'runtime') (p.runtime as Record<string, number>)[field] = Math.exp(v);
    else if (head === 'gpu') p.gpu.contention = Math.exp(v);
    else {
      const s = p.services[head as ServiceName] as unknown as Record<string, number>;
      s[field] = field === 'gpu_share' ? sigmoid(v) : Math.exp(v);
    }
  });
  return p;
}

// ------------------------------------------------------------------ small numerical helpers

function levenbergMarquardt(
  f: (x: readonly number[]) => number[],
  x0: readonly number[],
  iterations: number,
): { x: number[]; r: number[]; jtj: number[][] } {
  let x = [...x0];
  let r = f(x);
  let cost = r.reduce((a, v) => a + v * v, 0);
  let lambda = 1e-2;
  let jtj: number[][] = [];
  const n = x.length;
  for (let it = 0; it < iterations; it++) {
    const J = jacobian(f, x, r);
    jtj = Array.from({ length: n }, (_, i) =>
      Array.from({ length: n }, (_, j) => J.reduce((a, row) => a + row[i]! * row[j]!, 0)),
    );
    const jtr = Array.from({ length: n }, (_, i) => J.reduce((a, row, k) => a + row[i]! * r[k]!, 0));
    let improved = false;
    for (let tries = 0; tries < 6; tries++) {
      const A = jtj.map((row, i) => row.map((v, j) => (i === j ? v * (1 + lambda) + 1e-9 : v)));
      const step = solve(
        A,
        jtr.map((v) => -v),
      );
      if (!step) {
        lambda *= 10;
        continue;
      }
      const next = x.map((v, i) => v + Math.max(-2, Math.min(2, step[i]!)));
      const rn = f(next);
      const cn = rn.reduce((a, v) => a + v * v, 0);
      if (Number.isFinite(cn) && cn < cost) {
        const gain = cost - cn;
        x = next;
        r = rn;
        cost = cn;
        lambda = Math.max(1e-6, lambda / 5);
        improved = true;
        if (gain < 1e-6 * cost) it = iterations;
        break;
      }
      lambda *= 8;
    }
    if (!improved) break;
  }
  if (jtj.length === 0) {
    const J = jacobian(f, x, r);
    jtj = Array.from({ length: n }, (_, i) =>
      Array.from({ length: n }, (_, j) => J.reduce((a, row) => a + row[i]! * row[j]!, 0)),
    );
  }
  return { x, r, jtj };
}

function jacobian(
  f: (x: readonly number[]) => number[],
  x: readonly number[],
  r: readonly number[],
): number[][] {
  const h = 1e-4;
  const cols = x.map((_, i) => {
    const xp = [...x];
    xp[i]! += h;
    const rp = f(xp);
    return rp.map((v, k) => (v - r[k]!) / h);
  });
  return r.map((_, k) => cols.map((c) => c[k]!));
}

/** Gaussian elimination with partial pivoting; null when singular. */
function solve(A: number[][], b: number[]): number[] | null {
  const n = b.length;
  const M = A.map((row, i) => [...row, b[i]!]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let i = c + 1; i < n; i++) if (Math.abs(M[i]![c]!) > Math.abs(M[p]![c]!)) p = i;
    if (Math.abs(M[p]![c]!) < 1e-12) return null;
    [M[c], M[p]] = [M[p]!, M[c]!];
    for (let i = c + 1; i < n; i++) {
      const f = M[i]![c]! / M[c]![c]!;
      for (let j = c; j <= n; j++) M[i]![j]! -= f * M[c]![j]!;
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let i = n - 1; i >= 0; i--) {
    let s = M[i]![n]!;
    for (let j = i + 1; j < n; j++) s -= M[i]![j]! * x[j]!;
    x[i] = s / M[i]![i]!;
  }
  return x;
}

function invert(A: number[][]): number[][] {
  const n = A.length;
  return Array.from({ length: n }, (_, j) => {
    const e = Array.from({ length: n }, (_, i) => (i === j ? 1 : 0));
    return solve(A, e) ?? e.map(() => 0);
  }).reduce<number[][]>(
    (cols, col, j) => {
      col.forEach((v, i) => {
        cols[i]![j] = v;
      });
      return cols;
    },
    Array.from({ length: n }, () => new Array<number>(n).fill(0)),
  );
}
