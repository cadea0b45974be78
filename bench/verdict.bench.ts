// The verdict and decision bench (printed, not asserted; it can fail: it prints the goals missed).
// A trace family (bench/trace-family.ts: 8 shapes × 4 seeds × a baseline and 5 candidates) and the
// twin's own traces are backfilled into a REAL Prometheus (promtool tsdb create-blocks-from
// openmetrics, then a temporary Prometheus on a free port) and judged every 5 run-minutes through
// analyzeRun — the code path of `topo analyze --at`. Each experiment is decided look by look as
// reconcile decides it (against the baseline, and while that is open against the leading
// candidate); an oracle that knows each rollout's duration, read through the same decision code,
// prints the bound no estimator on the metrics can beat. Seeds 0 and 1 are the tuning seeds; seeds
// 2-4 (and fresh ones by TOPO_BENCH_SEEDS=5,6,7) are reported. Run: npm run bench -- verdict
// (TOPO_BENCH_QUICK=1: two seeds, fewer candidates; TOPO_BENCH_PRUNE=0: without the pruner)
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decideLook } from '../src/analysis/decide-look.js';
import { decisionOptions, leadingCandidate, type VerdictLike } from '../src/analysis/decision.js';
import { observeRun, type RunSeries } from '../src/analysis/observe.js';
import { median } from '../src/analysis/series.js';
import { exportOpenMetrics } from '../src/sim/openmetrics.js';
import { parseOverrides } from '../src/sim/overrides.js';
import { loadProfile, repoRoot } from '../src/sim/profile.js';
import { createPrometheusClient } from '../src/telemetry/prometheus.js';
import { anyRunSelector, fetchTelemetry, type Quantity } from '../src/telemetry/queries.js';
import { capacitySummary } from '../src/topology/capacity.js';
import { EXPERIMENT_DEFAULTS } from '../src/topology/settings.js';
import type { Decision, Verdict } from '../src/types/generated/metrics.js';
import type { Topology } from '../src/types/generated/topology.js';
import { analyzeRun } from '../src/usecases/analyze-run.js';
import {
  FAMILY,
  type FamilyFigures,
  figures,
  oracleReader,
  printFamily,
  productReader,
  ROUND_SHAPES,
  runFamily,
  runRounds,
  stableFigures,
} from './decision-family.js';
import { backfill, prometheusOn } from './prometheus-blocks.js';
import { CANDIDATE_DRIFT, type GeneratedRun, type RunSpec, SHAPES, writeFamily } from './trace-family.js';

// 0. The decision family (issues 31 and 38), in process: every shape × seed × candidate ×0.90…×1.10,
// read by the product's reading (start cohorts, src/analysis/reading.ts) and decided look by look by
// the product's one decision path (src/analysis/decide-look.ts), against its reference recorded a day
// before (another wall clock) and against the same reference running beside the candidates. Two
// bounds read through the same path: the same-knowledge oracle (every rollout exactly, the per-worker
// noise known, the same censored likelihood; no full-run guard) and the fair full-run one (the same,
// with the guard the full-run promise needs). Then the stable verdicts and the rounds mode.
// TOPO_BENCH_SEEDS=2,3,4 (default; 0 and 1 are the tuning seeds: TOPO_BENCH_TUNE=1 reports them
// instead). The Prometheus part below (the verdict, the twin's traces) runs with
// TOPO_BENCH_PROMETHEUS=1; the family through the shipped read path is bench/shipped.bench.ts.
const familySeeds = (process.env.TOPO_BENCH_SEEDS ?? '').split(',').filter(Boolean).map(Number);
const FAMILY_SEEDS = familySeeds.length
  ? familySeeds
  : process.env.TOPO_BENCH_TUNE === '1'
    ? [0, 1]
    : [2, 3, 4];
