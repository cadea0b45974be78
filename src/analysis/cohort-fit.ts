// The censored likelihood of a run's rollout durations by start time (src/analysis/cohorts.ts). Pure.
//
// log duration = μ(start) + w_worker + σ_worker · ε, ε standard normal, where μ is piecewise linear
// between knots one cohort apart (a start-up transient that falls 12% a minute must not make a
// minute's early starts and late ones one mean: two runs start their second wave at different
// moments of the minute). A rollout still in flight has lasted at least its age: right-censored
// there. Fitted by EM: each rollout in flight is replaced by its expected log duration beyond its age
// (the inverse Mills ratio), then the knots (a tridiagonal least-squares solve), the worker effects
// (centred on the slots' mean) and each worker's σ² are refitted, until nothing moves.

/** One observation: a batch of rollouts that ended (its mean duration) or one rollout in flight. */
export interface Item {
  /** Worker index. */
  k: number;
  /** The knot below its start, and where it lies towards the next one (0…1). */
  c: number;
  a: number;
  n: number;
  /** log of the batch's mean duration, or of the age a rollout in flight has lasted. */
  y: number;
  censored: boolean;
}

export interface CohortFit {
  /** Knot values (log duration in run-minutes, the worker effects centred). */
  mu: Float64Array;
  /** Their variances given the noise (the diagonal of the inverse information). */
  varMu: Float64Array;
  /**
   * The rank-one part of their covariance that the noise's own uncertainty adds (a heavily censored
   * cohort's effect leans on σ): Cov(μ) = diag(varMu) + coupling couplingᵀ, on μ + the level's σ²/2.
   */
  coupling: Float64Array;
  /** Ended rollouts near each knot (each batch split by its place between two knots). */
  events: Float64Array;
  w: Float64Array;
  s2: Float64Array;
  /** The ended rollouts each worker's σ² rests on (its own, or all of them when pooled). */
  noiseEvents: Float64Array;
  /** Each worker's information about the durations (Σ n ÷ σ², censored: λ(λ − z) ÷ σ²). */
  workerInfo: Float64Array;
}

/** A worker's noise is its own mean square shrunk towards the pooled one by this many items' worth. */
const NOISE_PRIOR = 10;
const FIT_ITERATIONS = 100;
/** A weak tie between neighbouring knots (a hundredth of a rollout's weight): keeps a knot without data defined. */
const RIDGE = 0.5;

const SQRT2PI = Math.sqrt(2 * Math.PI);

/** 1 − Φ(z) (Abramowitz–Stegun 26.2.17, error < 7.5e-8). */
export function upperTail(z: number): number {
  const t = 1 / (1 + 0.2316419 * Math.abs(z));
  const poly =
    t * (0.31938153 + t * (-0.356563782 + t * (1.781477937 + t * (-1.821255978 + t * 1.330274429))));
  const q = (Math.exp(-0.5 * z * z) / SQRT2PI) * poly;
  return z >= 0 ? q : 1 - q;
}

/** φ(z) ÷ (1 − Φ(z)), the inverse Mills ratio, stable in the upper tail. */
function mills(z: number): number {
  if (z > 8) return z + 1 / z;
  return Math.exp(-0.5 * z * z) / SQRT2PI / Math.max(1e-300, upperTail(z));
}

const muAt = (f: Pick<CohortFit, 'mu'>, it: Pick<Item, 'c' | 'a'>) =>
  (1 - it.a) * (f.mu[it.c] as number) + it.a * (f.mu[it.c + 1] ?? (f.mu[it.c] as number));

/** A symmetric tridiagonal system: diagonal, the off-diagonal (i, i+1), a right-hand side. */
interface Tri {
  d: Float64Array;
  o: Float64Array;
  b: Float64Array;
}

function tri(n: number): Tri {
  const t = { d: new Float64Array(n), o: new Float64Array(Math.max(0, n - 1)), b: new Float64Array(n) };
  for (let c = 0; c + 1 < n; c++) {
    t.d[c] = (t.d[c] as number) + RIDGE;
    t.d[c + 1] = (t.d[c + 1] as number) + RIDGE;
    t.o[c] = (t.o[c] as number) - RIDGE;
  }
  if (n === 1) t.d[0] = RIDGE * 1e-3;
  return t;
}

