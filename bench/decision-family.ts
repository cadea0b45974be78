// The decision bench's in-process path: a trace-family run's rollouts (bench/trace-family.ts) scraped
// per worker at the scrape step into the batches src/analysis/rollouts.ts reconstructs from the
// duration histogram (the same increments Prometheus would serve), read by the product's own reading
// (src/analysis/reading.ts decisionReading: the start cohorts and the estimate) at any run-minute,
// and decided look by look by the product's one decision path (src/analysis/decide-look.ts
// decideLook). No Prometheus: the decision family runs in minutes. Nothing here decides.
import { cohortTable } from '../src/analysis/cohorts.js';
import { decideLook } from '../src/analysis/decide-look.js';
import { type DecideOptions, leadingCandidate, type VerdictLike } from '../src/analysis/decision.js';
import { observeRun, type RunSeries } from '../src/analysis/observe.js';
import { decisionReading } from '../src/analysis/reading.js';
import { referenceNeeded } from '../src/analysis/reference-lifetime.js';
import type { RolloutBatch } from '../src/analysis/rollouts.js';
import { median, type Sample } from '../src/analysis/series.js';
import { EXPERIMENT_DEFAULTS } from '../src/topology/settings.js';
import type { Decision } from '../src/types/generated/metrics.js';
import { type Completion, completions, type RunSpec, SHAPES, type Shape } from './trace-family.js';

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

/** The in-flight gauge at every scrape (rollouts started and not ended), as AlpaSim exports it. */
export function activeSamples(events: readonly Completion[], stepMinutes: number, until: number): Sample[] {
  const starts = events.map((e) => e.t - e.d).sort((a, b) => a - b);
  const ends = events.map((e) => e.t).sort((a, b) => a - b);
  const out: Sample[] = [];
  let [i, j] = [0, 0];
  for (let t = 0; t <= until + 1e-9; t += stepMinutes) {
    while (i < starts.length && (starts[i] as number) <= t) i++;
    while (j < ends.length && (ends[j] as number) <= t) j++;
    out.push({ t, v: i - j });
  }
  return out;
}

export interface EstimateReader {
  /**
   * The decision's verdict as `topo analyze` would give it at run-minute `now`; `stopAt`: its job
   * was stopped there (the product's reference lifetime), else the reader's own `stopAt`.
   */
  at(now: number, stopAt?: number): VerdictLike;
}

export interface ReaderOptions {
  inFlight: number;
  stepMinutes: number;
  runEnd: number;
  /** The suite's rollouts in all (a run that drains). */
  suite?: number;
  /** Its job was stopped here (a reference stopped at its decision): its data end, final. */
  stopAt?: number;
  /** Unix seconds of its start (0 for the runs started together; a recorded reference ran a day before). */
  startedAt?: number;
}

/**
 * A reader's look at run-minute `minute`: its data end at the earlier of the job's stop this look
 * names and the reader's own, and are final once the look is past it; `key` caches the reading.
 */
function lookOf(minute: number, stopped: number | undefined, own: number | undefined) {
  const stopAt = Math.min(stopped ?? Number.POSITIVE_INFINITY, own ?? Number.POSITIVE_INFINITY);
  const now = Math.min(minute, stopAt);
  const final = minute >= stopAt;
  return { now, final, key: `${now}:${final}` };
}

/** Reads one run's decision verdict at any run-minute from its scraped batches (the product's reading). */
export function estimateReader(events: readonly Completion[], o: ReaderOptions): EstimateReader {
  const batches = scrapeBatches(events, o.stepMinutes);
  const active = activeSamples(events, o.stepMinutes, o.runEnd);
  const cache = new Map<string, VerdictLike>();
  return {
    at(minute: number, stopped?: number) {
      const { now, final, key } = lookOf(minute, stopped, o.stopAt);
      const hit = cache.get(key);
      if (hit) return hit;
      const upto = batches.filter((b) => b.end <= now + 1e-9);
      const completed = upto.reduce((a, b) => a + b.n, 0);
      const r = decisionReading({
        batches: upto,
        now,
        runEnd: runEndOf(o, completed, now),
        inFlight: o.inFlight,
        completed,
        step: o.stepMinutes,
        active: active.filter((p) => p.t <= now + 1e-9),
        expectedRollouts: o.suite ?? null,
        final,
        startedAt: o.startedAt ?? 0,
        trajectory: false,
      });
      const v: VerdictLike = {
        state: r.cohorts || r.estimate ? 'stabilising' : 'warming',
        minutes_of_data: now,
        run_end_minutes: runEndOf(o, completed, now),
        projected_full_run: r.estimate?.projected_full_run ?? null,
        ...(r.estimate ? { decision_estimate: r.estimate } : {}),
        cohorts: r.cohorts,
      };
      cache.set(key, v);
      return v;
    },
  };
}

