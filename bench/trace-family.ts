// A family of AlpaSim-like runs broader than the twin's own profiles, with a known truth, written
// as OpenMetrics for `promtool tsdb create-blocks-from openmetrics` (so a real Prometheus serves
// them and `topo analyze`'s own code path judges them).
//
// A run: `inFlight` rollout slots spread over `workers` runtime workers, all starting at run-minute
// 0 (the closed loop's synchronized start); each slot runs rollouts back to back. A rollout's
// duration is the steady one × a congestion that fades linearly to `congestionMinutes` × an
// optional cycle × an optional drift × log-normal noise (noisier and slower on `noisyWorkers`),
// all read at the rollout's start. Per worker it exports what AlpaSim does: alpasim_rollouts_total
// {status}, alpasim_simulation_elapsed_seconds (set only when a rollout finishes),
// alpasim_renderer_active_rollouts and the alpasim_rollout_duration_seconds histogram (_sum,
// _count, +Inf bucket). The truth is the full-run value (max elapsed ÷ rollouts) at the run's end.
import { createWriteStream } from 'node:fs';

export interface Shape {
  name: string;
  inFlight: number;
  workers: number;
  /** Steady seconds per rollout (so a rollout lasts inFlight × this). */
  steadySeconds: number;
  congestion: number;
  congestionMinutes: number;
  jitter: number;
  cycle?: { periodMinutes: number; amplitude: number };
  /** Relative growth of rollout durations per hour. */
  driftPerHour?: number;
  /** The same, on the candidates only (the baseline, the run named `…-base`, keeps still). */
  candidateDriftPerHour?: number;
  /** Workers (the first n) whose rollouts are 30% slower with 3× the noise. */
  noisyWorkers?: number;
  crashAtMinutes?: number;
  /** Omit the in-flight gauge (older AlpaSim): the analysis falls back to the capacity. */
  noActiveGauge?: boolean;
  /**
   * Per-scene duration effects: the suite's `count` scenes, each × exp(sd · z) (the same scenes for
   * every run), taken in order (about one slot's rollout after another), so neighbours in time share them.
   */
  scenes?: { count: number; sd: number };
  /**
   * A slowdown of the cluster's wall clock, not of the run: its phase is where the run started on the
   * wall clock (RunSpec.phaseMinutes), so runs started together share it and a run recorded at another
   * time does not.
   */
  wallClock?: { periodMinutes: number; amplitude: number };
  /**
   * The suite's rollouts in all: the run drains once the last one started (slots go idle one by one;
   * the last rollouts run 30% faster over their part after it, on a lighter load).
   */
  suite?: number;
}

export const SHAPES: Shape[] = [
  {
    name: 'plain-fast',
    inFlight: 64,
    workers: 4,
    steadySeconds: 3,
    congestion: 1,
    congestionMinutes: 12,
    jitter: 0.15,
  },
  {
    name: 'plain-slow',
    inFlight: 32,
    workers: 4,
    steadySeconds: 20,
    congestion: 0.5,
    congestionMinutes: 12,
    jitter: 0.15,
  },
  {
    name: 'long-congestion',
    inFlight: 64,
    workers: 4,
    steadySeconds: 3.5,
    congestion: 3,
    congestionMinutes: 25,
    jitter: 0.15,
  },
  {
    name: 'sync-waves',
    inFlight: 64,
    workers: 4,
    steadySeconds: 5,
    congestion: 0.5,
    congestionMinutes: 10,
    jitter: 0.02,
  },
  {
    name: 'cyclic',
    inFlight: 64,
    workers: 4,
    steadySeconds: 3,
    congestion: 1,
    congestionMinutes: 12,
    jitter: 0.1,
    cycle: { periodMinutes: 10, amplitude: 0.2 },
  },
  {
    name: 'drift',
    inFlight: 64,
    workers: 4,
    steadySeconds: 3,
    congestion: 1,
    congestionMinutes: 12,
    jitter: 0.15,
    driftPerHour: 0.25,
  },
  {
    name: 'noisy-workers',
    inFlight: 64,
    workers: 8,
    steadySeconds: 3,
    congestion: 1,
    congestionMinutes: 12,
    jitter: 0.15,
    noisyWorkers: 2,
    noActiveGauge: true,
  },
  {
    name: 'crash',
    inFlight: 64,
    workers: 4,
    steadySeconds: 3,
    congestion: 1,
    congestionMinutes: 12,
    jitter: 0.15,
    crashAtMinutes: 40,
  },
];