const familyOptions = decisionOptions({ min_improvement: 0.02 });
const familyFigures = (() => {
  const options = familyOptions;
  const horizon = options.maxDecisionMinutes ?? EXPERIMENT_DEFAULTS.maxDecisionMinutes;
  const t0 = Date.now();
  const rows = runFamily(FAMILY_SEEDS, options, productReader);
  const fair = runFamily(FAMILY_SEEDS, options, oracleReader);
  const same = runFamily(FAMILY_SEEDS, { ...options, fullRunGuard: false }, oracleReader);
  const tuned = FAMILY_SEEDS.filter((x) => x === 0 || x === 1);
  console.log(
    `\n## Decisions on the broader family (seeds ${FAMILY_SEEDS.join(', ')}${tuned.length ? `; ${tuned.join(', ')} tuned on` : ', none tuned on'}; truth: each run's full-run value at its end, ${FAMILY.end} run-minutes, or at equal run age for an equal-age claim; undecided candidates charged to the ${horizon}-minute horizon)`,
  );
  const f = printFamily(rows, { fair, same }, horizon);
  const [b, b0] = [figures(fair, horizon), figures(same, horizon)];
  const boundText = (x: FamilyFigures) =>
    `median ${x.median} run-min (worst ${x.worst}), ${Math.round(x.gpuPerDecided)} GPU-min per decided, wrong ${x.wrong} of ${x.n} (better-when-not ${x.betterWhenNot}), coverage ${(100 * x.coverage).toFixed(1)}%`;
  console.log(
    `fair full-run bound (the oracle's reading through the one decision path, full-run guard on): ${boundText(b)}`,
  );
  console.log(
    `same-knowledge bound (the same, no full-run guard: an equal-age \`better\` is final): ${boundText(b0)}`,
  );
  const stable = stableFigures(FAMILY_SEEDS);
  console.log(
    `stable: ${stable.stable} runs stable by run-minute 120 (${stable.driftingStable} of them drifting), median ${stable.median}, their value's interval covers the full-run truth in ${(100 * stable.coverage).toFixed(1)}%; ${stable.fullRunClaims} claim the full-run value (median ${stable.fullRunMedian}), the rest the weaker steady-rate claim with a drift bound; ${stable.never} never stable`,
  );
  const rounds = runRounds(FAMILY_SEEDS, options, ROUND_SHAPES);
  const perRound = rounds.flatMap((r) => r.gpu);
  const R = perRound.reduce((a, x) => a + x, 0) / Math.max(1, perRound.length);
  for (const r of rounds)
    console.log(
      `rounds ${r.shape} s${r.seed}: GPU-min ${r.gpu.map(Math.round).join(' + ')}; ${r.outcomes.join('; ')}`,
    );
  const summary = `verdict bench: decision median ${f.median} run-min (worst ${f.worst}), GPU-min per decided ${Math.round(f.gpuPerDecided)} (fair bound ${Math.round(b.gpuPerDecided)}, same-knowledge bound ${Math.round(b0.gpuPerDecided)}), wrong ${f.wrong} of ${f.n} (better-when-not ${f.betterWhenNot}), coverage ${(100 * f.coverage).toFixed(1)}%, undecided at horizon ${f.undecided}, stable median ${stable.median} (coverage ${(100 * stable.coverage).toFixed(1)}%), rounds: GPU-min per round ${Math.round(R)}`;
  console.log(
    `(${rows.length} candidates decided, with both bounds, in ${((Date.now() - t0) / 1000).toFixed(0)} s)`,
  );
  console.log(`\n${summary}`);
  return { f, summary };
})();
const SUMMARY = familyFigures.summary;
if (process.env.TOPO_BENCH_PROMETHEUS !== '1') process.exit(0);

const QUICK = process.env.TOPO_BENCH_QUICK === '1';
// TOPO_BENCH_SEEDS=5,6,7: other seeds (fresh ones never tuned on); seeds 0 and 1 are the tuning seeds
const seedList = (process.env.TOPO_BENCH_SEEDS ?? '').split(',').filter(Boolean).map(Number);
const SEEDS = seedList.length ? seedList : QUICK ? [1, 2] : [0, 1, 2, 3, 4];
const TUNE_SEEDS = new Set([0, 1]);
const FACTORS: Array<{ key: string; factor: number; seedShift: number }> = [
  { key: 'base', factor: 1, seedShift: 0 },
  { key: 'x0.90', factor: 0.9, seedShift: 0 },
  { key: 'x0.95', factor: 0.95, seedShift: 0 },
  { key: 'x1.00', factor: 1, seedShift: 1000 },
  { key: 'x1.05', factor: 1.05, seedShift: 0 },
  { key: 'x1.10', factor: 1.1, seedShift: 0 },
].slice(0, QUICK ? 3 : 6);
const END = 234; // run-minutes: 03:59 wall time less 5 minutes of start-up
const STARTUP = 5;
const GPUS = 8;
const SCRAPE = 15;
const LOOKS = [...Array.from({ length: 23 }, (_, i) => 10 + 5 * i), 150, 180, END];
const SEED_RULE_MINUTES = 45;
const QUANTITIES: Quantity[] = [
  'secondsPerRolloutAvg',
  'rolloutsTotal',
  'rolloutsFailed',
  'elapsed',
  'rolloutDurationSum',
  'rolloutDurationCount',
  'activeRollouts',
];

