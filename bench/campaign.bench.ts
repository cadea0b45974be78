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
//  4. per method, median and worst over the seeds: GPU-hours and wall-clock hours until its answer is
//     within 2% of the space's best, the share of campaigns whose concluded answer is, OOM runs after
//     the baseline; for topo the prediction error of the proposals made after the baseline alone.
// It ends each profile with one line a script reads:
//   campaign <profile>: topo G GPU-h (right R%), manual G1, random G2, asha G3, optuna G4|absent,
//   oom-runs N, prediction-error E% (coverage C%)
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
import { informationFloor, knownBestCost } from './campaign/bound.js';
import { type Goal, judgeGoals, strictExitCode, summaryLine } from './campaign/goals.js';
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
import { World } from './campaign/sim.js';
import { benchProfiles, describePoint, groundTruth, type Point, pointKey } from './campaign/space.js';

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
    `campaign bench: baseline 8gpu_64rollouts; ${seeds.length} seeds (${seeds[0]}-${seeds.at(-1)}); looks every ${LOOK} run-minute(s); budget ${BUDGET} GPU-hours per campaign; policy: parallel ${POLICY.parallel}, min_improvement ${pct(POLICY.minImprovement)}, stop after ${POLICY.stopAfter} rounds without a decided gain, a reference measured to ±${pct(POLICY.referencePrecision)}; target: within ${pct(WITHIN)} of the space's best.\n`,
  );
  // the in-memory path against a real Prometheus, on a few runs (not in quick mode)
  if (process.env.CAMPAIGN_PROMETHEUS ? process.env.CAMPAIGN_PROMETHEUS === '1' : !QUICK)
    await prometheusCheck(base, root, log);
  const profiles = benchProfiles(root, process.env.CAMPAIGN_PROFILE).filter((p) => !QUICK || p.shipped);
  const lines: string[] = [];
  const goals: Goal[] = [];
  const goalLines: string[] = [];
  for (const { name, profile, shipped } of profiles) {
    const tp = Date.now();
    const truth = groundTruth(base, profile);
    const baseTruth = truth.steady.get(pointKey(BASE_POINT))!;
    log(`## ${name}${shipped ? '' : ' (bench only)'}\n`);
    log(
      `space best ${truth.optimum.toFixed(3)} s/rollout (${describePoint(truth.optimumPoint)}); ${truth.admissible} of ${truth.points.length} topologies within 90% memory; baseline ${baseTruth.oom ? 'runs out of GPU memory' : `${baseTruth.secondsPerRollout.toFixed(3)} s/rollout (${pct(baseTruth.secondsPerRollout / truth.optimum - 1)} above)`}; ${(Date.now() - tp) / 1000} s exhaustive`,
    );
    const rows: Record<string, Row[]> = {};
    const knownBest: number[] = [];
    const floor: number[] = [];
    const methodSeconds: Record<string, number> = {};
    for (const seed of seeds) {
      const world = new World(profile, seed);
      const ctx: Context = {
        world,
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
        rows[method] = [...(rows[method] ?? []), summarise(result, truth.optimum)];
        if (process.env.CAMPAIGN_DEBUG)
          log(
            `  seed ${seed} ${method}: ${result.ledger.incumbent.map((i) => `${i.name}@${Math.round(i.at)}=${i.seconds.toFixed(3)}`).join(' → ')} | ${result.stopReason} | spent ${result.ledger.total().toFixed(1)} GPU-h`,
          );
      }
      knownBest.push(knownBestCost(ctx, truth.optimumPoint));
      floor.push(informationFloor(ctx, truth.optimumPoint, POLICY.minImprovement));
    }
    log('');
    log(
      '| method | GPU-h to within 2% (median / worst) | wall-clock h to within 2% (median / worst) | reached | concluded within 2% | OOM runs after the baseline | GPU-h spent (median) | rounds (median) |',
    );
    log('|---|---|---|---|---|---|---|---|');
    const med: Record<string, number> = {};
    for (const method of ['topo', 'manual', 'random', 'asha', 'optuna']) {
      const rs = rows[method];
      if (!rs) {
        if (method === 'optuna' && METHODS.includes('optuna'))
          log(`| optuna | absent (${OPTUNA_MISSING}) | | | | | | |`);
        continue;
      }
      const c = costTo(rs);
      med[method] = median(c.values);
      const wall = rs.map((r) => r.reached?.wallHours ?? Number.POSITIVE_INFINITY);
      log(
        `| ${method} | ${f1(median(c.values))} / ${f1(Math.max(...c.values))}${c.missed ? ` (${c.missed} never: counted at what they spent)` : ''} | ${f1(median(wall))} / ${f1(Math.max(...wall))} | ${rs.length - c.missed} of ${rs.length} | ${pct(rs.filter((r) => r.right).length / rs.length)} | ${rs.reduce((a, r) => a + r.oomAfterBaseline, 0)} | ${f1(median(rs.map((r) => r.spent)))} | ${f1(median(rs.map((r) => r.rounds)))} |`,
      );
    }
    const topo = rows.topo ?? [];
    const first = topo.flatMap((r) => r.predictions.filter((p) => p.round === 1));
    const later = topo.flatMap((r) => r.predictions.filter((p) => p.round > 1));
    const err = (ps: typeof first) => median(ps.map((p) => Math.abs(p.predicted / p.truth - 1)));
    const cov = (ps: typeof first) =>
      ps.filter((p) => p.low <= p.truth && p.truth <= p.high).length / ps.length;
    const worstErr = (ps: typeof first) => Math.max(...ps.map((p) => Math.abs(p.predicted / p.truth - 1)));
    log(
      `\npredictions after the baseline alone: ${first.length} proposals, |error| median ${pct(err(first))} (worst ${pct(worstErr(first))}), ${pct(cov(first))} inside their 90% interval; later rounds: ${later.length}, median ${pct(err(later))}, coverage ${pct(cov(later))}`,
    );
    log(
      `beside the figures: the information floor (what any method must spend: the baseline and one decided run of the best, each start-up plus one rollout of steady data, × ${8} GPUs) median ${f1(median(floor))} GPU-h (worst ${f1(Math.max(...floor))}), ${pct(median(floor) / (med.manual ?? Number.NaN))} of the seed's rule by hand; knowing the best topology beforehand, with the monitor's decisions (a bound of the decisions, not of the problem) median ${f1(median(knownBest))} GPU-h (worst ${f1(Math.max(...knownBest))}), ${pct(median(knownBest) / (med.manual ?? Number.NaN))} of the seed's rule`,
    );
    const stops = [...new Set(topo.map((r) => r.stop.replace(/\d+(\.\d+)?/g, 'N').slice(0, 90)))];
    log(`topo stopped: ${stops.join(' | ')}`);
    log(
      `time per campaign: ${Object.entries(methodSeconds)
        .map(([m, s]) => `${m} ${(s / seeds.length).toFixed(1)} s`)
        .join(', ')}`,
    );
    const right = topo.length ? topo.filter((r) => r.right).length / topo.length : Number.NaN;
    const figures = {
      topo: med.topo ?? Number.NaN,
      manual: med.manual ?? Number.NaN,
      random: med.random,
      asha: med.asha,
      optuna: med.optuna,
      right,
      oomRuns: topo.reduce((a, r) => a + r.oomAfterBaseline, 0),
      predictionError: err(first),
      coverage: cov(first),
      floor: median(floor),
    };
    const line = summaryLine(name, figures);
    lines.push(line);
    log(`\n${line}\n`);
    for (const g of judgeGoals(figures)) {
      goals.push(g);
      goalLines.push(`- ${name}: ${g.status} ${g.text}`);
      log(`${g.status} ${g.text}`);
    }
    log('');
  }
  log('## Goals\n');
  for (const g of goalLines) log(g);
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
