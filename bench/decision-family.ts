// The decision bench's in-process path: a trace-family run's rollouts (bench/trace-family.ts) scraped
// per worker at the scrape step into the batches src/analysis/rollouts.ts reconstructs from the
// duration histogram (the same increments Prometheus would serve), and the decision's estimate read
// from them at any run-minute. No Prometheus: the verdict bench's decision family runs in minutes.
import {
  type DecideOptions,
  decideCandidate,
  leadingCandidate,
  pruneByLeader,
  type VerdictLike,
} from '../src/analysis/decision.js';
import { observeRun, type RunSeries } from '../src/analysis/observe.js';
import { estimateTrajectory, type RolloutBatch, rolloutEstimate } from '../src/analysis/rollouts.js';
import { mean, median } from '../src/analysis/series.js';
import { EXPERIMENT_DEFAULTS } from '../src/topology/settings.js';
import type { Decision } from '../src/types/generated/metrics.js';
import { type Completion, completions, SHAPES, type Shape } from './trace-family.js';

/** Per worker and scrape: the rollouts that ended since the previous scrape, as one batch. */
export function scrapeBatches(events: readonly Completion[], stepMinutes: number): RolloutBatch[] {
  const m = new Map<string, { worker: string; end: number; n: number; sum: number }>();
  for (const e of events) {
    const end = Math.ceil(e.t / stepMinutes - 1e-9) * stepMinutes;
    const key = `${e.worker}@${end}`;
    const x = m.get(key) ?? { worker: String(e.worker), end, n: 0, sum: 0 };
    x.n++;
    x.sum += e.d;
    m.set(key, x);
  }
  return [...m.values()]
    .map((x) => ({ worker: x.worker, end: x.end, n: x.n, duration: x.sum / x.n, start: x.end - x.sum / x.n }))
    .sort((a, b) => a.end - b.end);
}

export interface EstimateReader {
  /** The decision's verdict as `topo analyze` would give it at run-minute `now` (trajectory optional). */
  at(now: number, withTrajectory?: boolean): VerdictLike;
}

/** Reads one run's decision estimate at any run-minute from its scraped batches. */
export function estimateReader(
  events: readonly Completion[],
  o: { inFlight: number; stepMinutes: number; runEnd: number },
): EstimateReader {
  const batches = scrapeBatches(events, o.stepMinutes);
  const cache = new Map<string, VerdictLike>();
  return {
    at(now: number, withTrajectory = false) {
      const key = `${now}:${withTrajectory}`;
      const hit = cache.get(key);
      if (hit) return hit;
      const upto = batches.filter((b) => b.end <= now + 1e-9);
      const input = {
        batches: upto,
        now,
        runEnd: o.runEnd,
        inFlight: o.inFlight,
        completed: upto.reduce((a, b) => a + b.n, 0),
        step: o.stepMinutes,
      };
      const est = upto.length ? rolloutEstimate(input) : null;
      const v: VerdictLike = est
        ? {
            state: 'stabilising',
            minutes_of_data: now,
            projected_full_run: est.projected_full_run,
            decision_estimate: {
              ...est,
              ...(withTrajectory ? { trajectory: estimateTrajectory(input) } : {}),
            },
          }
        : { state: 'warming', minutes_of_data: now, projected_full_run: null };
      cache.set(key, v);
      return v;
    },
  };
}

// ── The decision family (issue 31 item 5): run shapes × candidates × both reference paths ──────────

/** A family shape: the run model, and whether the reference drifts with its candidates. */
export interface FamilyShape {
  shape: Shape;
  /** Only the candidates drift (the reference keeps still). */
  candidateDrift?: boolean;
}

// the trace family's plain-fast run: 64 slots on 4 workers, 3 s per rollout, congestion ×2 fading over 12 minutes
const { name: _plain, ...fast } = SHAPES[0] as Shape;

