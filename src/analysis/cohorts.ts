// Start cohorts: a run's rollouts grouped by the minute they started, first wave included. Pure.
//
// Per run, log duration = cohort effect (its start minute) + worker effect + noise (a worker's own
// spread), fitted by a censored likelihood: a rollout still in flight has lasted at least its age, so
// it is right-censored there, not missing (an average of the ended ones alone reads the fast ones:
// 18% low at run-minute 6). Two runs are then contrasted cohort by cohort over the cohorts both have,
// at equal run age, so whatever moves every rollout started at one run age — the start-up, the
// congestion, a shared drift, the scene order — cancels. Cohorts started once the suite drains
// (fewer rollouts in flight, the last scenes) are left out: the end of a run is not steady state.
// The contrast's error is the model's, or, once the cohorts are enough to show it, the one their
// own spread shows (with its autocorrelation), whichever is larger. The slope of the cohort
// differences on start age is the drift the full-run guard reads (src/analysis/decision.ts).
import { type CohortFit, fitCohorts, type Item } from './cohort-fit.js';
import { type RolloutBatch, splitBatch } from './rollouts.js';
import { round, type Sample } from './series.js';

/** A run's cohort table (the verdict's `decision_estimate.cohorts`). */
export interface CohortTable {
  from_minute: number;
  step_minutes: number;
  /** Log of the run's seconds per rollout for rollouts started in each cohort (null: no ended rollout). */
  log_seconds: Array<number | null>;
  log_var: Array<number | null>;
  /** The rank-one covariance term the noise's own uncertainty adds (see src/analysis/cohort-fit.ts). */
  noise_coupling?: Array<number | null>;
  events: number[];
  data_end_minutes: number;
  drain_from_minute: number | null;
  final: boolean;
  /** Unix seconds of its run-minute 0 (whether two runs shared the cluster's wall clock). */
  started_at?: number | null;
  noise_sd?: number;
  /** The variance the estimated noise adds to every cohort's level (σ²/2 in a log-normal's mean). */
  level_var?: number;
}

export interface CohortInput {
  batches: readonly RolloutBatch[];
  /** Run-minute of the evaluation. */
  now: number;
  /** Scrape step in run-minutes. */
  step: number;
  /** Rollouts in flight (the gauge's steady level, else the topology's capacity). */
  inFlight: number;
  /** Each worker's last reading (run-minutes): a worker whose counter is gone is censored there. */
  lastSeen?: ReadonlyMap<string, number>;
  /** The in-flight gauge over run-minutes (the drain shows in it). */
  active?: readonly Sample[];
  /** Unix seconds of run-minute 0. */
  startedAt?: number | null;
  /** Rollouts the suite makes in all (scene_count × rollouts_per_scene), when known. */
  expectedRollouts?: number | null;
  /** The run's job ended: its data will not grow. */
  final?: boolean;
  cohortMinutes?: number;
  /** Each worker's noise (log scale) when known: the bench's oracle, never the product. */
  knownNoiseSd?: ReadonlyMap<string, number>;
}

/** Run-minutes of start a cohort spans (a sample of the counters at least this often places each start). */
export const COHORT_MINUTES = 1;

/** Run-minutes the in-flight gauge must stay low before it is a drain, not a dip between rollouts. */
const DRAIN_MINUTES = 3;

/**
 * Where the suite starts to drain, in run-minutes: the in-flight gauge falls below 85% of its
 * running level and stays there DRAIN_MINUTES, or every rollout of the suite has started (the
 * completed and in-flight ones reach `expectedRollouts`); null while neither happened.
 */