/** The run's end as the detector projects it: the wall time, or the suite's last rollout at the rate so far. */
function runEndOf(o: ReaderOptions, completed: number, now: number): number {
  if (!o.suite || completed < 1 || now <= 0) return o.runEnd;
  return Math.min(o.runEnd, now + Math.max(0, o.suite - completed) / (completed / now));
}

// ── The decision family (issues 31 and 38): run shapes × candidates × reference paths ───────────────

/** A family shape: the run model, and what its reference and candidates share. */
export interface FamilyShape {
  shape: Shape;
  /** Only the candidates drift (the reference keeps still): scored on the claim's own side. */
  candidateDrift?: boolean;
  /** The reference is stopped at this run-minute (at its own decision), concurrent and recorded alike. */
  referenceStopsAt?: number;
}

// the trace family's plain-fast run: 64 slots on 4 workers, 3 s per rollout, congestion ×2 fading over 12 minutes
const { name: _plain, ...fast } = SHAPES[0] as Shape;

/**
 * The broader family: periodic slowdowns of 5–90 minutes, a drifting reference and candidates, few
 * slow workers, scenes, noisy workers; and issue 38's: candidates drifting 5%/h and 10%/h, a
 * wall-clock slowdown whose phase differs between runs (the recorded reference ran at another time),
 * a reference stopped at its decision, and a suite that drains before the horizon.
 */
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
  { shape: { name: 'candidate-drift-5%/h', ...fast, candidateDriftPerHour: 0.05 }, candidateDrift: true },
  { shape: { name: 'candidate-drift-10%/h', ...fast, candidateDriftPerHour: 0.1 }, candidateDrift: true },
  { shape: { name: 'candidate-drift', ...fast, candidateDriftPerHour: 0.25 }, candidateDrift: true },
  { shape: { name: 'wall-clock-phase', ...fast, wallClock: { periodMinutes: 40, amplitude: 0.12 } } },
  { shape: { name: 'stopped-reference', ...fast }, referenceStopsAt: 25 },
  { shape: { name: 'drain', ...fast, suite: 1700 } },
];

export const FACTORS = [0.9, 0.95, 0.98, 1, 1.02, 1.05, 1.1];

export const FAMILY = { end: 234, startup: 5, gpus: 8, scrapeMinutes: 0.25 } as const;

export interface FamilyRun {
  name: string;
  spec: RunSpec;
  shape: FamilyShape;
  factor: number;
  events: Completion[];
  /** The long-run value: full-run seconds per rollout at the run's end. */
  truth: number;
  /** The run's drift per hour (the candidates' own, or the shape's). */
  drift: number;
}

/** A candidate's seed offset: its factor's place among FACTORS (as before), else one of its own. */
const candidateSeed = (factor: number) => {
  const i = FACTORS.indexOf(factor);
  return i >= 0 ? 1000 * (1 + i) : 1000 + Math.round(factor * 7919);
};

/** The trace-family spec of a family run (its generator's inputs; the Prometheus path writes the same runs). */
export function familySpec(
  fs: FamilyShape,
  seed: number,
  factor: number,
  key: string,
  phaseMinutes = 0,
): RunSpec {
  const name = `${fs.shape.name}-s${seed}-${key}`;
  const base = key === 'base' || key === 'recorded';
  return {
    shape: fs.shape,
    seed: base ? seed + (key === 'recorded' ? 500 : 0) : seed + candidateSeed(factor),
    factor,
    runName: base ? `${name}-base` : name,
    endMinutes: FAMILY.end,
    scrapeSeconds: FAMILY.scrapeMinutes * 60,
    phaseMinutes,
  };
}