/** The broader family: periodic slowdowns of 5–90 minutes, a drifting reference, few slow workers, scenes. */
export const DECISION_SHAPES: FamilyShape[] = [
  { shape: { name: 'plain', ...fast } },
  { shape: { name: 'long-congestion', ...fast, steadySeconds: 3.5, congestion: 3, congestionMinutes: 25 } },
  { shape: { name: 'periodic-5', ...fast, cycle: { periodMinutes: 5, amplitude: 0.15 } } },
  { shape: { name: 'periodic-20', ...fast, cycle: { periodMinutes: 20, amplitude: 0.15 } } },
  { shape: { name: 'periodic-90', ...fast, cycle: { periodMinutes: 90, amplitude: 0.1 } } },
  { shape: { name: 'drifting-6%/h', ...fast, driftPerHour: 0.06 } },
  {
    shape: {
      name: 'few-slow-workers',
      inFlight: 32,
      workers: 2,
      steadySeconds: 28,
      congestion: 1,
      congestionMinutes: 10,
      jitter: 0.15,
    },
  },
  { shape: { name: 'per-scene', ...fast, scenes: { count: 200, sd: 0.3 } } },
  { shape: { name: 'noisy-workers', ...fast, workers: 8, noisyWorkers: 2 } },
  { shape: { name: 'candidate-drift', ...fast, candidateDriftPerHour: 0.25 }, candidateDrift: true },
];

export const FACTORS = [0.9, 0.95, 0.98, 1, 1.02, 1.05, 1.1];

export const FAMILY = { end: 234, startup: 5, gpus: 8, scrapeMinutes: 0.25 } as const;

export interface FamilyRun {
  name: string;
  shape: FamilyShape;
  factor: number;
  events: Completion[];
  /** The long-run value: full-run seconds per rollout at the run's end. */
  truth: number;
}

function familyRun(fs: FamilyShape, seed: number, factor: number, key: string): FamilyRun {
  const name = `${fs.shape.name}-s${seed}-${key}`;
  const events = completions({
    shape: fs.shape,
    seed: key === 'base' ? seed : seed + 1000 * (1 + FACTORS.indexOf(factor)),
    factor,
    runName: name,
    endMinutes: FAMILY.end,
    scrapeSeconds: FAMILY.scrapeMinutes * 60,
  });
  const ended = events.filter((e) => e.t <= FAMILY.end);
  const last = Math.max(...ended.map((e) => e.t));
  return { name, shape: fs, factor, events, truth: (60 * last) / ended.length };
}

/** The oracle: knows the noise model and the congestion (every shared factor), not the ratio. */
function oracleReader(r: FamilyRun): EstimateReader {
  const s = r.shape.shape;
  const drift = s.driftPerHour ?? (r.name.endsWith('-base') ? 0 : (s.candidateDriftPerHour ?? 0));
  const f = (t: number) =>
    (1 + s.congestion * Math.max(0, 1 - t / s.congestionMinutes)) *
    (s.cycle ? 1 + s.cycle.amplitude * Math.sin((2 * Math.PI * t) / s.cycle.periodMinutes) : 1) *
    (1 + (drift * t) / 60);
  const grid = Array.from({ length: FAMILY.end }, (_, i) => f(i + 0.5));
  const longRun = mean(grid);
  const cache = new Map<number, VerdictLike>();
  return {
    at(now: number) {
      const hit = cache.get(now);
      if (hit) return hit;
      const xs = r.events.filter((e) => e.t <= now).map((e) => e.d / f(e.t - e.d));
      let v: VerdictLike = { state: 'warming', minutes_of_data: now, projected_full_run: null };
      if (xs.length >= 10) {
        const w = mean(xs);
        const se = Math.sqrt(xs.reduce((a, x) => a + (x - w) ** 2, 0) / (xs.length - 1) / xs.length) / w;
        const value = w * longRun;
        v = {
          state: 'stabilising',
          minutes_of_data: now,
          warmup_end_minutes: 0,
          projected_full_run: { value, low: value * Math.exp(-1.96 * se), high: value * Math.exp(1.96 * se) },
        };
      }
      cache.set(now, v);
      return v;
    },
  };
}

export interface FamilyRow {
  shape: string;
  seed: number;
  mode: 'recorded' | 'concurrent';
  factor: number;
  trueChange: number;
  decision: Decision | null;
  decidedAt: number | null;
  covered: boolean | null;
  right: boolean | null;
}

const rightWay = (d: Decision, truth: number, m: number) =>
  d.state === 'worse'
    ? truth > 0
    : d.state === 'better'
      ? truth < -m + 0.005
      : d.state === 'not-better'
        ? truth > -m - 0.005
        : Math.abs(truth) < m + 0.005;

