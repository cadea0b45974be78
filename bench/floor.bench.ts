// The floor's oracle (issue 43 item 3): how few GPU-hours could a method spend and still conclude
// right ≥ 95% of the time? An oracle is told the space's best topology (no method is) and runs only it
// and the baseline, beside each other, with no incident, for t run-minutes each, then concludes the
// faster of the two by its readings alone (no min_improvement to clear, no interval, no search).
//
// "Right" is scored on the twin's steady seconds per rollout (goals.ts), so a valid oracle reads an
// estimate of that value. It prints its own error (bias and RMS of the estimate against the truth),
// which must fall with data, and its wrong share per t, with a 95% upper bound over the seeds. Beside
// it, for contrast, the oracle by the detector's projected full run: that reading includes the start-up
// (a longer first wave with more rollouts in flight), so it converges to another quantity than the one
// scored, and its errors grow with data when that start-up differs by more than the gap.
//
// Two more checks, so the oracle itself can be judged:
//  - the world's own rate: each run's long-run seconds per rollout as its trace produces it (minutes
//    120-1200), against the scored truth. Where the world orders the two the other way (a cycle whose
//    period is near the rollout's duration locks the slots onto its slow phase), no reading of the
//    runs can be right: that is the bench's world, not the problem;
//  - the information bound: an estimator knowing the noise model (log-normal per rollout, σ the
//    shape's jitter, 3σ on noisy workers) gets at most one rollout's information per rollout completed
//    or in flight by t (≤ 60 t ÷ s + in flight), so its relative error is ≥ σ_eff ÷ √n per run, and it
//    decides the sign of the gap wrong at least Φ(−gap ÷ (its error of the difference)) of the time.
//
// Run: FLOOR_PROFILE=twin-driver-bound FLOOR_SEEDS=20 FLOOR_SEED0=200 npm run bench -- floor
// (FLOOR_PROFILE: a comma list; default the shipped profiles).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from '../src/sim/profile.js';
import { expandPreset } from '../src/topology/expand.js';
import type { Verdict } from '../src/types/generated/metrics.js';
import type { Topology } from '../src/types/generated/topology.js';
import type { TwinProfile } from '../src/types/generated/twin-profile.js';
import { clean } from './campaign/bound.js';
import { modelEstimate, phi } from './campaign/oracle.js';
import { GPUS, type SimRun, STARTUP, World } from './campaign/sim.js';
import { benchProfiles, build, groundTruth } from './campaign/space.js';
import { completions } from './trace-family.js';

const SEEDS = Number(process.env.FLOOR_SEEDS ?? 20);
const SEED0 = Number(process.env.FLOOR_SEED0 ?? 200);
const WITHIN = 0.02;
const MINUTES = [10, 15, 20, 25, 30, 40, 45, 50, 60, 75, 90, 120];

/** What an oracle reads of a run at a look: the steady estimate (what is scored) or the full-run projection. */
const VERDICT_READINGS = {
  steady: (v: Verdict) => v.steady_seconds_per_rollout?.value ?? undefined,
  projection: (v: Verdict) => v.projected_full_run?.value ?? undefined,
} as const;
const READINGS = ['model', 'steady', 'projection'] as const;
type Reading = (typeof READINGS)[number];

/** A run's reading at run-minute t: the model-aware estimate, or the monitor's verdict's. */
function readingOf(world: World, r: SimRun, t: number, reading: Reading): number | undefined {
  if (reading === 'model') return modelEstimate(world, r, t);
  return VERDICT_READINGS[reading](world.verdict(r, t));
}