/** Only the candidates drift (the verdict bench's extra shape; not one of SHAPES, which others share). */
export const CANDIDATE_DRIFT: Shape = {
  name: 'candidate-drift',
  inFlight: 64,
  workers: 4,
  steadySeconds: 3,
  congestion: 1,
  congestionMinutes: 12,
  jitter: 0.15,
  candidateDriftPerHour: 0.25,
};

export interface RunSpec {
  shape: Shape;
  seed: number;
  /** Multiplies the steady seconds per rollout (a candidate slower or faster than the baseline). */
  factor: number;
  runName: string;
  endMinutes: number;
  scrapeSeconds: number;
  /** Where the run started on the wall clock (a wall-clock slowdown's phase), run-minutes. */
  phaseMinutes?: number;
}

export interface GeneratedRun {
  spec: RunSpec;
  /** Full-run value at the run's end; NaN for a crash. */
  truth: number;
  /** Full-run value read at 45 run-minutes (the seed's rule). */
  at45: number;
  /** Samples written (timestamps). */
  timestamps: number;
}

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Completion {
  t: number;
  d: number;
  worker: number;
  failed: boolean;
}

/** Every rollout of a run, in order of completion: its end (run-minutes) and duration (minutes). */
export function completions(spec: RunSpec): Completion[] {
  const s = spec.shape;
  const r = rng(spec.seed * 7919 + Math.round(spec.factor * 1000));
  const gauss = () => Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
  const base = (s.inFlight * s.steadySeconds * spec.factor) / 60;
  const driftPerHour =
    s.driftPerHour ?? (spec.runName.endsWith('-base') ? 0 : (s.candidateDriftPerHour ?? 0));
  const out: Completion[] = [];
  const sceneOf = sceneEffects(s);
  for (let slot = 0; slot < s.inFlight; slot++) {
    const worker = slot % s.workers;
    const noisy = worker < (s.noisyWorkers ?? 0);
    let t = 0;
    while (t < spec.endMinutes) {
      const cong = s.congestion * Math.max(0, 1 - t / s.congestionMinutes);
      const cyc = s.cycle ? 1 + s.cycle.amplitude * Math.sin((2 * Math.PI * t) / s.cycle.periodMinutes) : 1;
      const drift = 1 + (driftPerHour * t) / 60;
      const wall = s.wallClock
        ? 1 +
          s.wallClock.amplitude *
            Math.sin((2 * Math.PI * (t + (spec.phaseMinutes ?? 0))) / s.wallClock.periodMinutes)
        : 1;
      const noise = Math.exp((noisy ? 3 : 1) * s.jitter * gauss()) * (noisy ? 1.3 : 1);
      const scene = sceneOf(Math.floor(t / base) * s.inFlight + slot);
      const d = base * (1 + cong) * cyc * drift * wall * noise * scene;
      t += d;
      out.push({ t, d, worker, failed: r() < 0.005 });
    }
  }
  return drained(out, s.suite).sort((a, b) => a.t - b.t);
}

/**
 * The suite's first `suite` starts only (each slot's sequence is its own, so cutting the merged starts
 * is the closed loop with a global limit); rollouts still running after the last start run 30% faster
 * over their part after it (a lighter load at the end of the run).
 */
function drained(out: Completion[], suite: number | undefined): Completion[] {
  if (suite === undefined || out.length <= suite) return out;
  const kept = [...out].sort((a, b) => a.t - a.d - (b.t - b.d)).slice(0, suite);
  const last = Math.max(...kept.map((c) => c.t - c.d));
  return kept.map((c) => {
    if (c.t <= last) return c;
    const t = last + 0.7 * (c.t - last);
    return { ...c, t, d: t - (c.t - c.d) };
  });
}