function familyRun(fs: FamilyShape, seed: number, factor: number, key: string, phaseMinutes = 0): FamilyRun {
  const spec = familySpec(fs, seed, factor, key, phaseMinutes);
  const events = completions(spec);
  const ended = events.filter((e) => e.t <= FAMILY.end);
  const last = Math.max(...ended.map((e) => e.t));
  const base = key === 'base' || key === 'recorded';
  const drift = fs.shape.driftPerHour ?? (base ? 0 : (fs.shape.candidateDriftPerHour ?? 0));
  return {
    name: `${fs.shape.name}-s${seed}-${key}`,
    spec,
    shape: fs,
    factor,
    events,
    truth: (60 * last) / ended.length,
    drift,
  };
}

/** How one run is read at a run-minute: the product's reading, or an oracle's. */
export type ReaderOf = (r: FamilyRun, o: ReaderOptions) => EstimateReader;

export const productReader: ReaderOf = (r, o) => estimateReader(r.events, o);

/**
 * The same-knowledge oracle's reading: every rollout with its exact start and end (no scrape
 * batching, no reconstruction), the rollouts in flight censored at their age, the per-worker noise
 * known, fitted by the same censored likelihood over the same cohorts. What no estimator on the
 * metrics can beat without knowing more than the data say.
 */
export const oracleReader: ReaderOf = (r, o) => {
  const s = r.shape.shape;
  const noise = new Map<string, number>();
  for (let w = 0; w < s.workers; w++)
    noise.set(String(w), Math.hypot((w < (s.noisyWorkers ?? 0) ? 3 : 1) * s.jitter, s.scenes?.sd ?? 0));
  const exact: RolloutBatch[] = r.events.map((e) => ({
    worker: String(e.worker),
    end: e.t,
    n: 1,
    duration: e.d,
    start: e.t - e.d,
  }));
  const active = activeSamples(r.events, o.stepMinutes, o.runEnd);
  const product = estimateReader(r.events, o);
  const cache = new Map<string, VerdictLike>();
  return {
    at(minute: number, stopped?: number) {
      const { now, final, key } = lookOf(minute, stopped, o.stopAt);
      const hit = cache.get(key);
      if (hit) return hit;
      const cohorts = cohortTable({
        batches: exact.filter((b) => b.end <= now),
        now,
        step: 1e-6,
        inFlight: o.inFlight,
        active: active.filter((p) => p.t <= now),
        expectedRollouts: o.suite ?? null,
        final,
        startedAt: o.startedAt ?? 0,
        knownNoiseSd: noise,
      });
      const v: VerdictLike = { ...product.at(minute, stopped), cohorts };
      cache.set(key, v);
      return v;
    },
  };
};

/** One candidate's claims as the decisions made them: the first (at its look) and the final one. */
export interface Claim {
  state: Decision['state'];
  at: number;
  decision: Decision;
}

/** One experiment's decisions: each candidate's claims, the look its job stopped, and the last look any decision was open. */
interface Decided {
  claims: Map<string, Claim[]>;
  stopped: Map<string, number>;
  /** The last look at which a candidate's decision still read the reference (its job was needed). */
  openUntil: number;
  /** The look the product's reference lifetime stopped the reference job (null: not stopped by it). */
  referenceStop: number | null;
}

/** Reads the reference at a run-minute; `stopAt`: its job was stopped there. */
type ReferenceAt = (minute: number, stopAt?: number) => VerdictLike;

/**
 * One experiment's decisions look by look, as the monitor makes them (decideLook: against the
 * reference read as `refAt` gives it, the leader while that is open). A candidate stops at a final
 * decision; a provisional winner runs on (its full-run guard) to its final decision or the horizon.
 * `beside`: the reference is a job beside the candidates, stopped as the product stops it
 * (src/analysis/reference-lifetime.ts referenceNeeded, the monitor's planReferenceJob rule); its data
 * end there and the decision path reads it as ended.
 */