interface BenchRun {
  name: string;
  group: string; // shape or twin profile
  seed: number;
  variant: string;
  truth: number;
  at45: number;
  crashAt?: number;
  drift: boolean;
  cyclic: boolean;
  inFlight?: number;
  baseline?: string;
  spec?: RunSpec;
}

// TOPO_BENCH_DATA=<dir>: keep the backfilled blocks there and reuse them on the next run (tuning)
interface Row {
  run: BenchRun;
  verdictAt: number | null;
  verdictState: string;
  error: number | null;
  covered: boolean | null;
  falseVerdicts: string[];
  crashFlaggedAfter: number | null;
  decision: Decision | null;
  decidedAt: number | null;
  rightWay: boolean | null;
  gpuMinutes: number;
  /** Stopped by the pruner: the leading candidate it could not beat. */
  prunedBy?: string;
}

const keep = process.env.TOPO_BENCH_DATA;
const reuse = !!keep && existsSync(join(keep, 'data'));
const dir = keep ?? mkdtempSync(join(tmpdir(), 'topo-verdict-bench-'));
if (keep) mkdirSync(dir, { recursive: true });
const data = join(dir, 'data');
const startUnix = reuse
  ? Number(readFileSync(join(dir, 'start'), 'utf8'))
  : Math.floor(Date.now() / 1000 / 3600) * 3600 - 6 * 3600;