export function drainStart(
  i: Pick<CohortInput, 'active' | 'expectedRollouts' | 'batches' | 'inFlight'>,
): number | null {
  let level = 0;
  let below: number | null = null;
  for (const p of i.active ?? []) {
    if (!Number.isFinite(p.v)) continue;
    if (p.v >= 0.85 * level) {
      level = Math.max(level, p.v);
      below = null;
    } else {
      below ??= p.t;
      if (p.t - below >= DRAIN_MINUTES) return below;
    }
  }
  const total = i.expectedRollouts;
  if (!total || !(total > 0)) return null;
  let done = 0;
  for (const b of [...i.batches].sort((x, y) => x.end - y.end)) {
    done += b.n;
    if (done + i.inFlight >= total) return b.end;
  }
  return null;
}

/** Each worker's slots: its share of the busy time (per-worker Little's law) × the rollouts in flight. */
function slotsOf(batches: readonly RolloutBatch[], inFlight: number): Map<string, number> {
  const busy = new Map<string, number>();
  for (const b of batches) busy.set(b.worker, (busy.get(b.worker) ?? 0) + b.n * b.duration);
  const total = [...busy.values()].reduce((a, b) => a + b, 0);
  const out = new Map<string, number>();
  for (const [w, x] of busy) out.set(w, Math.max(1, Math.round((inFlight * x) / Math.max(1e-9, total))));
  return out;
}

/**
 * The items of the fit. Per worker, every ended rollout restarted its slot (the closed loop), so the
 * rollouts in flight are the latest starts: the run's start for slots whose first rollout has not
 * ended, else the latest ends. Each is censored at its age at the worker's last reading. A batch that
 * mixes a first-wave rollout with a later one is split (src/analysis/rollouts.ts splitBatch).
 */
function itemsOf(i: CohortInput, t0: number, cutoff: number, L: number) {
  const slots = slotsOf(i.batches, i.inFlight);
  const byWorker = new Map<string, RolloutBatch[]>();
  for (const b of i.batches) byWorker.set(b.worker, [...(byWorker.get(b.worker) ?? []), b]);
  const workers = [...slots.keys()].sort();
  const firstEnd = Math.min(...i.batches.map((b) => b.end));
  // a start between two knots: the one below and how far towards the next
  const place = (start: number) => {
    const pos = Math.max(0, start - t0) / L;
    const c = Math.floor(pos + 1e-9);
    return { c, a: Math.min(1, Math.max(0, pos - c)) };
  };
  const items: Item[] = [];
  workers.forEach((w, k) => {
    const bs = (byWorker.get(w) ?? []).sort((a, b) => a.end - b.end);
    const last = Math.min(i.now, i.lastSeen?.get(w) ?? i.now);
    const n = slots.get(w) as number;
    const starts: number[] = Array<number>(n).fill(t0);
    for (const b of bs) {
      for (const part of firstWaveSplit(b, t0, firstEnd, i.step))
        if (part.start < cutoff)
          items.push({
            k,
            ...place(part.start),
            n: part.n,
            y: Math.log(Math.max(1e-6, part.duration)),
            censored: false,
          });
      for (let j = 0; j < b.n; j++) starts.push(b.end);
    }
    for (const s of starts.slice(-n))
      if (s < cutoff && last - s > i.step / 2)
        items.push({ k, ...place(s), n: 1, y: Math.log(last - s), censored: true });
  });
  return { items, workers, slots: workers.map((w) => slots.get(w) as number) };
}

/** A batch as its first-wave part (started at t0) and the rest (src/analysis/rollouts.ts splitBatch). */
function firstWaveSplit(b: RolloutBatch, t0: number, firstEnd: number, step: number) {
  const { firstWave, rest } = splitBatch(b, t0, firstEnd, step);
  const parts: Array<{ start: number; n: number; duration: number }> = [];
  if (firstWave > 0) parts.push({ start: t0, n: firstWave, duration: b.end - t0 });
  if (rest) parts.push({ start: rest.start, n: rest.n, duration: rest.duration });
  return parts;
}

/** A typical rollout duration (run-minutes): the median of the ended batches' means. */
function typicalDuration(batches: readonly RolloutBatch[], now: number): number {
  const ds = batches
    .filter((b) => b.end <= now)
    .map((b) => b.duration)
    .sort((a, b) => a - b);
  return ds[Math.floor(ds.length / 2)] ?? 0;
}

