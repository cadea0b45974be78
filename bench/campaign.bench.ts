// The campaign bench (printed, not asserted; it prints the goals it misses): what a whole campaign
// costs, from the baseline to the concluded best, in GPU-hours and wall-clock hours, for five
// methods on the same runs, the same budget and, where they decide, the same decision functions.
//
// For every twin profile (the shipped hardware profiles and bench/profiles/*.yaml, which no test
// uses, some with effects the predictor's model cannot express):
//  1. the ground truth: the best topology of the bounded space (bench/campaign/space.ts) by
//     exhaustive twin steady state;
//  2. per seed, one world (bench/campaign/sim.ts): every run a trace-family trace with the twin's
//     steady value as its truth, decided look by look by the monitor's functions (decide.ts);
//  3. the five methods (methods.ts, optuna.ts): topo (the project: src/campaign/rounds.ts + suggest
//     with predictions), the seed's rule by hand, random + decisions, ASHA, Optuna;
//  4. per method: GPU-hours per right conclusion (mean spent ÷ share of campaigns whose concluded
//     answer is within 2% of the space's best) with its 90% interval over seeds, GPU-hours and
//     wall-clock hours to within 2%, OOM runs after the baseline; for topo the prediction error of the
//     proposals made after the baseline alone; beside them the noise-aware floor (bound.ts).
// It ends each profile with one line a script reads:
//   campaign <profile>: topo G GPU-h per right (right R%), manual G1, random G2, asha G3,
//   optuna G4|absent, floor F, oom-runs N, prediction-error E% (coverage C%)
//
// Run: npm run bench -- campaign (CAMPAIGN_QUICK=1: 4 seeds, shipped profiles only, for development;
// CAMPAIGN_SEEDS=N seeds (default 20, from CAMPAIGN_SEED0, default 100: seeds never tuned on);
// CAMPAIGN_PROFILE=<name|file.yaml>; CAMPAIGN_LOOK=<run-minutes between looks> (default 5, the
// monitor's pass); CAMPAIGN_METHODS=topo,manual,random,asha,optuna; CAMPAIGN_PROMETHEUS=0|1: the
// check of the in-memory series against a real Prometheus on a few runs, on by default but in quick
// mode; CAMPAIGN_STRICT=1: exit non-zero unless every goal is MET). About 20 minutes on one core
// with 20 seeds; quick mode about 2.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { DEFAULT_POLICY } from '../src/campaign/rounds.js';
import { repoRoot } from '../src/sim/profile.js';
import { expandPreset } from '../src/topology/expand.js';
import type { Topology } from '../src/types/generated/topology.js';
import type { TwinProfile } from '../src/types/generated/twin-profile.js';
import { noiseAwareFloor } from './campaign/bound.js';
import {
  type Goal,
  judgeGoals,
  type ProfileFigures,
  perRight,
  perRightInterval,
  strictExitCode,
  summaryLine,
} from './campaign/goals.js';
import {
  ashaCampaign,
  type Context,
  type MethodResult,
  manualCampaign,
  randomCampaign,
  topoCampaign,
} from './campaign/methods.js';
import { ensureOptuna, OPTUNA_MISSING, optunaCampaign } from './campaign/optuna.js';
import { prometheusCheck } from './campaign/prometheus-check.js';
import { MAX_MINUTES, World } from './campaign/sim.js';
import {
  benchProfiles,
  describePoint,
  groundTruth,
  MEMORY_LINE,
  type Point,
  pointKey,
} from './campaign/space.js';

const QUICK = process.env.CAMPAIGN_QUICK === '1';
const SEEDS = Number(process.env.CAMPAIGN_SEEDS ?? (QUICK ? 4 : 20));
const SEED0 = Number(process.env.CAMPAIGN_SEED0 ?? 100);
const LOOK = Number(process.env.CAMPAIGN_LOOK ?? 5);
const BUDGET = 120; // GPU-hours, every method
const WITHIN = 0.02;
const METHODS = (process.env.CAMPAIGN_METHODS ?? 'topo,manual,random,asha,optuna').split(',');
// CAMPAIGN_REFERENCE_PRECISION: the reference's precision (± of its projection) before a round starts
// against it; the policy's default unless set (for studying its cost).
const POLICY = {
  ...DEFAULT_POLICY,
  ...(process.env.CAMPAIGN_REFERENCE === 'measured-first' ? { reference: 'measured-first' as const } : {}),
  ...(process.env.CAMPAIGN_REFERENCE_PRECISION
    ? { referencePrecision: Number(process.env.CAMPAIGN_REFERENCE_PRECISION) }
    : {}),
};
const BASE_POINT: Point = { renderer: 0, driver: 8, physics: 4, total: 64, workers: 8 };