/**
 * One experiment's decisions look by look, as the monitor makes them: each candidate against the
 * reference (read as `refAt` gives it), and one still open there against the leading candidate.
 */
function decideGroup(
  cands: readonly FamilyRun[],
  read: (r: FamilyRun, minute: number) => VerdictLike,
  refAt: (minute: number) => VerdictLike,
  options: DecideOptions,
): Map<string, { d: Decision; at: number }> {
  const out = new Map<string, { d: Decision; at: number }>();
  const previous = new Map<string, Decision>();
  const horizon = options.maxDecisionMinutes ?? EXPERIMENT_DEFAULTS.maxDecisionMinutes;
  for (let minute = 6; minute <= horizon; minute++) {
    const ref = refAt(minute);
    const views = cands.map((r) => ({
      name: r.name,
      verdict: read(r, Math.min(minute, out.get(r.name)?.at ?? minute)),
    }));
    const leader = leadingCandidate(views, ref);
    for (const r of cands) {
      if (out.has(r.name)) continue;
      const v = (views.find((x) => x.name === r.name) as { verdict: VerdictLike }).verdict;
      let d = decideCandidate(
        v,
        { name: 'baseline', verdict: ref },
        { ...options, previous: previous.get(r.name) ?? null },
      );
      if (d.state === 'measuring' && leader && leader.name !== r.name)
        d = pruneByLeader(v, leader, { ...options, leaders: Math.max(1, cands.length - 1) }) ?? d;
      previous.set(r.name, d);
      if (d.state !== 'measuring') out.set(r.name, { d, at: minute });
    }
    if (out.size === cands.length) break;
  }
  return out;
}

/** Every (shape, seed, reference path) experiment of the family, decided by `reader` (the monitor's, or the oracle). */
export function runFamily(
  seeds: readonly number[],
  options: DecideOptions,
  oracle = false,
  shapes: readonly FamilyShape[] = DECISION_SHAPES,
): FamilyRow[] {
  const rows: FamilyRow[] = [];
  const m = options.minImprovement ?? EXPERIMENT_DEFAULTS.minImprovement;
  for (const fs of shapes)
    for (const seed of seeds) {
      const base = familyRun(fs, seed, 1, 'base');
      const cands = FACTORS.map((f) => familyRun(fs, seed, f, `x${f.toFixed(2)}`));
      const o = { inFlight: fs.shape.inFlight, stepMinutes: FAMILY.scrapeMinutes, runEnd: FAMILY.end };
      const readers = new Map(
        [base, ...cands].map((r) => [r.name, oracle ? oracleReader(r) : estimateReader(r.events, o)]),
      );
      const read = (r: FamilyRun, minute: number) => (readers.get(r.name) as EstimateReader).at(minute);
      const full = (readers.get(base.name) as EstimateReader).at(FAMILY.end, true);
      // the oracle knows the reference at every age: its full-run reading, with no age gap to widen by
      const recorded = oracle ? { ...full, minutes_of_data: undefined } : full;
      for (const mode of ['recorded', 'concurrent'] as const) {
        const refAt = mode === 'recorded' ? () => recorded : (minute: number) => read(base, minute);
        const decided = decideGroup(cands, read, refAt, options);
        for (const r of cands) {
          const x = decided.get(r.name);
          // against the baseline, or the leading candidate that pruned it
          const against = cands.find((c) => c.name === x?.d.reference.name) ?? base;
          const trueChange = r.truth / against.truth - 1;
          const ch = x?.d.relative_change;
          rows.push({
            shape: fs.shape.name,
            seed,
            mode,
            factor: r.factor,
            trueChange,
            decision: x?.d ?? null,
            decidedAt: x?.at ?? null,
            covered: ch ? ch.low <= trueChange && trueChange <= ch.high : null,
            right: x ? rightWay(x.d, trueChange, m) : null,
          });
        }
      }
    }
  return rows;
}

export interface FamilyFigures {
  median: number;
  worst: number;
  gpuPerDecided: number;
  wrong: number;
  betterWhenNot: number;
  n: number;
  coverage: number;
  undecided: number;
  bigWrong: number;
}