function decideGroup(
  cands: readonly FamilyRun[],
  read: (r: FamilyRun, minute: number) => VerdictLike,
  refAt: ReferenceAt,
  options: DecideOptions,
  beside = false,
): Decided {
  const claims = new Map<string, Claim[]>(cands.map((r) => [r.name, []]));
  const previous = new Map<string, Decision>();
  const stopped = new Map<string, number>();
  const horizon = options.maxDecisionMinutes ?? EXPERIMENT_DEFAULTS.maxDecisionMinutes;
  let [openUntil, referenceStop] = [0, null as number | null];
  for (let minute = 6; minute <= horizon && stopped.size < cands.length; minute++) {
    const ref = refAt(minute, referenceStop ?? undefined);
    const views = cands.map((r) => ({
      name: r.name,
      verdict: read(r, Math.min(minute, stopped.get(r.name) ?? minute)),
    }));
    const leader = leadingCandidate(views, ref);
    openUntil = minute;
    for (const [i, r] of cands.entries()) {
      if (stopped.has(r.name)) continue;
      const look = decideLook(
        {
          candidate: (views[i] as { verdict: VerdictLike }).verdict,
          reference: { name: 'baseline', verdict: ref },
          leader: leader && leader.name !== r.name ? { ...leader, contenders: cands.length } : null,
          previous: previous.get(r.name) ?? null,
        },
        options,
      );
      const d = look.decision;
      previous.set(r.name, d);
      const list = claims.get(r.name) as Claim[];
      if (d.state !== 'measuring' && list.at(-1)?.state !== d.state)
        list.push({ state: d.state, at: minute, decision: d });
      if (look.stop) stopped.set(r.name, minute);
    }
    if (beside && referenceStop === null && !referenceJobNeeded(cands, stopped, previous, minute, options))
      referenceStop = minute;
  }
  return { claims, stopped, openUntil, referenceStop };
}

/** The product's reference lifetime at this look, over the candidates whose jobs still run. */
function referenceJobNeeded(
  cands: readonly FamilyRun[],
  stopped: ReadonlyMap<string, number>,
  decisions: ReadonlyMap<string, Decision>,
  minute: number,
  options: DecideOptions,
): boolean {
  const open = cands
    .filter((r) => !stopped.has(r.name))
    .map((r) => ({ name: r.name, decision: decisions.get(r.name) ?? null }));
  return referenceNeeded(open, {
    minImprovement: options.minImprovement ?? EXPERIMENT_DEFAULTS.minImprovement,
    minute,
    horizonMinutes: options.maxDecisionMinutes ?? EXPERIMENT_DEFAULTS.maxDecisionMinutes,
  }).needed;
}

export interface FamilyRow {
  shape: string;
  seed: number;
  mode: 'recorded' | 'concurrent';
  factor: number;
  /** Full-run truth against what it was decided against. */
  trueChange: number;
  claims: Claim[];
  /** The first claim's look (what the candidate is charged to); null: none by the horizon. */
  decidedAt: number | null;
  /** Its job's last look (a provisional winner runs on). */
  ranTo: number;
  /** Every claim right on its own side; null without one. */
  right: boolean | null;
  /** Claims whose interval covers their truth, of the claims made. */
  covered: number;
  claimsScored: number;
  betterWhenNot: boolean;
}

const MARGIN = 0.005;

/** The truth a claim is about: the full run for `better`/`equivalent`, the equal run age for the rest. */
function truthOf(c: Claim, r: FamilyRun, against: FamilyRun, full: number): { equal: number; full: number } {
  const A = (FAMILY.end - (r.events[0]?.d ?? 0)) / 2;
  const a = c.decision.contrast?.mean_age_minutes ?? A;
  // the model's drift ratio between the two runs at start age t (1 without a drift)
  const ratio = (t: number) => (1 + (r.drift * t) / 60) / (1 + (against.drift * t) / 60);
  return { equal: ((1 + full) * ratio(a)) / ratio(A) - 1, full };
}

/**
 * Right and covered on the claim's own side: `better` and `equivalent` are full-run claims (their
 * full-run interval against the full-run truth); the provisional winner and `faster-drift-not-ruled-
 * out` are equal-age claims; `worse` and `not-better` are one-sided, at equal age or over the full
 * run as the interval that settled them says, and covered when the truth lies on their side.
 */
function score(
  c: Claim,
  t: { equal: number; full: number },
  m: number,
): { right: boolean; covered: boolean } {
  const eq = c.decision.relative_change;
  const fr = c.decision.full_run?.change ?? null;
  const inside = (i: { low: number; high: number } | null | undefined, x: number) =>
    !!i && i.low <= x && x <= i.high;
  switch (c.state) {
    case 'better':
      return { right: t.full < -m + MARGIN, covered: inside(fr ?? eq, t.full) };
    case 'equivalent':
      return { right: Math.abs(t.full) < m + MARGIN, covered: inside(fr ?? eq, t.full) };
    case 'better-at-equal-age':
    case 'faster-drift-not-ruled-out':
      return { right: t.equal < -m + MARGIN, covered: inside(eq, t.equal) };
    default: {
      const byEqual = !!eq && (c.state === 'worse' ? eq.low > 0 : eq.low > -m);
      const x = byEqual ? t.equal : t.full;
      const lo = (byEqual ? eq?.low : fr?.low) ?? Number.NEGATIVE_INFINITY;
      return { right: c.state === 'worse' ? x > 0 : x > -m - MARGIN, covered: x >= lo };
    }
  }
}