interface Row {
  reached: { gpuHours: number; wallHours: number } | null;
  right: boolean;
  oomAfterBaseline: number;
  spent: number;
  /** GPU-hours of candidates held to the decision horizon. */
  horizon: number;
  rounds: number;
  stop: string;
  predictions: MethodResult['predictions'];
}

const median = (xs: number[]) => {
  if (!xs.length) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '—');
const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '—');

function summarise(result: MethodResult, optimum: number): Row {
  const reached = result.ledger.reached(optimum, WITHIN);
  const final = result.ledger.final();
  return {
    reached: reached ? { gpuHours: reached.gpuHours, wallHours: reached.at / 60 } : null,
    right: !!final && final.seconds <= optimum * (1 + WITHIN),
    // the baseline's jobs (its first run and a rerun after a crash) are not later runs
    oomAfterBaseline: result.ledger.oomAfterBaseline(),
    spent: result.ledger.total(),
    horizon: result.ledger.horizonGpuHours(),
    rounds: result.rounds,
    stop: result.stopReason,
    predictions: result.predictions,
  };
}

/** GPU-hours to within 2% per seed; a campaign that never got there counts what it spent (a lower bound). */
function costTo(rows: Row[]): { values: number[]; missed: number } {
  return {
    values: rows.map((r) => r.reached?.gpuHours ?? r.spent),
    missed: rows.filter((r) => !r.reached).length,
  };
}

interface ProfileRows {
  rows: Record<string, Row[]>;
  floor: number[];
  methodSeconds: Record<string, number>;
}

/** Every method's campaigns on one profile, one world per seed; and the noise-aware floor per seed. */
async function runProfile(
  profile: TwinProfile,
  base: Topology,
  optimum: { seconds: number; point: Point },
  seeds: number[],
  optuna: string | null,
  root: string,
  log: (s: string) => void,
): Promise<ProfileRows> {
  const rows: Record<string, Row[]> = {};
  const floor: number[] = [];
  const methodSeconds: Record<string, number> = {};
  for (const seed of seeds) {
    const ctx: Context = {
      world: new World(profile, seed),
      base,
      basePoint: BASE_POINT,
      policy: POLICY,
      cluster: {
        gpusPerNode: profile.gpu.count,
        gpuMemoryGiB: profile.gpu.memory_gb,
        cpusPerNode: profile.cpu.cores,
      },
      budget: BUDGET,
      look: LOOK,
      experimentId: 'topology-opt-bench-twin-20261202',
      ...(process.env.CAMPAIGN_DEBUG ? { debug: log } : {}),
    };
    const runs: Array<[string, () => Promise<MethodResult> | MethodResult]> = [
      ['topo', () => topoCampaign(ctx)],
      ['manual', () => manualCampaign(ctx)],
      ['random', () => randomCampaign(ctx)],
      ['asha', () => ashaCampaign(ctx)],
      ...(optuna
        ? ([['optuna', () => optunaCampaign(ctx, root)]] as Array<[string, () => Promise<MethodResult>]>)
        : []),
    ];
    for (const [method, go] of runs) {
      if (!METHODS.includes(method)) continue;
      const tm = Date.now();
      const result = await go();
      methodSeconds[method] = (methodSeconds[method] ?? 0) + (Date.now() - tm) / 1000;
      rows[method] = [...(rows[method] ?? []), summarise(result, optimum.seconds)];
      if (process.env.CAMPAIGN_DEBUG)
        log(
          `  seed ${seed} ${method}: ${result.ledger.incumbent.map((i) => `${i.name}@${Math.round(i.at)}=${i.seconds.toFixed(3)}`).join(' → ')} | ${result.stopReason} | spent ${result.ledger.total().toFixed(1)} GPU-h`,
        );
    }
    floor.push(noiseAwareFloor(ctx, optimum.point, WITHIN));
  }
  return { rows, floor, methodSeconds };
}