/** Adds an item's weight ω and value r on its two knots. */
function addTo(t: Tri, it: Pick<Item, 'c' | 'a'>, om: number, r: number): void {
  const [u, v] = [1 - it.a, it.a];
  t.d[it.c] = (t.d[it.c] as number) + om * u * u;
  t.b[it.c] = (t.b[it.c] as number) + om * u * r;
  if (it.c + 1 < t.d.length && v > 0) {
    t.d[it.c + 1] = (t.d[it.c + 1] as number) + om * v * v;
    t.o[it.c] = (t.o[it.c] as number) + om * u * v;
    t.b[it.c + 1] = (t.b[it.c + 1] as number) + om * v * r;
  }
}

/** Solves a symmetric tridiagonal system (the Thomas algorithm). */
function solve(t: Tri): Float64Array {
  const n = t.d.length;
  const cp = new Float64Array(n);
  const dp = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const lo = i > 0 ? (t.o[i - 1] as number) : 0;
    const den = (t.d[i] as number) - (i > 0 ? lo * (cp[i - 1] as number) : 0);
    cp[i] = i + 1 < n ? (t.o[i] as number) / den : 0;
    dp[i] = ((t.b[i] as number) - (i > 0 ? lo * (dp[i - 1] as number) : 0)) / den;
  }
  const x = new Float64Array(n);
  for (let i = n - 1; i >= 0; i--)
    x[i] = (dp[i] as number) - (i + 1 < n ? (cp[i] as number) * (x[i + 1] as number) : 0);
  return x;
}

/** The diagonal of a symmetric tridiagonal matrix's inverse: 1 ÷ (p_i + q_i − d_i), from both pivots' sweeps. */
function inverseDiagonal(t: Tri): Float64Array {
  const n = t.d.length;
  const p = new Float64Array(n);
  const q = new Float64Array(n);
  for (let i = 0; i < n; i++)
    p[i] = (t.d[i] as number) - (i > 0 ? (t.o[i - 1] as number) ** 2 / (p[i - 1] as number) : 0);
  for (let i = n - 1; i >= 0; i--)
    q[i] = (t.d[i] as number) - (i + 1 < n ? (t.o[i] as number) ** 2 / (q[i + 1] as number) : 0);
  return Float64Array.from(p, (pi, i) => 1 / (pi + (q[i] as number) - (t.d[i] as number)));
}

/** The items as arrays (the EM loop allocates nothing). */
interface Packed {
  k: Int32Array;
  c: Int32Array;
  a: Float64Array;
  n: Float64Array;
  y: Float64Array;
  cens: Uint8Array;
  /** The current expected log duration and conditional variance of each item. */
  e: Float64Array;
  v: Float64Array;
}

function pack(items: readonly Item[]): Packed {
  const len = items.length;
  const p: Packed = {
    k: new Int32Array(len),
    c: new Int32Array(len),
    a: new Float64Array(len),
    n: new Float64Array(len),
    y: new Float64Array(len),
    cens: new Uint8Array(len),
    e: new Float64Array(len),
    v: new Float64Array(len),
  };
  items.forEach((it, j) => {
    [p.k[j], p.c[j], p.a[j], p.n[j], p.y[j], p.cens[j]] = [it.k, it.c, it.a, it.n, it.y, it.censored ? 1 : 0];
  });
  return p;
}

/** Ended rollouts near each knot (a batch split by its place between two knots), and per worker. */
function eventCounts(items: readonly Item[], nC: number, nK: number) {
  const events = new Float64Array(nC);
  const perWorker = new Float64Array(nK);
  for (const it of items)
    if (!it.censored) {
      events[it.c] = (events[it.c] as number) + it.n * (1 - it.a);
      if (it.c + 1 < nC) events[it.c + 1] = (events[it.c + 1] as number) + it.n * it.a;
      perWorker[it.k] = (perWorker[it.k] as number) + it.n;
    }
  return { events, perWorker };
}

/**
 * The fit (see the header). `known`: each worker's σ when known (the bench's oracle), else estimated.
 * Stops when no effect moves by more than 1e-6.
 */