/** The figures of a set of rows: undecided candidates are charged to the horizon. */
export function figures(rows: readonly FamilyRow[], horizon: number): FamilyFigures {
  const decided = rows.filter((r) => r.decidedAt !== null);
  const t = decided.map((r) => r.decidedAt as number);
  const gpu = rows.reduce((a, r) => a + FAMILY.gpus * (FAMILY.startup + (r.decidedAt ?? horizon)), 0);
  const cov = decided.filter((r) => r.covered !== null);
  return {
    median: t.length ? median(t) : Number.NaN,
    worst: t.length ? Math.max(...t) : Number.NaN,
    gpuPerDecided: gpu / Math.max(1, decided.length),
    wrong: decided.filter((r) => r.right === false).length,
    betterWhenNot: decided.filter((r) => r.decision?.state === 'better' && r.right === false).length,
    n: rows.length,
    coverage: cov.filter((r) => r.covered).length / Math.max(1, cov.length),
    undecided: rows.length - decided.length,
    bigWrong: decided.filter((r) => Math.abs(r.trueChange) >= 0.05 && r.right === false).length,
  };
}

const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '—');
const num = (x: number) => (Number.isFinite(x) ? String(Math.round(x * 10) / 10) : '—');

/** Per shape: coverage of the decision interval at the deciding look and what it rests on. */
export function printFamily(
  rows: readonly FamilyRow[],
  bound: readonly FamilyRow[],
  horizon: number,
): FamilyFigures {
  console.log(
    '\n| shape | reference | candidates | decided | median / worst run-min | coverage (decided) | wrong (better-when-not) | undecided at horizon | GPU-min per decided | bound GPU-min |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  const shapes = [...new Set(rows.map((r) => r.shape))];
  for (const s of shapes)
    for (const mode of ['recorded', 'concurrent'] as const) {
      const xs = rows.filter((r) => r.shape === s && r.mode === mode);
      const f = figures(xs, horizon);
      const b = figures(
        bound.filter((r) => r.shape === s && r.mode === mode),
        horizon,
      );
      const decided = xs.filter((r) => r.decidedAt !== null).length;
      console.log(
        `| ${s} | ${mode} | ${xs.length} | ${decided} | ${num(f.median)} / ${num(f.worst)} | ${pct(f.coverage)} of ${decided} | ${f.wrong} (${f.betterWhenNot}) | ${f.undecided} | ${Math.round(f.gpuPerDecided)} | ${Math.round(b.gpuPerDecided)} |`,
      );
    }
  const all = figures(rows, horizon);
  const perShape = shapes.map(
    (s) =>
      figures(
        rows.filter((r) => r.shape === s),
        horizon,
      ).coverage,
  );
  const byFactor = FACTORS.map((f) => {
    const xs = rows.filter((r) => r.factor === f);
    const states = new Map<string, number>();
    for (const r of xs)
      states.set(r.decision?.state ?? 'none', (states.get(r.decision?.state ?? 'none') ?? 0) + 1);
    return `×${f.toFixed(2)} ${[...states].map(([k, v]) => `${k} ${v}`).join(', ')}`;
  });
  console.log(`\nby candidate: ${byFactor.join('; ')}`);
  console.log(
    `lowest coverage on a shape: ${pct(Math.min(...perShape))}; wrong among candidates ≥ 5% off: ${all.bigWrong}`,
  );
  const wrong = rows.filter((r) => r.right === false);
  if (wrong.length)
    console.log(
      `wrong: ${wrong
        .slice(0, 12)
        .map(
          (r) =>
            `${r.shape}/${r.mode}/s${r.seed}/×${r.factor} ${r.decision?.state}@${r.decidedAt} ${pct(r.decision?.relative_change?.value ?? Number.NaN)} [${pct(r.decision?.relative_change?.low ?? Number.NaN)}, ${pct(r.decision?.relative_change?.high ?? Number.NaN)}] (truth ${pct(r.trueChange)})`,
        )
        .join('; ')}${wrong.length > 12 ? ` (+${wrong.length - 12})` : ''}`,
    );
  return all;
}

/** One run's series as Prometheus would serve them (every scrape), for observeRun. */
function seriesOf(r: FamilyRun, startUnix: number): RunSeries {
  const s = r.shape.shape;
  const W = s.workers;
  const step = FAMILY.scrapeMinutes;
  const pts = {
    total: [] as Array<[number, number]>,
    failed: [] as Array<[number, number]>,
    elapsed: [] as Array<[number, number]>,
    avg: [] as Array<[number, number]>,
    active: [] as Array<[number, number]>,
  };
  const sum = Array.from({ length: W }, () => [] as Array<[number, number]>);
  const cnt = Array.from({ length: W }, () => [] as Array<[number, number]>);
  const acc = { n: 0, bad: 0, last: 0, s: new Array<number>(W).fill(0), c: new Array<number>(W).fill(0) };
  let i = 0;
  const ev = r.events;
  for (let t = 0; t <= FAMILY.end + 1e-9; t += step) {
    while (i < ev.length && (ev[i] as Completion).t <= t) {
      const e = ev[i++] as Completion;
      acc.n++;
      if (e.failed) acc.bad++;
      acc.last = 60 * e.t;
      acc.s[e.worker] = (acc.s[e.worker] as number) + 60 * e.d;
      acc.c[e.worker] = (acc.c[e.worker] as number) + 1;
    }
    const ts = startUnix + t * 60;
    pts.total.push([ts, acc.n]);
    pts.failed.push([ts, acc.bad]);
    pts.active.push([ts, s.inFlight]);
    if (acc.n) {
      pts.elapsed.push([ts, acc.last]);
      pts.avg.push([ts, acc.last / acc.n]);
    }
    for (let w = 0; w < W; w++) {
      (sum[w] as Array<[number, number]>).push([ts, acc.s[w] as number]);
      (cnt[w] as Array<[number, number]>).push([ts, acc.c[w] as number]);
    }
  }
  const one = (points: Array<[number, number]>) => [{ labels: {}, points }];
  const perWorker = (xs: Array<Array<[number, number]>>) =>
    xs.map((points, w) => ({ labels: { worker_id: String(w) }, points }));
  return {
    secondsPerRolloutAvg: one(pts.avg),
    rolloutsTotal: one(pts.total),
    rolloutsFailed: one(pts.failed),
    elapsed: one(pts.elapsed),
    activeRollouts: one(pts.active),
    rolloutDurationSum: perWorker(sum),
    rolloutDurationCount: perWorker(cnt),
  };
}

/**
 * The verdict's `stable` on the family (observeRun, the core of `topo analyze`, every 5 run-minutes
 * to the horizon): the median run-minute of the first `stable` over the runs that do not drift, and
 * how many drifting runs (a drift set in the run model) were ever called stable.
 */
export function stableFigures(seeds: readonly number[], shapes: readonly FamilyShape[] = DECISION_SHAPES) {
  const startUnix = 1_700_000_000;
  const firstStable: number[] = [];
  let never = 0;
  let driftingStable = 0;
  let steepStable = 0;
  for (const fs of shapes)
    for (const seed of seeds)
      for (const [k, f] of [1, ...FACTORS].entries()) {
        const r = familyRun(fs, seed, f, k === 0 ? 'base' : `x${f.toFixed(2)}`);
        const slope = fs.shape.driftPerHour ?? (k > 0 ? (fs.shape.candidateDriftPerHour ?? 0) : 0);
        const drifting = slope !== 0;
        const series = seriesOf(r, startUnix);
        let at: number | null = null;
        for (let minute = 10; minute <= 120 && at === null; minute += 5) {
          const cut = startUnix + minute * 60;
          const s: RunSeries = {};
          for (const [q, xs] of Object.entries(series))
            s[q] = (xs ?? []).map((x) => ({ ...x, points: x.points.filter((p) => p[0] <= cut) }));
          const v = observeRun({
            runName: r.name,
            series: s,
            timeScale: 1,
            nowTs: cut,
            stepSeconds: 60 * FAMILY.scrapeMinutes,
            inFlight: fs.shape.inFlight,
            trajectory: false,
          }).observation.verdict;
          if (v.state === 'stable') at = minute;
        }
        if (drifting) {
          driftingStable += at !== null ? 1 : 0;
          if (Math.abs(slope) >= 0.2) steepStable += at !== null ? 1 : 0;
        } else if (at === null) never++;
        else firstStable.push(at);
      }
  return {
    median: firstStable.length ? median(firstStable) : Number.NaN,
    never,
    driftingStable,
    steepStable,
  };
}