/**
 * What the estimated worker effects and noise add to every cohort's level. The level weighs worker k
 * by its share of the rate π_k; the cohorts' effects weigh it by its share of the information ρ_k (a
 * noisy worker counts little). An error δw_k moves every cohort by (π_k − ρ_k) δw_k, Var(w_k) ≈ σ²_k
 * ÷ its information; and σ²_k/2 by π_k ÷ 2 · δσ²_k, Var(σ²_k) ≈ 2σ⁴_k ÷ n_k.
 */
function levelVariance(f: CohortFit, slots: readonly number[], rate: number): number {
  const info = f.workerInfo.reduce((a, b) => a + b, 0);
  let v = 0;
  for (let k = 0; k < f.w.length; k++) {
    const s2 = f.s2[k] as number;
    const pi = ((slots[k] as number) * Math.exp(-(f.w[k] as number) - s2 / 2)) / rate;
    const rho = (f.workerInfo[k] as number) / Math.max(1e-12, info);
    v += (pi - rho) ** 2 / Math.max(1e-12, f.workerInfo[k] as number);
    v += ((pi / 2) ** 2 * 2 * s2 * s2) / Math.max(1, f.noiseEvents[k] as number);
  }
  return v;
}

/**
 * A run's cohort table as of `now`, or null before any rollout ended. Cohorts that start once the
 * suite drains, less a typical duration (rollouts that would run into the drain), are left out.
 */
export function cohortTable(i: CohortInput): CohortTable | null {
  const done = i.batches.filter((b) => b.end <= i.now + 1e-9);
  if (!done.length || !(i.inFlight > 0)) return null;
  const L = i.cohortMinutes ?? COHORT_MINUTES;
  const t0 = Math.min(...i.batches.map((b) => b.start), ...done.map((b) => b.end - b.duration));
  const drain = drainStart(i);
  const cutoff = drain === null ? Number.POSITIVE_INFINITY : drain - typicalDuration(done, i.now);
  const { items, workers: names, slots } = itemsOf({ ...i, batches: done }, t0, cutoff, L);
  // knots up to the last start with an ended rollout: beyond it only rollouts in flight, which say
  // nothing bounded about their knots (leaving out rollouts by their start biases nothing)
  const lastEnded = Math.max(...items.filter((it) => !it.censored).map((it) => it.c + (it.a > 0 ? 1 : 0)), 0);
  const nC = Math.min(Math.max(1, Math.floor((Math.min(i.now, cutoff) - t0) / L + 1e-9) + 1), lastEnded + 1);
  const kept = items.filter((it) => it.c < nC).map((it) => (it.c === nC - 1 ? { ...it, a: 0 } : it));
  const known = i.knownNoiseSd ? names.map((w) => i.knownNoiseSd?.get(w)) : [];
  const f = fitCohorts(kept, { nC, nK: names.length, slots }, known);
  // the run's seconds per rollout at each knot: 60 ÷ Σ_k slots_k ÷ E[duration on worker k]
  let rate = 0;
  for (let k = 0; k < names.length; k++)
    rate += (slots[k] as number) * Math.exp(-(f.w[k] as number) - (f.s2[k] as number) / 2);
  const level = Math.log(60 / rate);
  const levelVar = levelVariance(f, slots, rate);
  const shown = (c: number) => (f.events[c] as number) >= 0.5;
  return {
    from_minute: round(t0, 3),
    step_minutes: L,
    log_seconds: Array.from(f.mu, (m, c) => (shown(c) ? round(m + level, 6) : null)),
    log_var: Array.from(f.varMu, (v, c) => (shown(c) && v > 0 ? round(v, 8) : null)),
    noise_coupling: Array.from(f.coupling, (g, c) => (shown(c) ? round(g, 6) : null)),
    events: Array.from(f.events, (e) => Math.round(e)),
    data_end_minutes: round(i.now, 3),
    drain_from_minute: Number.isFinite(cutoff) ? round(Math.max(t0, cutoff), 2) : null,
    final: !!i.final,
    started_at: i.startedAt ?? null,
    level_var: round(levelVar, 10),
    noise_sd: round(Math.sqrt(f.s2.reduce((a, b) => a + b, 0) / Math.max(1, names.length)), 4),
  };
}