/** The shape's scene effects by the rollout's place in the suite's order (1 without scenes). */
function sceneEffects(s: Shape): (i: number) => number {
  if (!s.scenes) return () => 1;
  const r = rng(4242);
  const z = Array.from(
    { length: s.scenes.count },
    () => Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r()),
  );
  const { count, sd } = s.scenes;
  return (i) => Math.exp(sd * (z[i % count] as number) - (sd * sd) / 2);
}

type Line = string;

/** Writes runs into one OpenMetrics file (families grouped as the format requires). */
export async function writeFamily(
  specs: RunSpec[],
  file: string,
  startUnix: number,
  write_ = true,
): Promise<GeneratedRun[]> {
  const fam = {
    rollouts: [] as Line[],
    elapsed: [] as Line[],
    active: [] as Line[],
    hist: [] as Line[],
  };
  const out: GeneratedRun[] = [];
  const perRun0 = specs.map((spec) => sampleRun(spec, startUnix));
  if (!write_) return perRun0.map((p) => p.run);
  const out2 = createWriteStream(file);
  const write = (x: string) =>
    new Promise<void>((res) => (out2.write(x) ? res() : out2.once('drain', () => res())));
  // one family at a time across all runs: collect per run, then emit
  const perRun = perRun0;
  for (const p of perRun) out.push(p.run);
  const families: Array<[string, string, keyof (typeof perRun)[number]['lines']]> = [
    ['alpasim_rollouts', 'counter', 'rollouts'],
    ['alpasim_simulation_elapsed_seconds', 'gauge', 'elapsed'],
    ['alpasim_renderer_active_rollouts', 'gauge', 'active'],
    ['alpasim_rollout_duration_seconds', 'histogram', 'hist'],
  ];
  for (const [name, type, key] of families) {
    await write(`# TYPE ${name} ${type}\n`);
    for (const p of perRun) for (const block of p.lines[key]) await write(block);
  }
  void fam;
  await write('# EOF\n');
  await new Promise<void>((res, rej) => out2.end((e?: Error | null) => (e ? rej(e) : res())));
  return out;
}

/** Each worker's rollouts in flight at run-minute t (started and not ended); t must not decrease. */
function inFlightOf(events: readonly Completion[], workers: number): (w: number, t: number) => number {
  const per = Array.from({ length: workers }, (_, w) => {
    const mine = events.filter((e) => e.worker === w);
    return {
      starts: mine.map((e) => e.t - e.d).sort((a, b) => a - b),
      ends: mine.map((e) => e.t).sort((a, b) => a - b),
      i: 0,
      j: 0,
    };
  });
  return (w, t) => {
    const x = per[w] as (typeof per)[number];
    while (x.i < x.starts.length && (x.starts[x.i] as number) <= t) x.i++;
    while (x.j < x.ends.length && (x.ends[x.j] as number) <= t) x.j++;
    return x.i - x.j;
  };
}

/** Per worker and series, the sample lines (a series' samples must be contiguous, so they are joined per worker). */
type WorkerSeries = Record<'ok' | 'bad' | 'el' | 'act' | 'sum' | 'cnt' | 'inf', string[][]>;

/** The counters one run's workers carry from scrape to scrape (per worker: rollouts, elapsed, duration sum). */
export interface Counters {
  ok: number[];
  bad: number[];
  elapsed: number[];
  dSum: number[];
}