if (keep && !reuse) writeFileSync(join(dir, 'start'), String(startUnix));
const TRACE = process.env.TOPO_BENCH_TRACE;
let prom: ChildProcess | undefined;
const t0 = Date.now();
try {
  const runs: BenchRun[] = [];
  // 1. the trace family, one OpenMetrics file per shape
  // the candidate-only drift: an early `better` on a candidate that alone drifts is the risk
  for (const shape of [...SHAPES, CANDIDATE_DRIFT]) {
    const specs: RunSpec[] = [];
    for (const seed of SEEDS)
      for (const f of FACTORS)
        specs.push({
          shape,
          seed: seed + f.seedShift,
          factor: f.factor,
          runName: `fam-${shape.name}-s${seed}-${f.key}`,
          endMinutes: END,
          scrapeSeconds: SCRAPE,
        });
    const file = join(dir, `${shape.name}.om`);
    const gen: GeneratedRun[] = await writeFamily(specs, file, startUnix, !reuse);
    if (!reuse) {
      backfill(file, data);
      rmSync(file);
    }
    for (const g of gen) {
      const [, seed, variant] = /-s(\d+)-(.+)$/.exec(g.spec.runName) as RegExpExecArray;
      runs.push({
        name: g.spec.runName,
        group: shape.name,
        seed: Number(seed),
        variant: variant as string,
        truth: g.truth,
        at45: g.at45,
        ...(shape.crashAtMinutes !== undefined ? { crashAt: shape.crashAtMinutes } : {}),
        drift: !!shape.driftPerHour || (!!shape.candidateDriftPerHour && variant !== 'base'),
        cyclic: !!shape.cycle,
        // without the in-flight gauge, the capacity comes from the topology (`topo analyze --in-flight`)
        ...(shape.noActiveGauge ? { inFlight: shape.inFlight } : {}),
        ...(variant !== 'base' ? { baseline: `fam-${shape.name}-s${seed}-base` } : {}),
        spec: g.spec,
      });
    }
  }
  // 2. the twin's traces: the baseline preset and two candidates on one profile, and the cyclic profile
  const root = process.env.TOPO_REPO_ROOT ?? repoRoot();
  const twinCases = [
    { profile: 'twin-balanced', preset: '8gpu_64rollouts', variant: 'base' },
    { profile: 'twin-balanced', preset: '8gpu_12rollouts', variant: '8gpu_12rollouts' },
    { profile: 'twin-balanced', preset: '8gpu_no_replicas', variant: '8gpu_no_replicas' },
    { profile: 'twin-renderer-bound', preset: '8gpu_64rollouts', variant: 'base' },
    { profile: 'twin-cyclic', preset: '8gpu_64rollouts', variant: 'base' },
  ];
  // TOPO_BENCH_TWIN=0: the trace family only (quicker tuning)
  for (const seed of QUICK ? [1] : process.env.TOPO_BENCH_TWIN === '0' ? [] : [1, 2])
    for (const c of twinCases) {
      const topology = parseOverrides([`deploy=${c.profile}`, 'driver=twin', `topology=${c.preset}`], {
        repoRoot: root,
        gpusPerNode: 64,
      }).topology as Topology;
      const runName = `twin-${c.profile}-s${seed}-${c.variant}`;
      const file = join(dir, `${runName}.om`);
      if (!reuse) {
        await exportOpenMetrics(topology, loadProfile(c.profile, root), file, {
          minutes: END,
          intervalS: SCRAPE,
          seed,
          startUnix,
          runName,
          runUuid: `${runName}-uuid`,
        });
        backfill(file, data);
        rmSync(file);
      }
      runs.push({
        name: runName,
        group: c.profile,
        seed,
        variant: c.variant,
        truth: Number.NaN, // read from Prometheus below
        at45: Number.NaN,
        drift: false,
        cyclic: c.profile === 'twin-cyclic',
        inFlight: capacitySummary(topology).inFlight,
        ...(c.variant !== 'base' ? { baseline: `twin-${c.profile}-s${seed}-base` } : {}),
      });
    }
  const genSeconds = (Date.now() - t0) / 1000;

  // 3. a real Prometheus on the blocks
  const started = await prometheusOn(dir, data);
  prom = started.prom;
  const url = started.url;
  const client = createPrometheusClient({ baseUrl: url });
  // twin truth: the objective at the run's end, from the raw metrics
  for (const r of runs.filter((x) => x.name.startsWith('twin-'))) {
    const q = (t: number) =>
      client
        .instant(
          `max(alpasim_simulation_elapsed_seconds{run_name="${r.name}"}) / sum(alpasim_rollouts_total{run_name="${r.name}"})`,
          startUnix + t * 60,
        )
        .then((res) => res.series[0]?.points.at(-1)?.[1] ?? Number.NaN);
    r.truth = await q(END);
    r.at45 = await q(SEED_RULE_MINUTES);
  }

  // 4. judge every run at every look, as `topo analyze --at` would
  const verdicts = new Map<string, Verdict>();
  // TOPO_BENCH_FAST=1 (tuning): one range query per run, cut at each look and judged by observeRun,
  // the core of analyzeRun (the same grid, so the same series); the default asks Prometheus per look
  const FAST = process.env.TOPO_BENCH_FAST === '1';
  // TOPO_BENCH_SETTINGS='{"consecutive_windows":2}': detector settings to try (fast mode only)
  const SETTINGS = process.env.TOPO_BENCH_SETTINGS
    ? (JSON.parse(process.env.TOPO_BENCH_SETTINGS) as Record<string, number>)
    : undefined;
  const fetched = new Map<string, Promise<{ series: RunSeries; missing: string[] }>>();
  const fetchOnce = (r: BenchRun) => {
    let f = fetched.get(r.name);
    if (!f) {
      f = fetchTelemetry(
        client,
        anyRunSelector(r.name),
        { start: startUnix - 600, end: startUnix + END * 60, stepSeconds: SCRAPE },
        { timeScale: 1, scrapeSeconds: SCRAPE, quantities: QUANTITIES },
      ).then((t) => ({ series: (t.byRun.get(r.name) ?? {}) as RunSeries, missing: t.missing }));
      fetched.set(r.name, f);
    }
    return f;
  };
  const judgeFast = async (r: BenchRun, minute: number): Promise<Verdict> => {
    const { series, missing } = await fetchOnce(r);
    const at = startUnix + minute * 60;
    const cut: RunSeries = {};
    for (const [q, ss] of Object.entries(series))
      cut[q] = (ss ?? []).map((x) => ({ ...x, points: x.points.filter((p) => p[0] <= at) }));
    return observeRun({
      runName: r.name,
      series: cut,
      timeScale: 1,
      nowTs: at,
      stepSeconds: SCRAPE,
      missing,
      inFlight: r.inFlight ?? null,
      ended: false,
      ...(SETTINGS ? { settings: SETTINGS } : {}),
    }).observation.verdict;
  };
  const judge = async (r: BenchRun, minute: number): Promise<Verdict> => {
    const key = `${r.name}@${minute}`;
    const cached = verdicts.get(key);
    if (cached) return cached;
    const v = FAST
      ? await judgeFast(r, minute)
      : (
          await analyzeRun({
            prometheus: client,
            runName: r.name,
            timeScale: 1,
            stepSeconds: SCRAPE,
            nowTs: startUnix + minute * 60,
            atTs: startUnix + minute * 60,
            minutes: minute + 10,
            inFlight: r.inFlight ?? null,
            quantities: QUANTITIES,
          })
        ).judgement.observation.verdict;
    verdicts.set(key, v);
    if (TRACE && r.name.includes(TRACE))
      console.log(
        `${r.name} @${minute}: ${v.state} ${JSON.stringify(v.projected_full_run)} truth ${r.truth.toFixed(4)} | ${v.evidence.join(' | ')}`,
      );
    return v;
  };
  const rows: Row[] = [];
  const byName = new Map(runs.map((r) => [r.name, r]));
  let evaluations = 0;
  const evalRun = async (r: BenchRun): Promise<Row> => {
    const row: Row = {
      run: r,
      verdictAt: null,
      verdictState: 'none',
      error: null,
      covered: null,
      falseVerdicts: [],
      crashFlaggedAfter: null,
      decision: null,
      decidedAt: null,
      rightWay: null,
      gpuMinutes: GPUS * (STARTUP + END),
    };
    for (const minute of LOOKS) {
      const v = await judge(r, minute);
      evaluations++;
      const crashed = r.crashAt !== undefined && minute > r.crashAt;
      if (
        (v.state === 'stable' || v.state === 'cyclic') &&
        (r.drift || crashed || (v.state === 'cyclic' && !r.cyclic))
      )
        row.falseVerdicts.push(`${v.state}@${minute}`);
      if (crashed && row.crashFlaggedAfter === null && v.state === 'unhealthy')
        row.crashFlaggedAfter = minute - (r.crashAt as number);
      if (row.verdictAt === null && ['stable', 'cyclic', 'drifting'].includes(v.state) && !crashed) {
        row.verdictAt = minute;
        row.verdictState = v.state;
        if (v.value && Number.isFinite(r.truth)) {
          row.error = v.value.value / r.truth - 1;
          row.covered = v.value.low <= r.truth && r.truth <= v.value.high;
        }
      }
      if (row.verdictAt !== null && !r.drift && r.crashAt === undefined && minute >= 60) break;
      if (r.crashAt !== undefined && row.crashFlaggedAfter !== null) break;
    }
    return row;
  };
  // baselines first (candidates reuse their cached verdicts), a few at a time
  const order = [...runs.filter((r) => !r.baseline), ...runs.filter((r) => r.baseline)];
  for (let i = 0; i < order.length; i += 4)
    rows.push(...(await Promise.all(order.slice(i, i + 4).map(evalRun))));
  const evalSeconds = (Date.now() - t0) / 1000 - genSeconds;

  // 4b. the decisions, one experiment (a baseline and its candidates) at a time and look by look,
  // as the monitor's pass makes them (src/monitor/decide.ts): each running candidate against
  // the baseline, and one still open there against the leading candidate (the pruner: the best
  // usable projection among the others, frozen where that one stopped); stopped once decided.
  type VerdictOf = (r: BenchRun, minute: number) => Promise<VerdictLike> | VerdictLike;
  /** Decisions of one experiment, look by look; per candidate its decision and the look it came at. */
  // the decision looks every minute, as the monitor's loop does, to max_decision_minutes
  // (TOPO_BENCH_BOUNDARY=always-valid: the confidence sequence instead of alpha spending)
  const decision = decisionOptions({
    min_improvement: 0.02,
    ...(process.env.TOPO_BENCH_BOUNDARY === 'always-valid' ? { decision_boundary: 'always-valid' } : {}),
  });
  const DECISION_LOOKS = Array.from(
    { length: (decision.maxDecisionMinutes ?? EXPERIMENT_DEFAULTS.maxDecisionMinutes) - 5 },
    (_, i) => 6 + i,
  );
  const decideExperiment = async (base: BenchRun, group: BenchRun[], verdictOf: VerdictOf) => {
    const stopAt = new Map<string, number>();
    const decided = new Map<string, { d: Decision; at: number }>();
    const previous = new Map<string, Decision | null>();
    for (const minute of DECISION_LOOKS) {
      const bv = await verdictOf(base, minute);
      const views = await Promise.all(
        group.map(async (r) => ({
          name: r.name,
          verdict: await verdictOf(r, Math.min(minute, stopAt.get(r.name) ?? minute)),
        })),
      );
      const leader = leadingCandidate(views, bv);
      for (const r of group) {
        if (stopAt.has(r.name)) continue;
        const v = (views.find((x) => x.name === r.name) as { verdict: VerdictLike }).verdict;
        const look = decideLook(
          {
            candidate: v,
            reference: { name: 'baseline', verdict: bv },
            leader: leader && leader.name !== r.name ? { ...leader, contenders: group.length } : null,
            previous: previous.get(r.name) ?? null,
          },
          decision,
        );
        const d = look.decision;
        previous.set(r.name, d);
        if (TRACE && r.name.includes(TRACE))
          console.log(
            `${r.name} @${minute} decision: ${d.state} vs ${d.reference.name} ${JSON.stringify(d.relative_change ?? null)} (${v.state} vs ${bv.state})`,
          );
        if (d.state !== 'measuring' && !decided.has(r.name)) decided.set(r.name, { d, at: minute });
        if (look.stop) stopAt.set(r.name, minute);
      }
      if (group.every((r) => stopAt.has(r.name))) break;
    }
    return decided;
  };
  const rowOf = new Map(rows.map((x) => [x.run.name, x]));
  for (const base of runs.filter((r) => !r.baseline)) {
    const group = runs.filter((r) => r.baseline === base.name);
    for (const [name, { d, at }] of await decideExperiment(base, group, judge)) {
      const r = byName.get(name) as BenchRun;
      const row = rowOf.get(name) as Row;
      row.decision = d;
      row.decidedAt = at;
      row.gpuMinutes = GPUS * (STARTUP + at);
      const against = d.reference.name === 'baseline' ? base : (byName.get(d.reference.name) as BenchRun);
      const trueChange = r.truth / against.truth - 1;
      if (Number.isFinite(trueChange))
        row.rightWay =
          d.state === 'worse'
            ? trueChange > 0
            : d.state === 'better'
              ? trueChange < -0.02 + 0.005
              : d.state === 'not-better'
                ? trueChange > -0.02 - 0.005
                : Math.abs(trueChange) < 0.02 + 0.005;
      if (d.reference.name !== 'baseline') row.prunedBy = d.reference.name;
    }
  }

  // 5. figures
  printReport(
    byName,
    'Tuning seeds (0, 1)',
    rows.filter((r) => TUNE_SEEDS.has(r.run.seed) && r.run.name.startsWith('fam-')),
  );
  printReport(
    byName,
    'Reported: trace family, seeds not tuned on',
    rows.filter((r) => !TUNE_SEEDS.has(r.run.seed) && r.run.name.startsWith('fam-')),
  );
  printReport(
    byName,
    "The twin's traces",
    rows.filter((r) => r.run.name.startsWith('twin-')),
  );

  console.log(
    `\n${runs.length} runs backfilled in ${genSeconds.toFixed(0)} s; ${evaluations} looks (${verdicts.size} analyzeRun calls on Prometheus) in ${evalSeconds.toFixed(0)} s`,
  );
  // the decision family through the shipped read path (Prometheus, analyzeRun): npm run bench -- shipped
  console.log(`\n${SUMMARY}`);
} finally {
  if (prom?.pid) prom.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 300));
  if (!keep) rmSync(dir, { recursive: true, force: true });
}

