// Benchmark (printed, not asserted): how fast `topo suggest` finds a good topology on the twin,
// next to random search and a greedy coordinate search with the same budget.
//
// For each shipped hardware profile (src/sim/profiles/*.yaml):
//  1. the best topology of a bounded search space, by exhaustive evaluation of the twin's steady
//     state (src/sim/model.ts steadyState: the twin's own model, no Slurm);
//  2. the suggest loop: baseline (8gpu_64rollouts), then rounds of up to 3 suggested candidates,
//     each "measured" by the twin's steady state turned into the observation the monitor would
//     post (queue depths, idle fraction, per-GPU utilisation and memory, the analysis' bottleneck
//     verdict, the comparison against the current best);
//  3. random search over the space and a greedy coordinate search from the baseline, 3 per round.
// Reported: candidate runs and GPU-hours until the best is within 2% of the space's best, and how
// many proposals ran out of GPU memory (suggest must have none).
//
// Run: npm run bench -- suggest   (about a minute on one core; BENCH_PROFILE=<name or file.yaml> for
// one profile, BENCH_DEBUG=1 to print every round's evidence, proposals and refusals). Besides the
// shipped profiles it runs bench/profiles/*.yaml (hardware no test needs, e.g. 40 GiB GPUs).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { GPU_MEMORY_LIMITS } from '../src/catalog/alpasim.js';
import { steadyState } from '../src/sim/model.js';
import { listProfiles, loadProfile, parseProfile, repoRoot } from '../src/sim/profile.js';
import { retarget } from '../src/suggest/moves.js';
import { suggest } from '../src/suggest/suggest.js';
import { activeServices, clone } from '../src/suggest/topology-ops.js';
import type { TriedCandidate } from '../src/suggest/types.js';
import { expandPreset } from '../src/topology/expand.js';
import type { Topology } from '../src/types/generated/topology.js';
import type { TwinProfile } from '../src/types/generated/twin-profile.js';
import { type Measured, measure } from '../test/integration/suggest/twin-observation.js';

const ROUND = 3;
const BUDGET = 30; // candidate runs after the baseline (10 rounds of 3)
const WITHIN = 0.02;
const RANDOM_SEEDS = 50;
/** GPU-hours of one candidate on a full node: 5 min start-up + ~45 min to a stable verdict (stop_when_stable). */
const RUN_MINUTES = 50;
const OOM_MINUTES = 5;

// ---------------------------------------------------------------- the bounded search space

interface Point {
  renderer: number; // index into RENDERER_LAYOUTS
  driver: number; // replicas per container, 4 containers on GPUs 4-7
  physics: number; // replicas per container, 4 containers on GPUs 4-7
  total: number; // rollouts in flight
  workers: number;
}

const RENDERER_LAYOUTS: number[][] = [
  [0, 1, 2, 3],
  [0, 1, 2, 3, 4],
  [0, 1, 2, 3, 4, 5],
  [0, 1, 2, 3, 4, 5, 6, 7],
  [0, 0, 1, 2, 3],
  [0, 0, 1, 1, 2, 2, 3],
  [0, 0, 1, 1, 2, 2, 3, 3],
];
const AXES = {
  renderer: RENDERER_LAYOUTS.map((_, i) => i),
  driver: [2, 4, 6, 8, 10, 12],
  physics: [1, 2, 4, 6],
  total: [32, 48, 64, 80, 96, 128, 160],
  workers: [4, 8, 12, 16, 24],
} as const;
type Axis = keyof typeof AXES;
const AXIS_NAMES = Object.keys(AXES) as Axis[];

function build(base: Topology, p: Point): Topology {
  const t = clone(base);
  t.services!.renderer!.gpus = [...RENDERER_LAYOUTS[p.renderer]!] as [number, ...number[]];
  t.services!.driver!.replicas_per_container = p.driver;
  t.services!.physics!.replicas_per_container = p.physics;
  t.runtime!.nr_workers = p.workers;
  for (const svc of activeServices(t)) retarget(t, svc, p.total);
  return t;
}

function allPoints(): Point[] {
  const out: Point[] = [];
  for (const renderer of AXES.renderer)
    for (const driver of AXES.driver)
      for (const physics of AXES.physics)
        for (const total of AXES.total)
          for (const workers of AXES.workers) out.push({ renderer, driver, physics, total, workers });
  return out;
}

// ---------------------------------------------------------------- the searches

interface Trace {
  /** Candidate runs (after the baseline) until the best was within 2% of the optimum; undefined if never. */
  runsToWithin?: number;
  gpuHoursToWithin?: number;
  runs: number;
  oom: number;
  best: number;
  stopReason?: string;
}