/** The methods' table: GPU-hours per right conclusion (its 90% interval over seeds) first. */
function methodTable(rows: Record<string, Row[]>, log: (s: string) => void): Record<string, number> {
  log(
    '| method | GPU-h per right conclusion [90% over seeds] | concluded within 2% | GPU-h spent (median / worst) | GPU-h to within 2% (median / worst) | wall-clock h to within 2% (median) | OOM runs after the baseline | rounds (median) |',
  );
  log('|---|---|---|---|---|---|---|---|');
  const per: Record<string, number> = {};
  for (const method of ['topo', 'manual', 'random', 'asha', 'optuna']) {
    const rs = rows[method];
    if (!rs) {
      if (method === 'optuna' && METHODS.includes('optuna'))
        log(`| optuna | absent (${OPTUNA_MISSING}) | | | | | | |`);
      continue;
    }
    const spent = rs.map((r) => r.spent);
    const right = rs.map((r) => r.right);
    per[method] = perRight(spent, right);
    const i = perRightInterval(spent, right);
    const c = costTo(rs);
    const wall = rs.map((r) => r.reached?.wallHours ?? Number.POSITIVE_INFINITY);
    log(
      `| ${method} | ${f1(per[method]!)} [${f1(i.low)}, ${f1(i.high)}] | ${pct(right.filter(Boolean).length / rs.length)} | ${f1(median(spent))} / ${f1(Math.max(...spent))} | ${f1(median(c.values))} / ${f1(Math.max(...c.values))}${c.missed ? ` (${c.missed} never)` : ''} | ${f1(median(wall))} | ${rs.reduce((a, r) => a + r.oomAfterBaseline, 0)} | ${f1(median(rs.map((r) => r.rounds)))} |`,
    );
  }
  return per;
}

/** The prediction error of topo's proposals after the baseline alone (and later rounds beside it). */
function predictionFigures(topo: Row[], log: (s: string) => void): { error: number; coverage: number } {
  const first = topo.flatMap((r) => r.predictions.filter((p) => p.round === 1));
  const later = topo.flatMap((r) => r.predictions.filter((p) => p.round > 1));
  const err = (ps: typeof first) => median(ps.map((p) => Math.abs(p.predicted / p.truth - 1)));
  const cov = (ps: typeof first) =>
    ps.filter((p) => p.low <= p.truth && p.truth <= p.high).length / ps.length;
  const worst = Math.max(...first.map((p) => Math.abs(p.predicted / p.truth - 1)));
  log(
    `\npredictions after the baseline alone: ${first.length} proposals, |error| median ${pct(err(first))} (worst ${pct(worst)}), ${pct(cov(first))} inside their 90% interval; later rounds: ${later.length}, median ${pct(err(later))}, coverage ${pct(cov(later))}`,
  );
  return { error: err(first), coverage: cov(first) };
}

/** One profile: truth, campaigns, table, floor, summary line and goals. */
async function profileReport(
  entry: { name: string; profile: TwinProfile; shipped: boolean },
  base: Topology,
  seeds: number[],
  optuna: string | null,
  root: string,
  log: (s: string) => void,
): Promise<{ line: string; goals: Goal[] }> {
  const { name, profile, shipped } = entry;
  const tp = Date.now();
  const truth = groundTruth(base, profile);
  const baseTruth = truth.steady.get(pointKey(BASE_POINT))!;
  log(`## ${name}${shipped ? '' : ' (bench only)'}\n`);
  log(
    `space best ${truth.optimum.toFixed(3)} s/rollout (${describePoint(truth.optimumPoint)}); ${truth.admissible} of ${truth.points.length} topologies within ${pct(MEMORY_LINE)} GPU memory (the line the project proposes under; the best within 90%: ${truth.optimum90.toFixed(3)}${truth.optimum90 < truth.optimum - 1e-9 ? `, ${pct(truth.optimum / truth.optimum90 - 1)} faster, above it` : ', the same'}); baseline ${baseTruth.oom ? 'runs out of GPU memory' : `${baseTruth.secondsPerRollout.toFixed(3)} s/rollout (${pct(baseTruth.secondsPerRollout / truth.optimum - 1)} above)`}; ${(Date.now() - tp) / 1000} s exhaustive`,
  );
  const optimum = { seconds: truth.optimum, point: truth.optimumPoint };
  const { rows, floor, methodSeconds } = await runProfile(profile, base, optimum, seeds, optuna, root, log);
  log('');
  const per = methodTable(rows, log);
  const topo = rows.topo ?? [];
  const prediction = predictionFigures(topo, log);
  log(
    `beside the figures: the noise-aware floor (told the best topology, the baseline and the best run beside each other until the monitor's decision; a bound of the problem under these decisions, not of a method) median ${f1(median(floor))} GPU-h (worst ${f1(Math.max(...floor))})`,
  );
  const held = (rs: Row[] | undefined) =>
    rs?.length ? pct(rs.reduce((a, r) => a + r.horizon, 0) / rs.reduce((a, r) => a + r.spent, 0)) : '—';
  log(
    `GPU-hours on candidates held to the horizon (${MAX_MINUTES} run-minutes without a decision before it): topo ${held(topo)}, random ${held(rows.random)}`,
  );
  const stops = [...new Set(topo.map((r) => r.stop.replace(/\d+(\.\d+)?/g, 'N').slice(0, 90)))];
  log(`topo stopped: ${stops.join(' | ')}`);
  log(
    `time per campaign: ${Object.entries(methodSeconds)
      .map(([m, s]) => `${m} ${(s / seeds.length).toFixed(1)} s`)
      .join(', ')}`,
  );
  const figures: ProfileFigures = {
    topo: per.topo ?? Number.NaN,
    manual: per.manual ?? Number.NaN,
    random: per.random,
    asha: per.asha,
    optuna: per.optuna,
    right: topo.length ? topo.filter((r) => r.right).length / topo.length : Number.NaN,
    oomRuns: topo.reduce((a, r) => a + r.oomAfterBaseline, 0),
    predictionError: prediction.error,
    coverage: prediction.coverage,
    floor: median(floor),
  };
  const line = summaryLine(name, figures);
  log(`\n${line}\n`);
  const goals = judgeGoals(figures);
  for (const g of goals) log(`${g.status} ${g.text}`);
  log('');
  return { line, goals };
}