/** Two runs contrasted over the cohorts both have: the equal-age change and the drift between them. */
export interface CohortContrast {
  /** Weighted mean over shared cohorts of log(candidate ÷ reference) seconds per rollout. */
  logChange: number;
  /** Its standard error: the model's, or the robust one once the cohorts are enough (the larger). */
  se: number;
  seModel: number;
  error: 'model' | 'robust';
  /** Slope of the cohort differences on start age, per run-minute, and its standard error. */
  slope: number;
  slopeSe: number;
  /** The contrast's weighted mean cohort age (run-minutes from the runs' starts). */
  meanAge: number;
  cohorts: number;
  /** Effective number of cohorts, (Σw)² ÷ Σw². */
  effective: number;
  /** Ended rollouts in the shared cohorts, per run. */
  events: { candidate: number; reference: number };
  /** Last shared cohort's start (run-minutes from the start). */
  lastAge: number;
  /** The slope's error is the robust one (enough cohorts to show their own spread): the guard may settle on it. */
  slopeTrusted: boolean;
  /** The two runs shared the cluster's wall clock (started within CONCURRENT_SECONDS of each other). */
  concurrent: boolean;
}

/** Runs started this close (unix seconds) share the cluster's wall-clock conditions. */
export const CONCURRENT_SECONDS = 300;

/**
 * Runs that did not share the wall clock (a reference recorded at another time) differ by whatever
 * slowed the cluster then and now: their cohort differences are read over at least this many
 * run-minutes together (the robust error's kernel), and only the robust error may make a claim.
 */
export const APART_BANDWIDTH_MINUTES = 20;

/** Effective cohorts from which the spread of the cohort differences is read (the robust error). */
export const ROBUST_MIN_COHORTS = 8;

interface Shared {
  x: number[];
  d: number[];
  w: number[];
  /** Each run's noise coupling at the cohort (0 when unknown). */
  ga: number[];
  gb: number[];
  events: { candidate: number; reference: number };
}

/** The cohorts both tables have (same start minute), up to `upTo` minutes of age when given. */
function sharedCohorts(a: CohortTable, b: CohortTable, upTo?: number): Shared {
  const out: Shared = { x: [], d: [], w: [], ga: [], gb: [], events: { candidate: 0, reference: 0 } };
  const L = a.step_minutes;
  for (let c = 0; c < a.log_seconds.length; c++) {
    const age = c * L;
    if (upTo !== undefined && age > upTo + 1e-9) break;
    const j = Math.round((a.from_minute - b.from_minute + age) / b.step_minutes + 1e-9);
    const [va, vb] = [a.log_seconds[c], b.log_seconds[j]];
    const [sa, sb] = [a.log_var[c], b.log_var[j]];
    if (va == null || vb == null || sa == null || sb == null || !(sa + sb > 0)) continue;
    out.x.push(age);
    out.d.push(va - vb);
    out.w.push(1 / (sa + sb));
    out.ga.push(a.noise_coupling?.[c] ?? 0);
    out.gb.push(b.noise_coupling?.[j] ?? 0);
    out.events.candidate += a.events[c] ?? 0;
    out.events.reference += b.events[j] ?? 0;
  }
  return out;
}

/**
 * The candidate's table against the reference's, cohort by cohort (equal run age: cohort k of each
 * is the rollouts that started k minutes into its run). `bandwidth`: the run-minutes over which
 * neighbouring cohorts share conditions (a rollout's duration): the robust error's kernel width.
 */