export function fitCohorts(
  items: readonly Item[],
  dims: { nC: number; nK: number; slots: readonly number[] },
  known: ReadonlyArray<number | undefined> = [],
): CohortFit {
  const { events, perWorker } = eventCounts(items, dims.nC, dims.nK);
  const f: CohortFit = {
    mu: new Float64Array(dims.nC),
    varMu: new Float64Array(dims.nC),
    events,
    w: new Float64Array(dims.nK),
    s2: Float64Array.from({ length: dims.nK }, (_, k) => (known[k] ?? 0.2) ** 2),
    coupling: new Float64Array(dims.nC),
    workerInfo: new Float64Array(dims.nK),
    noiseEvents: Float64Array.from(perWorker, (n) => n + NOISE_PRIOR),
  };
  const ended = items.filter((it) => !it.censored);
  const start =
    ended.reduce((a, it) => a + it.n * it.y, 0) /
    Math.max(
      1,
      ended.reduce((a, it) => a + it.n, 0),
    );
  f.mu.fill(start);
  const p = pack(items);
  const estimate = known.length < dims.nK || known.some((x) => x === undefined);
  for (let iter = 0; iter < FIT_ITERATIONS; iter++) {
    const moved = Math.max(knotStep(p, f), workerStep(p, f, dims.slots));
    if (estimate) {
      eStep(p, f);
      noiseStep(p, f);
    }
    if (moved < 1e-7) break;
  }
  for (let j = 0; j < p.y.length; j++)
    f.workerInfo[p.k[j] as number] = (f.workerInfo[p.k[j] as number] as number) + scoreOf(p, j, f).h;
  const info = information(items, f, estimate);
  f.varMu = info.varMu;
  f.coupling = info.coupling;
  return f;
}

/** The item's mean under the fit: the knots interpolated at its start, plus its worker's effect. */
function meanOf(p: Packed, j: number, f: CohortFit): number {
  const c = p.c[j] as number;
  const a = p.a[j] as number;
  const hi = c + 1 < f.mu.length ? (f.mu[c + 1] as number) : (f.mu[c] as number);
  return (1 - a) * (f.mu[c] as number) + a * hi + (f.w[p.k[j] as number] as number);
}

/** The E-step: each item's expected log duration (a rollout in flight: beyond its age) and its conditional variance. */
function eStep(p: Packed, f: CohortFit): void {
  for (let j = 0; j < p.y.length; j++) {
    const s2 = f.s2[p.k[j] as number] as number;
    if (!p.cens[j]) {
      p.e[j] = (p.y[j] as number) - (s2 / 2) * (1 - 1 / (p.n[j] as number));
      p.v[j] = 0;
      continue;
    }
    const m = meanOf(p, j, f);
    const sd = Math.sqrt(s2);
    const z = ((p.y[j] as number) - m) / sd;
    const lam = mills(z);
    p.e[j] = m + sd * lam;
    p.v[j] = Math.max(0, s2 * (1 + z * lam - lam * lam));
  }
}

/** An item's score (d log-likelihood ÷ d mean) and information at the current fit. */
function scoreOf(p: Packed, j: number, f: CohortFit): { g: number; h: number } {
  const s2 = f.s2[p.k[j] as number] as number;
  const m = meanOf(p, j, f);
  if (!p.cens[j]) {
    const om = (p.n[j] as number) / s2;
    return { g: om * ((p.y[j] as number) - (s2 / 2) * (1 - 1 / (p.n[j] as number)) - m), h: om };
  }
  const sd = Math.sqrt(s2);
  const z = ((p.y[j] as number) - m) / sd;
  const lam = mills(z);
  return { g: lam / sd, h: Math.max(1e-9, lam * (lam - z)) / s2 };
}

/**
 * A Newton step of the knots on the censored log-likelihood (the workers and noise held), with the
 * ridge between neighbours: concave, so it converges in a few steps where EM crawls (a cohort whose
 * rollouts are mostly in flight). Each knot moves at most 0.5 per step. Returns the largest move.
 */
function knotStep(p: Packed, f: CohortFit): number {
  const n = f.mu.length;
  const t = tri(n);
  for (let c = 0; c + 1 < n; c++) {
    const diff = RIDGE * ((f.mu[c] as number) - (f.mu[c + 1] as number));
    t.b[c] = (t.b[c] as number) - diff;
    t.b[c + 1] = (t.b[c + 1] as number) + diff;
  }
  for (let j = 0; j < p.y.length; j++) {
    const { g, h } = scoreOf(p, j, f);
    const [c, v] = [p.c[j] as number, p.a[j] as number];
    const u = 1 - v;
    t.d[c] = (t.d[c] as number) + h * u * u;
    t.b[c] = (t.b[c] as number) + g * u;
    if (c + 1 < n && v > 0) {
      t.d[c + 1] = (t.d[c + 1] as number) + h * v * v;
      t.o[c] = (t.o[c] as number) + h * u * v;
      t.b[c + 1] = (t.b[c + 1] as number) + g * v;
    }
  }
  const step = solve(t);
  let moved = 0;
  for (let c = 0; c < n; c++) {
    const d = Math.max(-0.5, Math.min(0.5, step[c] as number));
    f.mu[c] = (f.mu[c] as number) + d;
    moved = Math.max(moved, Math.abs(d));
  }
  return moved;
}