/**
 * A candidate's row: each claim scored against the run it names (the reference, or the leading
 * candidate that pruned it), so a provisional win against the reference is not judged by the truth
 * against the leader that later pruned it.
 */
function rowOf(
  fs: FamilyShape,
  seed: number,
  mode: FamilyRow['mode'],
  r: FamilyRun,
  runOf: (name: string | undefined) => FamilyRun,
  claims: Claim[],
  m: number,
): FamilyRow {
  const full = r.truth / runOf(claims.at(-1)?.decision.reference.name).truth - 1;
  const scored = claims.map((c) => {
    const against = runOf(c.decision.reference.name);
    return score(c, truthOf(c, r, against, r.truth / against.truth - 1), m);
  });
  const last = claims.at(-1);
  return {
    shape: fs.shape.name,
    seed,
    mode,
    factor: r.factor,
    trueChange: full,
    claims,
    decidedAt: claims[0]?.at ?? null,
    ranTo: last && last.state !== 'better-at-equal-age' ? last.at : FAMILY_HORIZON,
    right: scored.length ? scored.every((s) => s.right) : null,
    covered: scored.filter((s) => s.covered).length,
    claimsScored: scored.length,
    betterWhenNot: claims.some((c, i) => c.state === 'better' && !(scored[i] as { right: boolean }).right),
  };
}

let FAMILY_HORIZON = 120;

/** Every (shape, seed, reference path) experiment of the family, read by `reader` (the product's, or an oracle's). */
export function runFamily(
  seeds: readonly number[],
  options: DecideOptions,
  reader: ReaderOf = productReader,
  shapes: readonly FamilyShape[] = DECISION_SHAPES,
): FamilyRow[] {
  return shapes.flatMap((fs) => seeds.flatMap((seed) => experimentRows(fs, seed, options, reader)));
}

/** One experiment's runs: the reference beside the candidates, the one recorded a day before, the candidates. */
export function experimentRuns(fs: FamilyShape, seed: number) {
  const base = familyRun(fs, seed, 1, 'base');
  // the recorded reference ran at another time: on a wall-clock shape, at another phase of its slowdown
  const recorded = fs.shape.wallClock ? familyRun(fs, seed, 1, 'recorded', 7 + 13 * seed) : base;
  const cands = FACTORS.map((f) => familyRun(fs, seed, f, `x${f.toFixed(2)}`));
  return { base, recorded, cands };
}