export function cohortContrast(
  candidate: CohortTable,
  reference: CohortTable,
  o: { bandwidth?: number; upTo?: number } = {},
): CohortContrast | null {
  const s = sharedCohorts(candidate, reference, o.upTo);
  const K = s.d.length;
  if (!K) return null;
  const W = s.w.reduce((a, b) => a + b, 0);
  const xbar = s.w.reduce((a, w, i) => a + w * (s.x[i] as number), 0) / W;
  const dbar = s.w.reduce((a, w, i) => a + w * (s.d[i] as number), 0) / W;
  const sxx = s.w.reduce((a, w, i) => a + w * ((s.x[i] as number) - xbar) ** 2, 0);
  const slope =
    sxx > 0
      ? s.w.reduce((a, w, i) => a + w * ((s.x[i] as number) - xbar) * ((s.d[i] as number) - dbar), 0) / sxx
      : 0;
  const r = s.d.map((d, i) => d - dbar - slope * ((s.x[i] as number) - xbar));
  const effective = W ** 2 / s.w.reduce((a, w) => a + w * w, 0);
  // each run's noise uncertainty moves all its cohorts together: (Σ w g)² ÷ W² per run
  const ga = s.w.reduce((a, w, i) => a + w * (s.ga[i] as number), 0) / W;
  const gb = s.w.reduce((a, w, i) => a + w * (s.gb[i] as number), 0) / W;
  const level = (candidate.level_var ?? 0) + (reference.level_var ?? 0);
  const seModel = Math.sqrt(1 / W + ga * ga + gb * gb + level);
  const slopeSeModel = sxx > 0 ? Math.sqrt(1 / sxx) : Number.POSITIVE_INFINITY;
  const [sa, sb] = [candidate.started_at, reference.started_at];
  const concurrent = sa != null && sb != null && Math.abs(sa - sb) <= CONCURRENT_SECONDS;
  const h = Math.max(2 * candidate.step_minutes, o.bandwidth ?? 0, concurrent ? 0 : APART_BANDWIDTH_MINUTES);
  const span = (s.x.at(-1) as number) - (s.x[0] as number);
  const enough = effective >= ROBUST_MIN_COHORTS && K > 2 && (concurrent || span >= 2 * h);
  const robust = enough ? hac(s, r, xbar, h, W, sxx) : null;
  const se = robust ? Math.max(seModel, robust.se) : seModel;
  return {
    logChange: dbar,
    se,
    seModel,
    error: robust && robust.se > seModel ? 'robust' : 'model',
    slope,
    slopeSe: robust ? Math.max(slopeSeModel, robust.slopeSe) : slopeSeModel,
    meanAge: xbar,
    cohorts: K,
    effective,
    events: s.events,
    lastAge: s.x.at(-1) as number,
    slopeTrusted: robust !== null,
    concurrent,
  };
}

/**
 * Heteroscedasticity- and autocorrelation-consistent errors of the weighted mean and slope (Bartlett
 * kernel over `h` run-minutes): the spread the cohort differences themselves show around the line,
 * neighbours counted together, with a K ÷ (K − 2) small-sample factor.
 */
function hac(s: Shared, r: readonly number[], xbar: number, h: number, W: number, sxx: number) {
  const K = r.length;
  let vm = 0;
  let vb = 0;
  for (let i = 0; i < K; i++)
    for (let j = 0; j < K; j++) {
      const kern = 1 - Math.abs((s.x[i] as number) - (s.x[j] as number)) / h;
      if (kern <= 0) continue;
      const ui = (s.w[i] as number) * (r[i] as number);
      const uj = (s.w[j] as number) * (r[j] as number);
      vm += kern * ui * uj;
      vb += kern * ui * uj * ((s.x[i] as number) - xbar) * ((s.x[j] as number) - xbar);
    }
  const f = K / (K - 2);
  return {
    se: Math.sqrt((f * Math.max(0, vm)) / W ** 2),
    slopeSe: sxx > 0 ? Math.sqrt((f * Math.max(0, vb)) / sxx ** 2) : Number.POSITIVE_INFINITY,
  };
}