function sampleRun(spec: RunSpec, startUnix: number) {
  const s = spec.shape;
  const events = completions(spec);
  const stop = Math.min(spec.endMinutes, s.crashAtMinutes ?? Number.POSITIVE_INFINITY);
  const W = s.workers;
  const inFlightAt = inFlightOf(events, W);
  const zeros = () => new Array<number>(W).fill(0);
  const c: Counters = { ok: zeros(), bad: zeros(), elapsed: zeros(), dSum: zeros() };
  const empty = () => Array.from({ length: W }, () => [] as string[]);
  const series: WorkerSeries = {
    ok: empty(),
    bad: empty(),
    el: empty(),
    act: empty(),
    sum: empty(),
    cnt: empty(),
    inf: empty(),
  };
  let [i, timestamps, at45, lastN, lastE] = [0, 0, Number.NaN, 0, 0];
  const step = spec.scrapeSeconds / 60;
  for (let t = 0; t <= stop + 1e-9; t += step) {
    i = countUpTo(events, i, t, c);
    const ts = (startUnix + t * 60).toFixed(3);
    for (let w = 0; w < W; w++)
      scrapeWorker(series, c, w, ts, {
        label: `run_uuid="${spec.runName}-uuid",run_name="${spec.runName}",worker_id="${w}"`,
        inFlight: s.noActiveGauge ? null : inFlightAt(w, t),
      });
    lastN = c.ok.reduce((a, b) => a + b, 0) + c.bad.reduce((a, b) => a + b, 0);
    lastE = Math.max(...c.elapsed);
    if (Number.isNaN(at45) && t >= 45 - 1e-9 && lastN > 0) at45 = lastE / lastN;
    timestamps++;
  }
  const crashed = s.crashAtMinutes !== undefined && s.crashAtMinutes < spec.endMinutes;
  return {
    run: { spec, truth: crashed ? Number.NaN : lastE / lastN, at45, timestamps },
    lines: seriesLines(series, W),
  };
}

/** Counts the rollouts that ended by run-minute `t` from event `i` on; the next event's index. */
export function countUpTo(events: readonly Completion[], i: number, t: number, c: Counters): number {
  let k = i;
  while (k < events.length && (events[k] as Completion).t <= t) {
    const e = events[k] as Completion;
    if (e.failed) c.bad[e.worker]!++;
    else c.ok[e.worker]!++;
    c.elapsed[e.worker] = 60 * e.t;
    c.dSum[e.worker]! += 60 * e.d;
    k++;
  }
  return k;
}

/** One scrape of worker `w`: a sample of each of its series at `ts`. */
function scrapeWorker(
  series: WorkerSeries,
  c: Counters,
  w: number,
  ts: string,
  o: { label: string; inFlight: number | null },
): void {
  const l = o.label;
  const n = c.ok[w]! + c.bad[w]!;
  series.ok[w]!.push(`alpasim_rollouts_total{${l},status="completed"} ${c.ok[w]} ${ts}`);
  series.bad[w]!.push(`alpasim_rollouts_total{${l},status="failed"} ${c.bad[w]} ${ts}`);
  if (c.elapsed[w]! > 0) series.el[w]!.push(`alpasim_simulation_elapsed_seconds{${l}} ${c.elapsed[w]} ${ts}`);
  if (o.inFlight !== null) series.act[w]!.push(`alpasim_renderer_active_rollouts{${l}} ${o.inFlight} ${ts}`);
  series.inf[w]!.push(`alpasim_rollout_duration_seconds_bucket{${l},le="+Inf"} ${n} ${ts}`);
  series.sum[w]!.push(`alpasim_rollout_duration_seconds_sum{${l}} ${c.dSum[w]!.toFixed(3)} ${ts}`);
  series.cnt[w]!.push(`alpasim_rollout_duration_seconds_count{${l}} ${n} ${ts}`);
}

/** The run's OpenMetrics lines per series; a histogram's bucket, sum and count lines of one label set together. */
function seriesLines(series: WorkerSeries, W: number) {
  const join = (xs: string[][]) => xs.filter((x) => x.length).map((x) => `${x.join('\n')}\n`);
  const hist: string[] = [];
  for (let w = 0; w < W; w++) {
    const lines: string[] = [];
    for (let k = 0; k < series.inf[w]!.length; k++)
      lines.push(series.inf[w]![k]!, series.sum[w]![k]!, series.cnt[w]![k]!);
    hist.push(`${lines.join('\n')}\n`);
  }
  return {
    rollouts: join(series.ok.map((x, w) => [...x, ...(series.bad[w] as string[])])),
    elapsed: join(series.el),
    active: join(series.act),
    hist,
  };
}