/** One experiment decided against each reference path in `modes`, its rows scored on the claims' own sides. */
export function experimentRows(
  fs: FamilyShape,
  seed: number,
  options: DecideOptions,
  reader: ReaderOf,
  modes: ReadonlyArray<FamilyRow['mode']> = ['recorded', 'concurrent'],
): FamilyRow[] {
  const m = options.minImprovement ?? EXPERIMENT_DEFAULTS.minImprovement;
  FAMILY_HORIZON = options.maxDecisionMinutes ?? EXPERIMENT_DEFAULTS.maxDecisionMinutes;
  const { base, recorded: recordedRun, cands } = experimentRuns(fs, seed);
  const o = {
    inFlight: fs.shape.inFlight,
    stepMinutes: FAMILY.scrapeMinutes,
    runEnd: FAMILY.end,
    ...(fs.shape.suite ? { suite: fs.shape.suite } : {}),
  };
  const readers = new Map(cands.map((r) => [r.name, reader(r, o)]));
  const read = (r: FamilyRun, minute: number) => (readers.get(r.name) as EstimateReader).at(minute);
  const stop = fs.referenceStopsAt !== undefined ? { stopAt: fs.referenceStopsAt } : {};
  const rows: FamilyRow[] = [];
  for (const mode of modes) {
    const ref =
      mode === 'recorded'
        ? reader(recordedRun, {
            ...o,
            ...(fs.referenceStopsAt !== undefined ? stop : { stopAt: FAMILY.end }),
            startedAt: -86_400,
          })
        : reader(base, { ...o, ...stop });
    const refAt: ReferenceAt =
      mode === 'recorded' ? () => ref.at(FAMILY.end) : (minute, stopAt) => ref.at(minute, stopAt);
    const { claims } = decideGroup(cands, read, refAt, options, mode === 'concurrent');
    const refRun = mode === 'recorded' ? recordedRun : base;
    // a claim is against the reference, or the leading candidate that pruned it
    const runOf = (name: string | undefined) => cands.find((c) => c.name === name) ?? refRun;
    for (const r of cands) rows.push(rowOf(fs, seed, mode, r, runOf, claims.get(r.name) as Claim[], m));
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
  /** GPU-minutes per candidate a provisional winner ran past its first claim (the next round's reference's). */
  provisionalExtra: number;
}

/** The figures of a set of rows: a candidate is charged to its first claim (undecided: the horizon). */
export function figures(rows: readonly FamilyRow[], horizon: number): FamilyFigures {
  const decided = rows.filter((r) => r.decidedAt !== null);
  const t = decided.map((r) => r.decidedAt as number);
  const gpu = rows.reduce((a, r) => a + FAMILY.gpus * (FAMILY.startup + (r.decidedAt ?? horizon)), 0);
  const scored = rows.reduce((a, r) => a + r.claimsScored, 0);
  const extra = decided.reduce((a, r) => a + FAMILY.gpus * Math.max(0, r.ranTo - (r.decidedAt as number)), 0);
  return {
    median: t.length ? median(t) : Number.NaN,
    worst: t.length ? Math.max(...t) : Number.NaN,
    gpuPerDecided: gpu / Math.max(1, decided.length),
    wrong: decided.filter((r) => r.right === false).length,
    betterWhenNot: rows.filter((r) => r.betterWhenNot).length,
    n: rows.length,
    coverage: rows.reduce((a, r) => a + r.covered, 0) / Math.max(1, scored),
    undecided: rows.length - decided.length,
    bigWrong: decided.filter((r) => Math.abs(r.trueChange) >= 0.05 && r.right === false).length,
    provisionalExtra: extra / Math.max(1, rows.length),
  };
}

const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '—');
const num = (x: number) => (Number.isFinite(x) ? String(Math.round(x * 10) / 10) : '—');
const ci = (i: { value: number; low: number; high: number } | null | undefined) =>
  i ? `${pct(i.value)} [${pct(i.low)}, ${pct(i.high)}]` : '—';