/** A Newton step of the worker effects, centred on the slots' mean (the knots carry the level). */
function workerStep(p: Packed, f: CohortFit, slots: readonly number[]): number {
  const nK = f.w.length;
  const g = new Float64Array(nK);
  const h = new Float64Array(nK);
  for (let j = 0; j < p.y.length; j++) {
    const k = p.k[j] as number;
    const x = scoreOf(p, j, f);
    g[k] = (g[k] as number) + x.g;
    h[k] = (h[k] as number) + x.h;
  }
  const total = slots.reduce((a, b) => a + b, 0);
  let [moved, wbar] = [0, 0];
  for (let k = 0; k < nK; k++) {
    const d = (h[k] as number) > 0 ? Math.max(-0.5, Math.min(0.5, (g[k] as number) / (h[k] as number))) : 0;
    f.w[k] = (f.w[k] as number) + d;
    moved = Math.max(moved, Math.abs(d));
    wbar += ((slots[k] as number) * (f.w[k] as number)) / total;
  }
  for (let k = 0; k < nK; k++) f.w[k] = (f.w[k] as number) - wbar;
  for (let c = 0; c < f.mu.length; c++) f.mu[c] = (f.mu[c] as number) + wbar;
  return moved;
}

/** The M-step of each worker's σ²: the residuals' mean square (a batch of n: n × its square) and the censored ones' variance. */
function noiseStep(p: Packed, f: CohortFit): void {
  const ss = new Float64Array(f.s2.length);
  const cnt = new Float64Array(f.s2.length);
  for (let j = 0; j < p.y.length; j++) {
    const k = p.k[j] as number;
    const r = (p.e[j] as number) - meanOf(p, j, f);
    ss[k] = (ss[k] as number) + (p.n[j] as number) * r * r + (p.v[j] as number);
    cnt[k] = (cnt[k] as number) + 1;
  }
  const pooled = Math.max(
    1e-4,
    ss.reduce((a, b) => a + b, 0) /
      Math.max(
        1,
        cnt.reduce((a, b) => a + b, 0),
      ),
  );
  // each worker's own mean square, shrunk towards the pooled one by NOISE_PRIOR items' worth
  for (let k = 0; k < f.s2.length; k++)
    f.s2[k] = Math.max(1e-4, ((ss[k] as number) + NOISE_PRIOR * pooled) / ((cnt[k] as number) + NOISE_PRIOR));
}

/**
 * The knots' variances from the information (n ÷ σ² per ended batch, λ(λ − z) ÷ σ² per rollout in
 * flight), and, when the noise is estimated, the rank-one term its uncertainty adds: with τ = log of
 * a common scale of the workers' σ, the joint information [[A, b], [bᵀ, s]] gives Cov(μ) = A⁻¹ +
 * u uᵀ ÷ κ (u = A⁻¹b, κ = s − bᵀu), and the level's σ²/2 moves with τ too (by σ̄²).
 */
function information(items: readonly Item[], f: CohortFit, estimate: boolean) {
  const t = tri(f.mu.length);
  const b = tri(f.mu.length);
  let sTau = 0;
  let level = 0;
  for (const it of items) {
    const s2 = f.s2[it.k] as number;
    const sd = Math.sqrt(s2);
    const m = muAt(f, it) + (f.w[it.k] as number);
    if (!it.censored) {
      addTo(t, it, it.n / s2, 0);
      sTau += 2;
      continue;
    }
    const z = (it.y - m) / sd;
    const lam = mills(z);
    const g = Math.max(0, lam * (lam - z));
    addTo(t, it, g / s2, 0);
    addTo(b, it, 0, (g * z + lam) / sd);
    sTau += g * z * z + 2 * lam * z;
  }
  for (let k = 0; k < f.s2.length; k++) level += (f.s2[k] as number) / f.s2.length;
  const varMu = inverseDiagonal(t);
  if (!estimate) return { varMu, coupling: new Float64Array(f.mu.length) };
  const u = solve({ ...t, b: b.b });
  const kappa = Math.max(1e-6, sTau - u.reduce((a, x, c) => a + x * (b.b[c] as number), 0));
  return { varMu, coupling: Float64Array.from(u, (x) => (x - level) / Math.sqrt(kappa)) };
}