function cost(oom: boolean, gpus: number): number {
  return ((oom ? OOM_MINUTES : RUN_MINUTES) / 60) * gpus;
}

class Tracker {
  runs = 0;
  oom = 0;
  gpuHours = 0;
  best: number;
  runsToWithin?: number;
  gpuHoursToWithin?: number;
  constructor(
    baseline: number,
    private readonly optimum: number,
    private readonly gpus: number,
  ) {
    this.best = baseline;
    if (baseline <= optimum * (1 + WITHIN)) {
      this.runsToWithin = 0;
      this.gpuHoursToWithin = 0;
    }
  }
  record(m: Measured): void {
    this.runs++;
    this.gpuHours += cost(m.oom, this.gpus);
    if (m.oom) this.oom++;
    if (m.seconds !== undefined && m.seconds < this.best) this.best = m.seconds;
  }
  /** A round's candidates run in parallel: all of them are paid before the result is known. */
  endRound(): void {
    if (this.runsToWithin === undefined && this.best <= this.optimum * (1 + WITHIN)) {
      this.runsToWithin = this.runs;
      this.gpuHoursToWithin = this.gpuHours;
    }
  }
  trace(stopReason?: string): Trace {
    return {
      runs: this.runs,
      oom: this.oom,
      best: this.best,
      ...(this.runsToWithin !== undefined
        ? { runsToWithin: this.runsToWithin, gpuHoursToWithin: this.gpuHoursToWithin! }
        : {}),
      ...(stopReason ? { stopReason } : {}),
    };
  }
}

type SuggestResultOf = ReturnType<typeof suggest>;
type ProposalOf = SuggestResultOf['proposals'][number];

/** suggest's loop on the twin, ROUND candidates a round, until the budget or its stop. */
function runSuggestLoop(
  base: Topology,
  profile: TwinProfile,
  optimum: number,
): Trace & { path: string[]; over90: number } {
  const gpus = profile.gpu.count;
  const baseline = measure(base, profile);
  const tried: TriedCandidate[] = [
    {
      name: 'baseline',
      parent: null,
      topology: base,
      status: baseline.oom ? 'failed' : 'accepted',
      observation: baseline.observation,
    },
  ];
  // A baseline that runs out of memory has no seconds: the best so far is "none" (Infinity).
  let best = { name: 'baseline', seconds: baseline.seconds ?? Number.POSITIVE_INFINITY };
  const tracker = new Tracker(best.seconds, optimum, gpus);
  const path: string[] = [];
  let stopReason: string | undefined;
  let over90 = 0;
  while (tracker.runs < BUDGET) {
    const result = suggest({
      experimentId: 'topology-opt-bench-twin-20261202',
      baseTopology: base,
      cluster: { gpusPerNode: gpus, gpuMemoryGiB: profile.gpu.memory_gb, cpusPerNode: profile.cpu.cores },
      maxParallel: ROUND,
      count: Math.min(ROUND, BUDGET - tracker.runs),
      tried,
      currentBest: best.name,
    });
    if (result.stop.stop || result.proposals.length === 0) {
      stopReason = result.stop.reason;
      break;
    }
    const roundBest = best;
    if (process.env.BENCH_DEBUG) debugRound(tried, best, result);
    for (const p of result.proposals) {
      if (overMemoryByTruth(p, profile, result)) over90++;
      const m = runProposal(p, profile, roundBest, tracker, tried);
      if (m.seconds !== undefined && m.observation.decision?.state === 'better' && m.seconds < best.seconds) {
        best = { name: p.candidate.name, seconds: m.seconds };
      }
    }
    tracker.endRound();
    const winner = tried.find((t) => t.name === best.name);
    if (winner) winner.status = 'accepted';
    path.push(`${best.name}=${best.seconds.toFixed(3)}`);
  }
  return { ...tracker.trace(stopReason), path, over90 };
}

/** BENCH_DEBUG: the parent's evidence, the memory model and what suggest rejected this round. */
function debugRound(
  tried: readonly TriedCandidate[],
  best: { name: string; seconds: number },
  result: SuggestResultOf,
): void {
  const parent = tried.find((t) => t.name === best.name);
  console.log(
    `  [${best.name} ${best.seconds.toFixed(3)}] bottleneck ${JSON.stringify(parent?.observation?.stable_metrics?.bottleneck)} idle ${parent?.observation?.stable_metrics?.runtime_idle_fraction?.toFixed(2)} queues ${JSON.stringify(parent?.observation?.stable_metrics?.rpc_queue_depth_at_start_latest_by_service)}`,
  );
  console.log(`  memory ${JSON.stringify(result.memory.model)} ${result.memory.notes}`);
  for (const r of result.rejected) console.log(`    rejected: ${r.change}: ${r.reason}`);
}