async function main(): Promise<number> {
  const t0 = Date.now();
  const root = repoRoot(process.env.TOPO_REPO_ROOT ?? process.cwd());
  const log = (s: string) => console.log(s);
  const base = expandPreset(
    parse(readFileSync(join(root, 'topologies/presets/8gpu_64rollouts.yaml'), 'utf8')) as Topology,
  );
  const optuna = METHODS.includes('optuna') ? ensureOptuna(log) : null;
  if (METHODS.includes('optuna'))
    log(optuna ? `optuna: ${optuna} (TPE sampler, Hyperband pruner)` : OPTUNA_MISSING);
  const seeds = [...Array(SEEDS).keys()].map((i) => SEED0 + i);
  log(
    `campaign bench: baseline 8gpu_64rollouts; ${seeds.length} seeds (${seeds[0]}-${seeds.at(-1)}); looks every ${LOOK} run-minute(s); budget ${BUDGET} GPU-hours per campaign; policy: parallel ${POLICY.parallel}, min_improvement ${pct(POLICY.minImprovement)}, stop after ${POLICY.stopAfter} rounds without a decided gain, ${POLICY.reference === 'measured-first' ? `a reference measured to ±${pct(POLICY.referencePrecision)} first` : "each round's reference beside its candidates while its decisions need it"}; target: within ${pct(WITHIN)} of the space's best; yardstick: GPU-hours per right conclusion (spent ÷ share within ${pct(WITHIN)}).\n`,
  );
  // the in-memory path against a real Prometheus, on a few runs (not in quick mode)
  if (process.env.CAMPAIGN_PROMETHEUS ? process.env.CAMPAIGN_PROMETHEUS === '1' : !QUICK)
    await prometheusCheck(base, root, log);
  const profiles = benchProfiles(root, process.env.CAMPAIGN_PROFILE).filter(
    (p) => !QUICK || p.shipped || process.env.CAMPAIGN_PROFILE,
  );
  const lines: string[] = [];
  const goals: Array<Goal & { profile: string }> = [];
  for (const entry of profiles) {
    const r = await profileReport(entry, base, seeds, optuna, root, log);
    lines.push(r.line);
    goals.push(...r.goals.map((g) => ({ ...g, profile: entry.name })));
  }
  log('## Goals\n');
  for (const g of goals) log(`- ${g.profile}: ${g.status} ${g.text}`);
  log('');
  for (const l of lines) log(l);
  log(`\ncampaign bench: ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  const missed = goals.filter((g) => g.status !== 'MET').length;
  log(
    `goals: ${goals.length - missed} of ${goals.length} met${missed ? `, ${missed} missed or unknown` : ''}`,
  );
  return strictExitCode(goals, process.env.CAMPAIGN_STRICT === '1');
}

process.exitCode = await main();