/** Per shape and reference path: decisions, coverage of the claims on their own side, the bounds' costs. */
export function printFamily(
  rows: readonly FamilyRow[],
  bounds: { fair: readonly FamilyRow[]; same: readonly FamilyRow[] },
  horizon: number,
): FamilyFigures {
  console.log(
    '\n| shape | reference | candidates | decided | median / worst run-min | coverage (claims) | wrong (better-when-not) | undecided at horizon | GPU-min per decided | fair bound | same-knowledge bound |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  const shapes = [...new Set(rows.map((r) => r.shape))];
  for (const s of shapes)
    for (const mode of ['recorded', 'concurrent'] as const) {
      const pick = (xs: readonly FamilyRow[]) => xs.filter((r) => r.shape === s && r.mode === mode);
      const xs = pick(rows);
      const f = figures(xs, horizon);
      const [b, b0] = [figures(pick(bounds.fair), horizon), figures(pick(bounds.same), horizon)];
      const claims = xs.reduce((a, r) => a + r.claimsScored, 0);
      console.log(
        `| ${s} | ${mode} | ${xs.length} | ${xs.length - f.undecided} | ${num(f.median)} / ${num(f.worst)} | ${pct(f.coverage)} of ${claims} | ${f.wrong} (${f.betterWhenNot}) | ${f.undecided} | ${Math.round(f.gpuPerDecided)} | ${Math.round(b.gpuPerDecided)} | ${Math.round(b0.gpuPerDecided)} |`,
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
    const states = new Map<string, number>();
    for (const r of rows.filter((x) => x.factor === f)) {
      const k = r.claims.map((c) => c.state).join('→') || 'none';
      states.set(k, (states.get(k) ?? 0) + 1);
    }
    return `×${f.toFixed(2)} ${[...states].map(([k, v]) => `${k} ${v}`).join(', ')}`;
  });
  console.log(`\nby candidate: ${byFactor.join('; ')}`);
  console.log(
    `lowest coverage on a shape: ${pct(Math.min(...perShape))} (${shapes[perShape.indexOf(Math.min(...perShape))]}); wrong among candidates ≥ 5% off: ${all.bigWrong}; provisional winners ran on ${Math.round(all.provisionalExtra)} GPU-min per candidate past their first claim (charged to the next round's reference)`,
  );
  const wrong = rows.filter((r) => r.right === false);
  if (wrong.length)
    console.log(
      `wrong: ${wrong
        .slice(0, 12)
        .map(
          (r) =>
            `${r.shape}/${r.mode}/s${r.seed}/×${r.factor} ${r.claims.map((c) => `${c.state}${c.decision.reference.name === 'baseline' ? '' : ` (vs ${c.decision.reference.name})`}@${c.at} ${ci(c.decision.relative_change)} full ${ci(c.decision.full_run?.change)}`).join(' → ')} (truth ${pct(r.trueChange)})`,
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
  const active = activeSamples(r.events, step, FAMILY.end);
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
    pts.active.push([ts, active[Math.round(t / step)]?.v ?? s.inFlight]);
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

// ── Rounds (issue 38 item 8): a baseline, then two rounds, charged as the product charges them ─────

/** The shapes the rounds mode runs on. */
export const ROUND_SHAPES: FamilyShape[] = DECISION_SHAPES.filter((s) =>
  ['plain', 'per-scene', 'candidate-drift-10%/h', 'few-slow-workers'].includes(s.shape.name),
);

/** Candidates of a round, as factors of the current best. */
const ROUND_FACTORS = [
  [0.9, 1, 1.05],
  [0.95, 1, 1.03],
] as const;

export interface RoundFigures {
  shape: string;
  seed: number;
  /** GPU-minutes per round: its candidates to their stops and its reference job while a decision read it. */
  gpu: [number, number];
  outcomes: string[];
}

/** A run of a round: a candidate at `factor` × the base speed, on its own seed. */
/** A candidate of a round, or a job of the baseline (on a candidate-drift shape it keeps still, as the family's does). */
function roundRun(fs: FamilyShape, seed: number, round: number, factor: number, baseline = false): FamilyRun {
  return familyRun(fs, seed + 100 * round, factor, baseline ? 'base' : `r${round}-x${factor.toFixed(3)}`);
}

/**
 * The baseline and two rounds through the product's decision path. Round 1's candidates start with a
 * baseline job beside them. A round ends when none of its candidates is still `measuring`; its
 * provisional or decided winner (the fastest at equal age) runs on as round 2's reference, its minutes
 * from then charged to round 2 (without one, round 2 gets a fresh job of the best beside it). A
 * reference job runs while any candidate's decision still reads it (measuring or provisional).
 */
export function runRounds(
  seeds: readonly number[],
  options: DecideOptions,
  shapes: readonly FamilyShape[],
): RoundFigures[] {
  const out: RoundFigures[] = [];
  for (const fs of shapes)
    for (const seed of seeds) {
      const o = { inFlight: fs.shape.inFlight, stepMinutes: FAMILY.scrapeMinutes, runEnd: FAMILY.end };
      const r1 = roundOf(fs, seed, 1, 1, { run: roundRun(fs, seed, 0, 1, true), offset: 0 }, o, options);
      const best = r1.winner ?? { run: roundRun(fs, seed, 2, 1, true), offset: 0 };
      const r2 = roundOf(fs, seed, 2, best.run.factor, best, o, options);
      out.push({
        shape: fs.shape.name,
        seed,
        gpu: [r1.gpu, r2.gpu],
        outcomes: [...r1.outcomes, ...r2.outcomes],
      });
    }
  return out;
}

interface RoundReference {
  run: FamilyRun;
  /** Run-minutes it had already run when the round started (a winner of the previous round). */
  offset: number;
}

function roundOf(
  fs: FamilyShape,
  seed: number,
  round: 1 | 2,
  bestFactor: number,
  ref: RoundReference,
  o: ReaderOptions,
  options: DecideOptions,
): { gpu: number; winner: RoundReference | null; outcomes: string[] } {
  const cands = (ROUND_FACTORS[round - 1] as readonly number[]).map((f) =>
    roundRun(fs, seed, round, f * bestFactor),
  );
  const readers = new Map(cands.map((r) => [r.name, estimateReader(r.events, o)]));
  const refReader = estimateReader(ref.run.events, { ...o, startedAt: -60 * ref.offset });
  // the round's reference runs beside its candidates and stops as the product stops it
  const d = decideGroup(
    cands,
    (r, m) => (readers.get(r.name) as EstimateReader).at(m),
    (m, stopAt) => refReader.at(m + ref.offset, stopAt === undefined ? undefined : stopAt + ref.offset),
    options,
    true,
  );
  // the round ends when no candidate still measures; its winner runs on from there as the next reference
  const lastFirst = Math.max(...cands.map((r) => d.claims.get(r.name)?.[0]?.at ?? d.openUntil));
  const charged = (r: FamilyRun) => Math.min(d.stopped.get(r.name) ?? d.openUntil, lastFirst);
  const gpu =
    FAMILY.gpus *
    (cands.reduce((a, r) => a + FAMILY.startup + charged(r), 0) +
      (ref.offset ? 0 : FAMILY.startup) +
      (d.referenceStop ?? d.openUntil));
  const winners = cands.filter((r) =>
    ['better', 'better-at-equal-age', 'faster-drift-not-ruled-out'].includes(
      d.claims.get(r.name)?.at(-1)?.state ?? '',
    ),
  );
  winners.sort((a, b) => a.factor - b.factor);
  const outcomes = cands.map(
    (r) =>
      `r${round} ×${(r.factor / bestFactor).toFixed(2)} ${(d.claims.get(r.name) ?? []).map((c) => `${c.state}@${c.at}`).join('→') || 'none'}`,
  );
  return { gpu, winner: winners[0] ? { run: winners[0], offset: lastFirst } : null, outcomes };
}

/**
 * The verdict's `stable` on the family (observeRun, the core of `topo analyze`, every 5 run-minutes
 * to the horizon): when it first comes, whether its value's interval covers the run's full-run truth
 * (drifting runs included), and which claim it makes (the full-run value, or the weaker steady rate
 * with a drift bound); the median of its first run-minute over the runs called stable.
 */
export function stableFigures(seeds: readonly number[], shapes: readonly FamilyShape[] = DECISION_SHAPES) {
  const startUnix = 1_700_000_000;
  const firstStable: number[] = [];
  const fullRun: number[] = [];
  let [never, covered, driftingStable] = [0, 0, 0];
  for (const fs of shapes)
    for (const seed of seeds)
      for (const [k, f] of [1, ...FACTORS].entries()) {
        const r = familyRun(fs, seed, f, k === 0 ? 'base' : `x${f.toFixed(2)}`);
        const v = firstStableVerdict(r, fs, startUnix);
        if (!v) {
          never++;
          continue;
        }
        firstStable.push(v.minute);
        if (v.verdict.stable_claim?.kind === 'full-run') fullRun.push(v.minute);
        if (r.drift !== 0) driftingStable++;
        const i = v.verdict.value;
        if (i && i.low <= r.truth && r.truth <= i.high) covered++;
      }
  return {
    median: firstStable.length ? median(firstStable) : Number.NaN,
    fullRunMedian: fullRun.length ? median(fullRun) : Number.NaN,
    fullRunClaims: fullRun.length,
    stable: firstStable.length,
    coverage: covered / Math.max(1, firstStable.length),
    never,
    driftingStable,
  };
}

/** The run's first `stable` verdict within the horizon (every 5 run-minutes), or null. */
function firstStableVerdict(r: FamilyRun, fs: FamilyShape, startUnix: number) {
  const series = seriesOf(r, startUnix);
  for (let minute = 10; minute <= 120; minute += 5) {
    const cut = startUnix + minute * 60;
    const s: RunSeries = {};
    for (const [q, xs] of Object.entries(series))
      s[q] = (xs ?? []).map((x) => ({ ...x, points: x.points.filter((p) => p[0] <= cut) }));
    const verdict = observeRun({
      runName: r.name,
      series: s,
      timeScale: 1,
      nowTs: cut,
      stepSeconds: 60 * FAMILY.scrapeMinutes,
      inFlight: fs.shape.inFlight,
      ...(fs.shape.suite ? { expectedRollouts: fs.shape.suite } : {}),
      trajectory: false,
    }).observation.verdict;
    if (verdict.state === 'stable') return { minute, verdict };
  }
  return null;
}