type Runs = ReadonlyMap<string, BenchRun>;

// function declarations, not consts: the script's body above calls printReport before this point runs
function pct(x: number | null | undefined): string {
  return x == null || !Number.isFinite(x) ? '—' : `${(100 * x).toFixed(1)}%`;
}
function med(xs: number[]): number {
  return xs.length ? median(xs) : Number.NaN;
}
function worst(xs: number[]): number {
  return xs.length ? Math.max(...xs) : Number.NaN;
}
function fmt(x: number): string {
  return Number.isFinite(x) ? String(Math.round(x * 10) / 10) : '—';
}
/** The candidate's true change against its baseline. */
function trueChange(r: Row, byName: Runs): number {
  return r.run.truth / (byName.get(r.run.baseline as string) as BenchRun).truth - 1;
}

/** One set of rows: the per-shape table, the goals, the decisions by candidate and the wrong ones. */
function printReport(byName: Runs, label: string, rs: Row[]): void {
  console.log(`\n## ${label}\n`);
  console.log(
    '| shape | runs | min to verdict (median / worst) | verdicts | min to decision vs baseline (median / worst) | |error| at verdict (median / worst) | 95% CI covers truth | false verdicts | crash flagged after | decided right / decided / ≥5% candidates | GPU-min per decided candidate vs seed rule | seed rule |error| @45 (median / worst) |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const g of [...new Set(rs.map((r) => r.run.group))])
    console.log(
      shapeLine(
        g,
        rs.filter((r) => r.run.group === g),
        byName,
      ),
    );
  console.log(shapeLine('**all**', rs, byName));
  printGoals(rs, byName);
  printByCandidate(rs, byName);
}

/** One shape's row of the table. */
function shapeLine(g: string, xs: Row[], byName: Runs): string {
  const vt = xs.filter((r) => r.verdictAt !== null).map((r) => r.verdictAt as number);
  const states = [...new Set(xs.map((r) => r.verdictState))].join('/');
  const dt = xs.filter((r) => r.decidedAt !== null).map((r) => r.decidedAt as number);
  const errs = xs.filter((r) => r.error !== null).map((r) => Math.abs(r.error as number));
  const cov = xs.filter((r) => r.covered !== null);
  const fv = xs.flatMap((r) => r.falseVerdicts.map((f) => `${r.run.variant}:${f}`));
  const crash = xs.filter((r) => r.run.crashAt !== undefined);
  const flagged = crash.map((r) => r.crashFlaggedAfter).filter((x): x is number => x !== null);
  const cands = xs.filter((r) => r.run.baseline);
  const big = cands.filter((r) => Math.abs(trueChange(r, byName)) >= 0.05);
  const decided = cands.filter((r) => r.decidedAt !== null);
  const right = decided.filter((r) => r.rightWay);
  const gpu = cands.reduce((a, r) => a + r.gpuMinutes, 0) / Math.max(1, decided.length);
  const seedErr = xs
    .filter((r) => Number.isFinite(r.run.truth))
    .map((r) => Math.abs(r.run.at45 / r.run.truth - 1));
  const bigRight = big.filter((r) => r.rightWay).length;
  const falseText = fv.length
    ? fv.slice(0, 4).join(', ') + (fv.length > 4 ? ` (+${fv.length - 4})` : '')
    : '0';
  const crashText = crash.length
    ? `${flagged.length ? `${fmt(med(flagged))} / ${fmt(worst(flagged))}` : 'never'} (${flagged.length} of ${crash.length})`
    : '—';
  const gpuText = decided.length
    ? `${Math.round(gpu)} (${pct(gpu / (GPUS * (STARTUP + SEED_RULE_MINUTES)))})`
    : '—';
  return `| ${g} | ${xs.length} | ${fmt(med(vt))} / ${fmt(worst(vt))} (${vt.length} of ${xs.length}) | ${states} | ${fmt(med(dt))} / ${fmt(worst(dt))} (${dt.length} of ${cands.length}) | ${pct(med(errs))} / ${pct(worst(errs))} | ${cov.filter((r) => r.covered).length} of ${cov.length} | ${falseText} | ${crashText} | ${right.length} / ${decided.length} / ${bigRight} of ${big.length} | ${gpuText} | ${pct(med(seedErr))} / ${pct(worst(seedErr))} |`;
}

/** The goals over the plain shapes (every shape but drift and crash). */
function printGoals(rs: Row[], byName: Runs): void {
  const plain = rs.filter((r) => !r.run.drift && r.run.crashAt === undefined);
  const stableT = plain.filter((r) => r.verdictAt !== null).map((r) => r.verdictAt as number);
  const decT = rs.filter((r) => r.decidedAt !== null).map((r) => r.decidedAt as number);
  const errs = plain.filter((r) => r.error !== null).map((r) => Math.abs(r.error as number));
  const cov = plain.filter((r) => r.covered !== null);
  const falseN = rs.filter(
    (r) => (r.run.drift || r.run.crashAt !== undefined) && r.falseVerdicts.length,
  ).length;
  const crash = rs.filter((r) => r.run.crashAt !== undefined);
  const crashOk = crash.filter((r) => r.crashFlaggedAfter !== null && r.crashFlaggedAfter <= 10).length;
  const cands = rs.filter((r) => r.run.baseline && !r.run.drift && r.run.crashAt === undefined);
  const big = cands.filter((r) => Math.abs(trueChange(r, byName)) >= 0.05);
  const bigRight = big.filter((r) => r.rightWay).length;
  const decided = cands.filter((r) => r.decidedAt !== null);
  const gpuPer = cands.reduce((a, r) => a + r.gpuMinutes, 0) / Math.max(1, decided.length);
  const seedGpu = GPUS * (STARTUP + SEED_RULE_MINUTES);
  const covered = cov.filter((r) => r.covered).length;
  const goal = (ok: boolean, text: string) => console.log(`- ${ok ? 'met' : 'MISSED'}: ${text}`);
  console.log('\nGoals (plain = every shape but drift and crash):');
  goal(
    med(stableT) <= 30,
    `median run-minutes to a verdict ${fmt(med(stableT))} (≤ 30), worst ${fmt(worst(stableT))}`,
  );
  goal(
    med(decT) <= 25,
    `median run-minutes to a decision vs baseline ${fmt(med(decT))} (≤ 25), worst ${fmt(worst(decT))}`,
  );
  goal(
    med(errs) <= 0.02 && worst(errs) <= 0.05,
    `|error| at the verdict median ${pct(med(errs))} (≤ 2%), worst ${pct(worst(errs))} (≤ 5%)`,
  );
  goal(covered >= 0.9 * cov.length, `95% interval covers the truth in ${covered} of ${cov.length} (≥ 90%)`);
  goal(falseN === 0, `stable/cyclic verdicts on drifting or crashed runs: ${falseN} runs`);
  goal(crashOk === crash.length, `crashes flagged within 10 minutes: ${crashOk} of ${crash.length}`);
  goal(
    bigRight === big.length,
    `candidates ≥ 5% from the baseline decided the right way: ${bigRight} of ${big.length}`,
  );
  goal(
    gpuPer <= 0.5 * seedGpu,
    `GPU-minutes per decided candidate ${Math.round(gpuPer)} vs the seed's ${seedGpu} (≤ 50%: ${pct(gpuPer / seedGpu)})`,
  );
}

/** Decisions by candidate (how far it truly is from its baseline), and the wrong ones. */
function printByCandidate(rs: Row[], byName: Runs): void {
  const cands = rs.filter((r) => r.run.baseline && !r.run.drift && r.run.crashAt === undefined);
  const variants = [...new Set(cands.map((r) => r.run.variant))].sort();
  const byVariant = (v: string) => {
    const xs = cands.filter((r) => r.run.variant === v);
    const t = xs.filter((r) => r.decidedAt !== null).map((r) => r.decidedAt as number);
    const states = [...new Set(xs.map((r) => r.decision?.state ?? 'none'))].join('/');
    const pruned = xs.filter((r) => r.prunedBy).length;
    return `${v} ${fmt(med(t))} / ${fmt(worst(t))} min (${t.length} of ${xs.length}, ${states}${pruned ? `, ${pruned} by the leading candidate` : ''})`;
  };
  console.log(`decisions by candidate: ${variants.map(byVariant).join('; ')}`);
  const wrong = rs.filter((r) => r.rightWay === false);
  if (wrong.length)
    console.log(
      `wrong decisions: ${wrong.map((r) => `${r.run.name} ${r.decision?.state}@${r.decidedAt} (truth ${pct(trueChange(r, byName))})`).join('; ')}`,
    );
}