/** The one-sided 95% upper bound of a share k of n (Clopper-Pearson, by bisection on the binomial tail). */
export function upper95(k: number, n: number): number {
  if (k >= n) return 1;
  const tail = (p: number) => {
    let sum = 0;
    let term = (1 - p) ** n;
    for (let i = 0; i <= k; i++) {
      sum += term;
      term *= ((n - i) / (i + 1)) * (p / (1 - p));
    }
    return sum;
  };
  let lo = k / n;
  let hi = 1;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (tail(mid) > 0.05) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** A run's long-run seconds per rollout as the world's trace produces it, relative to the scored truth. */
function worldBias(world: World, r: SimRun): number {
  const events = completions({ ...world.spec(r), endMinutes: 1200 }).filter(
    (e) => e.t > 120 && e.t <= 1200 && !e.failed,
  );
  return (1080 * 60) / events.length / r.truth.secondsPerRollout - 1;
}

/** The least relative error of any estimate of a run's steady value from its rollouts up to minute t. */
function infoError(world: World, r: SimRun, t: number): number {
  const s = world.shape;
  const n = (60 * t) / r.truth.secondsPerRollout + r.inFlight;
  const noisy = Math.min(r.shape.workers, s.noisyWorkers ?? 0) / r.shape.workers;
  const info = ((1 - noisy) / s.jitter ** 2 + noisy / (3 * s.jitter) ** 2) * n;
  return 1 / Math.sqrt(info);
}

interface Row {
  hours: number;
  wrong: Record<Reading, number>;
  unread: Record<Reading, number>;
  /** Wrong by each reading among seeds whose world orders the two as the truth does. */
  wrongAgreeing: Record<Reading, number>;
  errors: Record<Reading, number[]>;
  /** The information bound's least wrong share, summed over seeds. */
  infoWrong: number;
}

const perReading = <T>(f: () => T) => Object.fromEntries(READINGS.map((r) => [r, f()])) as Record<Reading, T>;
const emptyRow = (): Row => ({
  hours: 0,
  wrong: perReading(() => 0),
  unread: perReading(() => 0),
  wrongAgreeing: perReading(() => 0),
  errors: perReading(() => [] as number[]),
  infoWrong: 0,
});

interface Pair {
  world: World;
  base: SimRun;
  best: SimRun;
  optimum: number;
  /** The world orders the two as the scored truth does. */
  agrees: boolean;
}

/** One seed at one look: each reading's pick and its errors, and the information bound. */
function look(p: Pair, t: number, row: Row): void {
  const { world, base, best, optimum } = p;
  const gap = base.truth.secondsPerRollout / best.truth.secondsPerRollout - 1;
  for (const reading of READINGS) {
    const b = base.oom ? undefined : readingOf(world, base, t, reading);
    const o = readingOf(world, best, t, reading);
    if (b !== undefined) row.errors[reading].push(b / base.truth.secondsPerRollout - 1);
    if (o !== undefined) row.errors[reading].push(o / best.truth.secondsPerRollout - 1);
    // no reading yet of a run it must compare: no answer (counted wrong), never a default pick
    const unread = o === undefined || (!base.oom && b === undefined);
    if (unread) row.unread[reading]++;
    const pick = unread ? null : b === undefined || o! < b ? best : base;
    if (pick && pick.truth.secondsPerRollout <= (1 + WITHIN) * optimum) continue;
    row.wrong[reading]++;
    if (p.agrees) row.wrongAgreeing[reading]++;
  }
  const se = Math.hypot(infoError(world, base, t), infoError(world, best, t));
  row.infoWrong += base.oom ? 0 : phi(-gap / se);
  // each job: its start-up and t run-minutes (an out-of-memory baseline: its start-up only)
  row.hours += (GPUS * ((base.oom ? STARTUP : STARTUP + t) + STARTUP + t)) / 60 / SEEDS;
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const rms = (xs: number[]) => Math.sqrt(mean(xs.map((x) => x * x)));

function printRows(name: string, rows: Row[], disagreeing: number, gap: number): void {
  const n = SEEDS;
  const share = (k: number, of = n) =>
    `${k} of ${of} (${pct(k / Math.max(1, of))}, ≤ ${pct(upper95(k, of))})`;
  const cells = (r: Row, x: Reading) =>
    `${pct(mean(r.errors[x]))}, ${pct(rms(r.errors[x]))} | ${share(r.wrong[x])} (${r.unread[x]}) | ${share(r.wrongAgreeing[x], n - disagreeing)}`;
  console.log(
    `## ${name}: the oracle told the best (${n} seeds, ${SEED0}-${SEED0 + n - 1}); gap ${pct(gap)}\n`,
  );
  console.log(
    `Per reading: its bias and RMS error against the scored steady truth (both runs); the oracle's wrong share by it (unread: no reading yet), with a 95% upper bound; the same over the ${n - disagreeing} seeds whose world orders the two as the truth.\n`,
  );
  const heads = READINGS.map((x) => `${x}: bias, RMS | oracle by ${x}: wrong (unread) | same, world agrees`);
  console.log(`| run-minutes each | GPU-h | ${heads.join(' | ')} | information bound: least wrong |`);
  console.log(`|---|---|${READINGS.map(() => '---|---|---|').join('')}---|`);
  for (const [i, t] of MINUTES.entries()) {
    const r = rows[i]!;
    console.log(
      `| ${t} | ${r.hours.toFixed(1)} | ${READINGS.map((x) => cells(r, x)).join(' | ')} | ${pct(r.infoWrong / n)} |`,
    );
  }
  const first = (k: (r: Row) => number) => {
    const i = rows.findIndex((r) => k(r) <= 0.05 * n);
    return i < 0
      ? 'never within 120 run-minutes'
      : `${rows[i]!.hours.toFixed(1)} GPU-h (${MINUTES[i]} run-minutes each)`;
  };
  console.log('');
  for (const x of READINGS)
    console.log(`floor ${name}: the oracle by ${x} is right ≥ 95% from ${first((r) => r.wrong[x])}`);
  console.log(`floor ${name}: the information bound allows ≥ 95% right from ${first((r) => r.infoWrong)}\n`);
}

function printWorld(pairs: Pair[]): void {
  console.log('| seed | shape | world ÷ truth − 1: baseline | best | world orders them as the truth |');
  console.log('|---|---|---|---|---|');
  for (const p of pairs) {
    const wb = worldBias(p.world, p.base);
    const wo = worldBias(p.world, p.best);
    console.log(
      `| ${p.world.seed} | ${p.world.shape.name} | ${pct(wb)} | ${pct(wo)} | ${p.agrees ? 'yes' : '**no**'} |`,
    );
  }
  console.log('');
}

function profileRows(name: string, profile: TwinProfile, baseTopology: Topology): void {
  const truth = groundTruth(baseTopology, profile);
  const rows = MINUTES.map(emptyRow);
  const pairs: Pair[] = [];
  for (let seed = SEED0; seed < SEED0 + SEEDS; seed++) {
    const world = new World(profile, seed);
    const base = clean(world.run(baseTopology));
    const best = clean(world.run(build(baseTopology, truth.optimumPoint)));
    const worldOf = (r: SimRun) => r.truth.secondsPerRollout * (1 + worldBias(world, r));
    const agrees = base.oom || worldOf(best) < worldOf(base);
    const pair = { world, base, best, optimum: truth.optimum, agrees };
    pairs.push(pair);
    for (const [i, t] of MINUTES.entries()) look(pair, t, rows[i]!);
  }
  const gap = pairs[0]!.base.truth.secondsPerRollout / truth.optimum - 1;
  printRows(name, rows, pairs.filter((p) => !p.agrees).length, gap);
  printWorld(pairs);
}

const root = repoRoot(process.env.TOPO_REPO_ROOT ?? process.cwd());
const base = expandPreset(
  parse(readFileSync(join(root, 'topologies/presets/8gpu_64rollouts.yaml'), 'utf8')) as Topology,
);
const wanted = (process.env.FLOOR_PROFILE ?? '').split(',').filter(Boolean);
const all = wanted.length
  ? wanted.flatMap((w) => benchProfiles(root, w))
  : benchProfiles(root).filter((p) => p.shipped);
for (const p of all) profileRows(p.name, p.profile, base);