/** Whether the proposal is above 90% GPU memory by the twin's own memory truth (BENCH_DEBUG: where). */
function overMemoryByTruth(p: ProposalOf, profile: TwinProfile, result: SuggestResultOf): boolean {
  const truth = steadyState(p.candidate.topology, profile);
  if (!truth.gpuMemoryGb.some((gb) => gb > GPU_MEMORY_LIMITS.error * truth.gpuMemoryTotalGb)) return false;
  if (process.env.BENCH_DEBUG) {
    const predicted = p.predictedMemory.map(
      (m) => `${m.gpu}:${m.gib.toFixed(1)}/${(truth.gpuMemoryGb[m.gpu] ?? 0).toFixed(1)}`,
    );
    console.log(
      `    over 90% by truth: ${p.candidate.name} predicted/true ${predicted.join(' ')} (margin ${result.memory.marginGiB})`,
    );
  }
  return true;
}

/** Runs a proposal on the twin against the round's best, paid to the tracker and added to `tried`. */
function runProposal(
  p: ProposalOf,
  profile: TwinProfile,
  roundBest: { name: string; seconds: number },
  tracker: Tracker,
  tried: TriedCandidate[],
): Measured {
  const m = measure(p.candidate.topology, profile, roundBest);
  if (process.env.BENCH_DEBUG)
    console.log(
      `    ${p.candidate.name}: ${p.change} → ${m.seconds?.toFixed(3) ?? 'OOM'} ${m.observation.decision?.state ?? ''}`,
    );
  tracker.record(m);
  tried.push({
    name: p.candidate.name,
    parent: p.candidate.parent ?? null,
    topology: p.candidate.topology,
    status: m.oom ? 'failed' : 'rejected',
    observation: m.observation,
  });
  return m;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function runRandom(
  base: Topology,
  profile: TwinProfile,
  points: Point[],
  optimum: number,
  seed: number,
  baselineSeconds: number,
): Trace {
  const rand = mulberry32(seed);
  const tracker = new Tracker(baselineSeconds, optimum, profile.gpu.count);
  const order = [...points.keys()];
  for (let i = 0; i < BUDGET && i < order.length; i++) {
    const j = i + Math.floor(rand() * (order.length - i));
    [order[i], order[j]] = [order[j]!, order[i]!];
    tracker.record(measure(build(base, points[order[i]!]!), profile));
    if ((i + 1) % ROUND === 0) tracker.endRound();
  }
  tracker.endRound();
  return tracker.trace();
}

function runGreedy(
  base: Topology,
  profile: TwinProfile,
  start: Point,
  optimum: number,
  baselineSeconds: number,
): Trace {
  const tracker = new Tracker(baselineSeconds, optimum, profile.gpu.count);
  const key = (p: Point) => AXIS_NAMES.map((a) => p[a]).join(',');
  const seen = new Set<string>([key(start)]);
  let current = { point: start, seconds: baselineSeconds };
  let stopReason = 'budget spent';
  while (tracker.runs < BUDGET) {
    // Neighbours one step along each axis, in axis order; three per round.
    const neighbours: Point[] = [];
    for (const axis of AXIS_NAMES) {
      const values = AXES[axis] as readonly number[];
      const i = values.indexOf(current.point[axis]);
      for (const j of [i + 1, i - 1]) {
        if (j < 0 || j >= values.length) continue;
        const next = { ...current.point, [axis]: values[j]! };
        if (!seen.has(key(next))) neighbours.push(next);
      }
    }
    if (neighbours.length === 0) {
      stopReason = 'local optimum: every neighbour tried';
      break;
    }
    const batch = neighbours.slice(0, Math.min(ROUND, BUDGET - tracker.runs));
    let moved = false;
    for (const p of batch) {
      seen.add(key(p));
      const m = measure(build(base, p), profile, { name: 'current', seconds: current.seconds });
      tracker.record(m);
      if (
        m.seconds !== undefined &&
        m.observation.decision?.state === 'better' &&
        m.seconds < current.seconds
      ) {
        current = { point: p, seconds: m.seconds };
        moved = true;
      }
    }
    tracker.endRound();
    void moved;
  }
  tracker.endRound();
  return tracker.trace(stopReason);
}

// ---------------------------------------------------------------- report

function fmtRuns(t: Trace): string {
  return t.runsToWithin === undefined ? `not in ${t.runs}` : String(t.runsToWithin);
}
function fmtHours(t: Trace): string {
  return t.gpuHoursToWithin === undefined ? '—' : t.gpuHoursToWithin.toFixed(1);
}
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The shipped profiles and bench/profiles/*.yaml, or the one BENCH_PROFILE names (a name or a file). */
function benchProfiles(root: string, only?: string): { name: string; profile: TwinProfile }[] {
  const fromFile = (file: string) => {
    const profile = parseProfile(readFileSync(file, 'utf8'), file, root);
    return { name: profile.name, profile };
  };
  if (only?.endsWith('.yaml')) return [fromFile(resolve(only))];
  const extra = join(root, 'bench/profiles');
  const all = [
    ...listProfiles(root).map((name) => ({ name, profile: loadProfile(name, root) })),
    ...(existsSync(extra)
      ? readdirSync(extra)
          .filter((f) => f.endsWith('.yaml'))
          .sort()
          .map((f) => fromFile(join(extra, f)))
      : []),
  ];
  const picked = all.filter((p) => !only || p.name === only || basename(only, '.yaml') === p.name);
  if (only && picked.length === 0)
    throw new Error(`BENCH_PROFILE=${only}: no such profile (have: ${all.map((p) => p.name).join(', ')})`);
  return picked;
}

function main(): void {
  const root = repoRoot(process.env.TOPO_REPO_ROOT ?? process.cwd());
  const preset = parse(
    readFileSync(join(root, 'topologies/presets/8gpu_64rollouts.yaml'), 'utf8'),
  ) as Topology;
  const base = expandPreset(preset);
  const points = allPoints();
  console.log(
    `suggest benchmark: baseline 8gpu_64rollouts; space of ${points.length} topologies (renderer layouts × driver replicas × physics replicas × rollouts in flight × nr_workers);`,
  );
  console.log(
    `${ROUND} candidates per round, budget ${BUDGET} candidate runs; a run costs ${RUN_MINUTES} min × node GPUs (${OOM_MINUTES} min when it runs out of memory); target: within ${WITHIN * 100}% of the space's best.\n`,
  );
  // Fault profiles (crash, flaky, ...) share a hardware profile: benchmark each hardware once.
  const seenHardware = new Map<string, string>();
  for (const { name, profile } of benchProfiles(root, process.env.BENCH_PROFILE)) {
    const hardware = JSON.stringify([
      profile.gpu,
      profile.cpu,
      profile.services,
      profile.runtime,
      profile.steps_per_rollout,
    ]);
    if (seenHardware.has(hardware)) {
      console.log(`## ${name}: same hardware as ${seenHardware.get(hardware)} (fault profile), skipped\n`);
      continue;
    }
    seenHardware.set(hardware, name);
    benchProfile(name, profile, base, points);
  }
}

/** The space's best topology within the 90% memory rule every proposal must keep, found exhaustively. */
function spaceBest(base: Topology, profile: TwinProfile, points: readonly Point[]) {
  const t0 = performance.now();
  let optimum = Number.POSITIVE_INFINITY;
  let optimumPoint: Point | undefined;
  let fitting = 0;
  let admissible = 0;
  for (const p of process.env.BENCH_QUICK ? [] : points) {
    const ss = steadyState(build(base, p), profile);
    if (ss.oom) continue;
    fitting++;
    // The target is the best topology that keeps the 90% memory rule every proposal must keep.
    if (ss.gpuMemoryGb.some((gb) => gb > GPU_MEMORY_LIMITS.error * ss.gpuMemoryTotalGb)) continue;
    admissible++;
    if (ss.secondsPerRollout < optimum) {
      optimum = ss.secondsPerRollout;
      optimumPoint = p;
    }
  }
  return { optimum, optimumPoint, fitting, admissible, exhaustiveMs: performance.now() - t0 };
}

/** One hardware profile: the space's best, then suggest, random search and greedy search against it. */
function benchProfile(name: string, profile: TwinProfile, base: Topology, points: Point[]): void {
  const best = spaceBest(base, profile, points);
  const { optimum } = best;
  const baselineState = steadyState(base, profile);
  const baselineSeconds = baselineState.oom ? Number.POSITIVE_INFINITY : baselineState.secondsPerRollout;
  const suggestTrace = runSuggestLoop(base, profile, optimum);
  const randoms = [...Array(RANDOM_SEEDS).keys()].map((s) =>
    runRandom(base, profile, points, optimum, s + 1, baselineSeconds),
  );
  const start: Point = { renderer: 0, driver: 8, physics: 4, total: 64, workers: 8 };
  const greedy = runGreedy(base, profile, start, optimum, baselineSeconds);
  console.log(`## ${name}`);
  if (!Number.isFinite(optimum) || !Number.isFinite(baselineSeconds)) {
    printWithoutTarget(profile, optimum, baselineSeconds, suggestTrace);
    return;
  }
  const o = best.optimumPoint ?? start;
  console.log(
    `space best ${optimum.toFixed(3)} s/rollout (renderer GPUs [${RENDERER_LAYOUTS[o.renderer]}], driver 4×${o.driver}, physics 4×${o.physics}, ${o.total} in flight, ${o.workers} workers); ${best.fitting}/${points.length} fit in memory, ${best.admissible} within 90%; exhaustive evaluation ${best.exhaustiveMs.toFixed(0)} ms`,
  );
  console.log(
    `baseline ${baselineSeconds.toFixed(3)} s/rollout (${((baselineSeconds / optimum - 1) * 100).toFixed(1)}% above the space's best)`,
  );
  printTable(optimum, suggestTrace, randoms, greedy);
}

/** No target to reach: nothing of the space fits, or the baseline runs out of memory (suggest's path then). */
function printWithoutTarget(
  profile: TwinProfile,
  optimum: number,
  baselineSeconds: number,
  suggestTrace: ReturnType<typeof runSuggestLoop>,
): void {
  console.log(
    Number.isFinite(baselineSeconds)
      ? `no topology of the space fits within 90% of ${profile.gpu.memory_gb} GiB GPUs: nothing to compare`
      : `the baseline runs out of GPU memory on ${profile.gpu.memory_gb} GiB GPUs (space best ${optimum.toFixed(3)} s/rollout): suggest starts from the largest topology the memory model fits`,
  );
  console.log(
    `suggest: ${fmtRuns(suggestTrace)} run(s) / ${fmtHours(suggestTrace)} GPU-hours to within 2%, best ${suggestTrace.best.toFixed(3)} s/rollout (${((suggestTrace.best / optimum - 1) * 100).toFixed(1)}% vs the space's best), ${suggestTrace.oom} out of memory; path ${suggestTrace.path.join(' → ')}`,
  );
  console.log(
    `suggest stopped after ${suggestTrace.runs} runs: ${suggestTrace.stopReason ?? 'budget spent'}\n`,
  );
}

/** The three searches side by side, and how suggest and greedy stopped. */
function printTable(
  optimum: number,
  suggestTrace: ReturnType<typeof runSuggestLoop>,
  randoms: readonly Trace[],
  greedy: Trace,
): void {
  const reached = randoms.filter((r) => r.runsToWithin !== undefined);
  const randomRuns = reached.length ? median(reached.map((r) => r.runsToWithin!)) : undefined;
  const randomOom = randoms.reduce((s, r) => s + r.oom, 0) / randoms.length;
  console.log(
    '| search | candidate runs to within 2% | GPU-hours to within 2% | best after its runs | runs | out of memory |',
  );
  console.log('|---|---|---|---|---|---|');
  console.log(
    `| suggest | ${fmtRuns(suggestTrace)} | ${fmtHours(suggestTrace)} | ${suggestTrace.best.toFixed(3)} (${((suggestTrace.best / optimum - 1) * 100).toFixed(1)}%) | ${suggestTrace.runs} | ${suggestTrace.oom} |`,
  );
  console.log(
    `| random (median of ${RANDOM_SEEDS}; ${reached.length}/${RANDOM_SEEDS} reach it) | ${randomRuns ?? `not in ${BUDGET}`} | ${reached.length ? median(reached.map((r) => r.gpuHoursToWithin!)).toFixed(1) : '—'} | ${median(randoms.map((r) => r.best)).toFixed(3)} | ${BUDGET} | ${randomOom.toFixed(1)} per search |`,
  );
  console.log(
    `| greedy coordinate | ${fmtRuns(greedy)} | ${fmtHours(greedy)} | ${greedy.best.toFixed(3)} (${((greedy.best / optimum - 1) * 100).toFixed(1)}%) | ${greedy.runs} | ${greedy.oom} |`,
  );
  console.log(`suggest path (best after each round): ${suggestTrace.path.join(' → ')}`);
  if (greedy.stopReason) console.log(`greedy stopped: ${greedy.stopReason}`);
  if (suggestTrace.stopReason) console.log(`suggest stopped: ${suggestTrace.stopReason}`);
  console.log(
    `suggest proposals above 90% GPU memory by the twin's own memory truth: ${suggestTrace.over90} of ${suggestTrace.runs}`,
  );
  console.log('');
}

main();
