// The five ways to run a campaign, on the same world (the same runs of the same topologies), the
// same budget and, where they decide, the same decision functions:
//  - topo: the project's campaign (src/campaign/rounds.ts), proposals by `suggest` with predictions,
//    every run decided look by look by the monitor's functions and stopped when decided;
//  - manual: the seed's rule by hand (suggest's tuning rules without predictions, each run read as
//    the full-run value at 45 run-minutes, accepted when ≥ min_improvement better, 2 rounds without
//    a gain and it stops);
//  - random: random topologies of the space, 3 a round, with the project's decisions, to the budget;
//  - asha: Ray Tune's ASHAScheduler (grace 15, reduction factor 3, max_t 120 run-minutes, 3 trials at
//    once) over random topologies, the full-run value reported every 5 run-minutes;
//  - optuna: real Optuna (TPE + Hyperband, the same value every 5 run-minutes) through an ask-and-tell
//    driver (optuna.ts).
// Every method starts from the same baseline and pays for it.
import type { VerdictLike } from '../../src/analysis/decision.js';
import {
  type CampaignIO,
  type PlannedRound,
  type RoundResult,
  runCampaign,
  type Suggestion,
} from '../../src/campaign/loop.js';
import {
  type CampaignPolicy,
  type CampaignState,
  closeRound,
  nextStep,
  type Round,
  type RoundRun,
  roundWinner,
  startCampaign,
} from '../../src/campaign/rounds.js';
import { suggest } from '../../src/suggest/suggest.js';
import type { ClusterLimits, Proposal, TriedCandidate } from '../../src/suggest/types.js';
import type { Decision, Verdict } from '../../src/types/generated/metrics.js';
import type { Topology } from '../../src/types/generated/topology.js';
import {
  type Decided,
  decideBeside,
  decideRound,
  measureReference,
  recorded,
  usableProjection,
} from './decide.js';
import { GPUS, Ledger, MAX_MINUTES, type SimRun, STARTUP, type World } from './sim.js';
import { AXES, AXIS_NAMES, build, type Point, pointKey } from './space.js';

export interface Context {
  world: World;
  base: Topology;
  basePoint: Point;
  policy: CampaignPolicy;
  cluster: ClusterLimits;
  /** GPU-hours every method may spend. */
  budget: number;
  /** Run-minutes between looks (the monitor's cadence). */
  look: number;
  experimentId: string;
  /** Development: every round's runs (CAMPAIGN_DEBUG=1). */
  debug?: (line: string) => void;
}

export interface PredictionRow {
  round: number;
  predicted: number;
  low: number;
  high: number;
  truth: number;
}

export interface MethodResult {
  ledger: Ledger;
  stopReason: string;
  rounds: number;
  predictions: PredictionRow[];
  /** topo and the autopilot: the campaign's rounds as they closed (its state at the conclusion). */
  state?: CampaignState;
}

/**
 * Who plans each turn of topo's loop (default the campaign's planRound): the autopilot bench passes
 * the autopilot's own step (bench/campaign/autopilot.ts), given the ledger (every job's GPU-hours).
 */
export type PlanFactory = (ledger: Ledger) => NonNullable<CampaignIO<Proposal>['plan']>;

const SEED_READ = 45;
/** A run's expected GPU-hours for the budget's look-ahead (decided near 30 run-minutes). */
export const EXPECTED_RUN_GPU_HOURS = (GPUS * (STARTUP + 30)) / 60;

/** The decision a tried run keeps (what suggest's history reads of it). */
function decisionOf(outcome: string): Decision {
  return {
    state: outcome === 'better' ? 'better' : outcome === 'worse' ? 'worse' : 'equivalent',
    reference: { role: 'current best', name: 'current best', pr: null },
    min_improvement: 0.02,
    evidence: [],
  };
}

function jobMinutes(d: Decided): number {
  return d.run.oom ? STARTUP : STARTUP + d.stoppedAt;
}

/**
 * The baseline measured alone: to a recorded reference (`measured-first`), or only to its first usable
 * projection (`beside`: each round measures its reference beside its candidates). One that crashes
 * (a trace crash, not out of memory) is rerun once right after, as a person would, and both jobs are
 * charged. `start`: when the job measured started.
 */
export function measureBaseline(ctx: Context, ledger: Ledger): { run: SimRun; b: Decided; start: number } {
  const { world, policy } = ctx;
  const ready = policy.reference === 'measured-first' ? undefined : usableProjection;
  let run = world.run(ctx.base);
  let b = measureReference(world, run, policy, ctx.look, ready);
  ledger.add(0, jobMinutes(b), run.oom, true);
  let start = 0;
  if (world.crashes(run) && b.outcome === 'failed') {
    start = ledger.end();
    run = world.run(ctx.base, 1);
    b = measureReference(world, run, policy, ctx.look, ready);
    ledger.add(start, jobMinutes(b), run.oom, true);
  }
  return { run, b, start };
}

// ------------------------------------------------------------------------------- topo (the project)

/** The project's campaign as it runs: the record's runs, the loop's state, the ledger. */
interface TopoRun {
  ctx: Context;
  ledger: Ledger;
  state: CampaignState;
  tried: TriedCandidate[];
  verdicts: Map<string, VerdictLike | null>;
  truthOf: Map<string, number>;
  topologyOf: Map<string, Topology>;
  predictions: PredictionRow[];
  previous: { name: string; predictedSeconds: number }[];
  wall: number;
}

function startTopo(ctx: Context): TopoRun {
  const ledger = new Ledger();
  const { run: run0, b, start } = measureBaseline(ctx, ledger);
  const baseSeconds = b.verdict?.projected_full_run?.value ?? null;
  // the baseline is the answer from its first usable projection on
  if (baseSeconds !== null)
    ledger.setIncumbent(
      start + STARTUP + (b.decidedAt ?? b.stoppedAt),
      run0.truth.secondsPerRollout,
      'baseline',
    );
  return {
    ctx,
    ledger,
    state: startCampaign({ name: 'baseline', seconds: baseSeconds, gpuHours: ledger.total() }),
    tried: [ctx.world.tried('baseline', run0, null, b.verdict, baseSeconds === null ? 'failed' : 'accepted')],
    verdicts: new Map([['baseline', b.verdict]]),
    truthOf: new Map([['baseline', run0.truth.secondsPerRollout]]),
    topologyOf: new Map([['baseline', ctx.base]]),
    predictions: [],
    previous: [],
    wall: ledger.end(),
  };
}

/** Records the proposals' predictions (beside their truth) for the prediction error. */
function notePredictions(t: TopoRun, proposals: Proposal[], runs: SimRun[], index: number): void {
  proposals.forEach((p, i) => {
    const r = runs[i]!;
    t.truthOf.set(p.candidate.name, r.truth.secondsPerRollout);
    t.topologyOf.set(p.candidate.name, p.candidate.topology);
    if (!p.prediction) return;
    t.previous.push({ name: p.candidate.name, predictedSeconds: p.prediction.seconds });
    if (!r.oom)
      t.predictions.push({
        round: index,
        predicted: p.prediction.seconds,
        low: p.prediction.low,
        high: p.prediction.high,
        truth: r.truth.secondsPerRollout,
      });
  });
}

/** A round's candidates: the held ones rerun (a new job each), then the proposals. */
interface Entrant {
  name: string;
  parent: string | null;
  attempt: number;
  run: SimRun;
}

function entrantsOf(t: TopoRun, planned: PlannedRound<Proposal>): Entrant[] {
  const reruns = planned.reruns.map((r) => {
    const attempt = (r.attempt ?? 1) + 1;
    const topology = t.topologyOf.get(r.name)!;
    const parent = t.tried.find((x) => x.name === r.name)?.parent ?? null;
    return { name: r.name, parent, attempt, run: t.ctx.world.run(topology, attempt - 1) };
  });
  const runs = planned.proposals.map((p) => t.ctx.world.run(p.candidate.topology));
  notePredictions(t, planned.proposals, runs, planned.index);
  return [
    ...reruns,
    ...planned.proposals.map((p, i) => ({
      name: p.candidate.name,
      parent: p.candidate.parent ?? null,
      attempt: 1,
      run: runs[i]!,
    })),
  ];
}

/**
 * One round of the project's campaign (src/campaign/loop.ts runs them): run, decide, record. Its
 * runs, and its reference job beside them (its GPU-hours, the best as it measured it).
 */
function topoRound(t: TopoRun, planned: PlannedRound<Proposal>): RoundResult {
  const { ctx } = t;
  const entrants = entrantsOf(t, planned);
  const runs = entrants.map((e) => e.run);
  const bestBefore = t.state.best;
  const { decided, reference } = decideWith(ctx, t.ledger, t.wall, runs, t.state, t.verdicts, t.topologyOf);
  const refined = refineBest(t, reference);
  const beside = ctx.policy.reference !== 'measured-first';
  const verdicts = decided.map((d) => decidedVerdict(d, beside ? t.state.best : null));
  const out: RoundRun[] = decided.map((d, i) => {
    const e = entrants[i]!;
    t.ledger.add(t.wall, jobMinutes(d), d.run.oom, false, !d.run.oom && d.stoppedAt >= MAX_MINUTES);
    t.verdicts.set(e.name, verdicts[i]!);
    const change = d.vsReference?.relative_change?.value;
    return {
      name: e.name,
      outcome: d.outcome,
      ...(verdicts[i]?.projected_full_run ? { seconds: verdicts[i]!.projected_full_run!.value } : {}),
      gpuHours: (GPUS * jobMinutes(d)) / 60,
      attempt: e.attempt,
      ...(d.held ? { held: d.held } : {}),
      ...(d.rerun ? { rerun: true } : {}),
      ...(change !== undefined ? { change } : {}),
    };
  });
  const winner = roundWinner(t.state, { index: planned.index, parent: planned.parent, runs: out });
  recordTried(t, entrants, decided, verdicts, winner?.name);
  if (winner) {
    const d = decided[entrants.findIndex((e) => e.name === winner.name)]!;
    t.ledger.setIncumbent(
      t.wall + STARTUP + (d.decidedAt ?? d.stoppedAt),
      t.truthOf.get(winner.name)!,
      winner.name,
    );
  }
  ctx.debug?.(
    `    round ${planned.index} from ${planned.parent} @${Math.round(t.wall)}: ${describeRound(planned, entrants, decided)}`,
  );
  if (!reference || !bestBefore) return { runs: out };
  const gpuHours = (GPUS * jobMinutes(reference)) / 60;
  return {
    runs: out,
    reference: { name: bestBefore.name, gpuHours, ...(refined !== undefined ? { seconds: refined } : {}) },
  };
}

/** The record suggest reads: each entrant's run (a rerun replaces its candidate's earlier one). */
function recordTried(
  t: TopoRun,
  entrants: Entrant[],
  decided: Decided[],
  verdicts: Array<VerdictLike | null>,
  winner: string | undefined,
): void {
  decided.forEach((d, i) => {
    const e = entrants[i]!;
    const status = d.run.oom ? 'failed' : e.name === winner ? 'accepted' : 'rejected';
    const tr = t.ctx.world.tried(e.name, d.run, e.parent, verdicts[i]!, status);
    if (tr.observation && !d.run.oom) tr.observation.decision = decisionOf(d.outcome);
    const at = t.tried.findIndex((x) => x.name === e.name);
    if (at >= 0) t.tried[at] = tr;
    else t.tried.push(tr);
  });
}

function describeRound(planned: PlannedRound<Proposal>, entrants: Entrant[], decided: Decided[]): string {
  return decided
    .map((d, i) => {
      const e = entrants[i]!;
      const p = planned.proposals.find((x) => x.candidate.name === e.name);
      const what = p ? `[${p.change.slice(0, 60)}]` : `[rerun, attempt ${e.attempt}]`;
      const pred = p?.prediction
        ? ` pred ${p.prediction.seconds.toFixed(3)} [${p.prediction.low.toFixed(3)}, ${p.prediction.high.toFixed(3)}]`
        : '';
      return `${e.name} ${what} truth ${d.run.truth.secondsPerRollout.toFixed(3)}${pred} ${d.run.shape.name} → ${d.outcome}@${d.decidedAt ?? '-'} stop ${d.stoppedAt}${d.held ? ` (held: ${d.held})` : ''}`;
    })
    .join('; ');
}

/** suggest's answer for the campaign's state (the record's runs, the current best, the predictions made). */
function topoSuggestion(t: TopoRun): Suggestion<Proposal> {
  const { ctx } = t;
  const result = suggest({
    experimentId: ctx.experimentId,
    baseTopology: ctx.base,
    cluster: ctx.cluster,
    maxParallel: ctx.policy.parallel,
    count: ctx.policy.parallel,
    tried: t.tried,
    currentBest: t.state.best?.name ?? null,
    minImprovement: ctx.policy.minImprovement,
    previousPredictions: t.previous,
  });
  return { proposals: result.proposals, stop: result.stop, outlook: result.outlook ?? null };
}

/**
 * The project's campaign: the loop of src/campaign/loop.ts (runCampaign), suggest's
 * proposals, the monitor's decisions, each round's reference beside its candidates.
 */
export async function topoCampaign(ctx: Context, planner?: PlanFactory): Promise<MethodResult> {
  const { policy } = ctx;
  const t = startTopo(ctx);
  // a round costs its candidates and, beside them, its reference
  const perRun =
    policy.reference === 'measured-first' ? EXPECTED_RUN_GPU_HOURS : (4 / 3) * EXPECTED_RUN_GPU_HOURS;
  const { state, reason } = await runCampaign(
    t.state,
    { ...policy, gpuHours: ctx.budget },
    {
      suggest: (state) => {
        t.state = state;
        return topoSuggestion(t);
      },
      run: (state, planned) => {
        t.state = state;
        const result = topoRound(t, planned);
        t.wall = Math.max(t.wall, t.ledger.end());
        return result;
      },
      ...(planner ? { plan: planner(t.ledger) } : {}),
    },
    perRun,
  );
  t.state = state;
  return {
    ledger: t.ledger,
    stopReason: reason,
    rounds: state.rounds.length,
    predictions: t.predictions,
    state,
  };
}

// ------------------------------------------------------------------------------- the seed by hand

/** A run read as the seed's rule reads it: its value at the 45-minute read, null when it failed first. */
function seedRead(world: World, r: SimRun): { minutes: number; value: number | null } {
  if (r.oom) return { minutes: STARTUP, value: null };
  if (world.crashedBy(r, SEED_READ)) return { minutes: STARTUP + (r.shape.crashAtMinutes ?? 0), value: null };
  return { minutes: STARTUP + SEED_READ, value: world.fullRun(r, SEED_READ) ?? null };
}

/** The 45-minute read as a stable verdict (±0.5%). */
function seedVerdict(v: number): VerdictLike {
  return {
    state: 'stable',
    projected_full_run: { value: v, low: v * 0.995, high: v * 1.005 },
    minutes_of_data: SEED_READ,
  };
}

/** The baseline by hand (a crashed one is rerun once), read at 45 minutes. */
function manualBaseline(ctx: Context, ledger: Ledger): { run: SimRun; value: number | null } {
  const { world } = ctx;
  let run0 = world.run(ctx.base);
  let r0 = seedRead(world, run0);
  ledger.add(0, r0.minutes, run0.oom, true);
  // a baseline that crashed is rerun once
  if (world.crashes(run0) && r0.value === null) {
    const start = ledger.end();
    run0 = world.run(ctx.base, 1);
    r0 = seedRead(world, run0);
    ledger.add(start, r0.minutes, run0.oom, true);
  }
  return { run: run0, value: r0.value };
}

/** The seed's rule by hand: the tuning rules, a 45-minute read, ≥ min_improvement better, stop after 2 dry rounds. */
export function manualCampaign(ctx: Context): MethodResult {
  const { world, policy } = ctx;
  const ledger = new Ledger();
  const baseline = manualBaseline(ctx, ledger);
  let wall = ledger.end();
  if (baseline.value !== null) ledger.setIncumbent(wall, baseline.run.truth.secondsPerRollout, 'baseline');
  const value = baseline.value;
  const tried: TriedCandidate[] = [
    world.tried(
      'baseline',
      baseline.run,
      null,
      value === null ? null : seedVerdict(value),
      value === null ? 'failed' : 'accepted',
    ),
  ];
  let state = startCampaign({ name: 'baseline', seconds: value, gpuHours: ledger.total() });
  let stopReason = 'budget spent';
  for (;;) {
    const step = nextStep(state, { ...policy, gpuHours: ctx.budget }, (GPUS * (STARTUP + SEED_READ)) / 60);
    if (step.kind === 'conclude') {
      stopReason = step.reason;
      break;
    }
    const result = suggest({
      experimentId: ctx.experimentId,
      baseTopology: ctx.base,
      cluster: ctx.cluster,
      maxParallel: policy.parallel,
      count: step.count,
      tried,
      currentBest: state.best?.name ?? null,
      predict: false,
    });
    if (result.stop.stop || result.proposals.length === 0) {
      stopReason = `suggest: ${result.stop.reason}`;
      break;
    }
    const round: Round = { index: step.index, parent: step.parent, runs: [] };
    const truths = new Map<string, number>();
    for (const p of result.proposals) {
      const { run, truth } = manualRun(ctx, ledger, state, p, wall);
      round.runs.push(run);
      truths.set(p.candidate.name, truth.secondsPerRollout);
      tried.push(truth.tried);
    }
    const winner = roundWinner(state, round);
    wall = ledger.end();
    if (winner) ledger.setIncumbent(wall, truths.get(winner.name)!, winner.name);
    state = closeRound(state, round);
  }
  return { ledger, stopReason, rounds: state.rounds.length, predictions: [] };
}

/** One proposal run by hand from `wall`: its round entry, its true speed and what suggest reads of it next. */
function manualRun(
  ctx: Context,
  ledger: Ledger,
  state: CampaignState,
  p: Proposal,
  wall: number,
): { run: RoundRun; truth: { secondsPerRollout: number; tried: TriedCandidate } } {
  const { world, policy } = ctx;
  const r = world.run(p.candidate.topology);
  const x = seedRead(world, r);
  ledger.add(wall, x.minutes, r.oom);
  const better =
    x.value !== null && state.best !== null && x.value <= state.best.seconds * (1 - policy.minImprovement);
  const outcome = x.value === null ? 'failed' : state.best === null || better ? 'better' : 'not-better';
  const run: RoundRun = {
    name: p.candidate.name,
    outcome,
    ...(x.value !== null ? { seconds: x.value } : {}),
    gpuHours: (GPUS * x.minutes) / 60,
  };
  const t = world.tried(
    p.candidate.name,
    r,
    p.candidate.parent ?? null,
    x.value === null ? null : seedVerdict(x.value),
    outcome === 'better' ? 'accepted' : x.value === null ? 'failed' : 'rejected',
  );
  if (t.observation && x.value !== null) t.observation.decision = decisionOf(outcome);
  return { run, truth: { secondsPerRollout: r.truth.secondsPerRollout, tried: t } };
}

// ------------------------------------------------------------------------------- random + decisions

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

function randomPoint(rand: () => number): Point {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  return {
    renderer: pick(AXES.renderer),
    driver: pick(AXES.driver),
    physics: pick(AXES.physics),
    total: pick(AXES.total),
    workers: pick(AXES.workers),
  };
}

/**
 * A decided run's value on the reference's scale: the recorded best × (1 + the decision's relative
 * change) when it was decided against a reference run beside it (its own projection at that young
 * age still carries the start-up), else its projection. The verdict is recorded the same way.
 */
export function decidedVerdict(d: Decided, best: { seconds: number } | null): VerdictLike | null {
  const c = d.decision?.relative_change;
  if (!d.verdict || !best || !c || d.decision?.reference.name !== 'reference') return d.verdict;
  const at = (x: number) => Math.round(best.seconds * (1 + x) * 1e4) / 1e4;
  return {
    ...d.verdict,
    state: 'stable',
    projected_full_run: { value: at(c.value), low: at(c.low), high: at(c.high) },
    decision_estimate: null,
  };
}

/**
 * The project's decisions for a round of another method: beside a new job of the current best (the
 * policy's default, charged to the ledger), or against its recorded value.
 */
function decideWith(
  ctx: Context,
  ledger: Ledger,
  wall: number,
  runs: SimRun[],
  state: CampaignState,
  verdicts: Map<string, VerdictLike | null>,
  topologies: Map<string, Topology>,
): { decided: Decided[]; reference?: Decided } {
  const { world, policy } = ctx;
  const best = state.best;
  if (!best) return { decided: decideRound(world, runs, null, policy, ctx.look) };
  if (policy.reference === 'measured-first') {
    const ref = recorded(best.name, verdicts.get(best.name) ?? null);
    return { decided: decideRound(world, runs, ref, policy, ctx.look) };
  }
  const refRun = world.run(topologies.get(best.name)!, 100 + state.rounds.length + 1);
  const { decided, reference } = decideBeside(world, runs, refRun, policy, ctx.look);
  ledger.add(wall, jobMinutes(reference), refRun.oom);
  return { decided, reference };
}

/** Relative width of a verdict's projection interval (∞ without one). */
function width(v: VerdictLike | null | undefined): number {
  const p = v?.projected_full_run;
  return p && p.value > 0 ? (p.high - p.low) / p.value : Number.POSITIVE_INFINITY;
}

/**
 * The best's record after a round beside its reference: the reference job's verdict when it measured
 * the best more precisely than the record had it (a young baseline, say), and the best's value with it.
 */
function refineBest(t: TopoRun, reference: Decided | undefined): number | undefined {
  const best = t.state.best;
  const v = reference?.verdict;
  if (!best || !v?.projected_full_run || !usableProjection(v)) return undefined;
  if (width(v) >= width(t.verdicts.get(best.name))) return undefined;
  t.verdicts.set(best.name, v);
  const entry = t.tried.find((r) => r.name === best.name);
  if (entry?.observation)
    entry.observation.verdict = { ...(v as Verdict), evidence: (v as Verdict).evidence ?? [] };
  t.state = { ...t.state, best: { ...best, seconds: v.projected_full_run.value } };
  return v.projected_full_run.value;
}

/** Random topologies of the space, `parallel` a round, decided by the project's decisions, to the budget. */
export function randomCampaign(ctx: Context): MethodResult {
  const { world, policy } = ctx;
  const rand = mulberry32(world.seed * 7919 + 17);
  const ledger = new Ledger();
  const { run: run0, b, start: baseStart } = measureBaseline(ctx, ledger);
  let wall = ledger.end();
  const baseSeconds = b.verdict?.projected_full_run?.value ?? null;
  // the baseline is the answer from its first usable projection on
  if (baseSeconds !== null)
    ledger.setIncumbent(
      baseStart + STARTUP + (b.decidedAt ?? b.stoppedAt),
      run0.truth.secondsPerRollout,
      'baseline',
    );
  const verdicts = new Map<string, VerdictLike | null>([['baseline', b.verdict]]);
  const topologies = new Map<string, Topology>([['baseline', ctx.base]]);
  const seen = new Set([pointKey(ctx.basePoint)]);
  let state = startCampaign({ name: 'baseline', seconds: baseSeconds, gpuHours: ledger.total() });
  let n = 0;
  while (ledger.total() + policy.parallel * EXPECTED_RUN_GPU_HOURS <= ctx.budget) {
    const points: Point[] = [];
    for (let tries = 0; points.length < policy.parallel && tries < 1000; tries++) {
      const p = randomPoint(rand);
      if (seen.has(pointKey(p))) continue;
      seen.add(pointKey(p));
      points.push(p);
    }
    if (points.length === 0) break;
    const runs = points.map((p) => world.run(build(ctx.base, p)));
    const { decided } = decideWith(ctx, ledger, wall, runs, state, verdicts, topologies);
    const round: Round = { index: state.rounds.length + 1, parent: state.best?.name ?? 'baseline', runs: [] };
    decided.forEach((d) => {
      const name = `random-${++n}`;
      const v = decidedVerdict(d, policy.reference !== 'measured-first' ? state.best : null);
      ledger.add(wall, jobMinutes(d), d.run.oom, false, !d.run.oom && d.stoppedAt >= MAX_MINUTES);
      verdicts.set(name, v);
      topologies.set(name, d.run.topology);
      round.runs.push({
        name,
        outcome: d.outcome,
        ...(v?.projected_full_run ? { seconds: v.projected_full_run.value } : {}),
        gpuHours: (GPUS * jobMinutes(d)) / 60,
      });
    });
    const winner = roundWinner(state, round);
    if (winner) {
      const i = round.runs.findIndex((r) => r.name === winner.name);
      const d = decided[i]!;
      ledger.setIncumbent(
        wall + STARTUP + (d.decidedAt ?? d.stoppedAt),
        d.run.truth.secondsPerRollout,
        winner.name,
      );
    }
    state = closeRound(state, round);
    wall = Math.max(wall, ...decided.map((d) => wall + jobMinutes(d)));
  }
  return { ledger, stopReason: 'budget spent', rounds: state.rounds.length, predictions: [] };
}

// ------------------------------------------------------------------------------- ASHA (Ray Tune)

/**
 * Ray Tune's ASHAScheduler (AsyncHyperBandScheduler, one bracket, stop_last_trials), minimising:
 * rungs at grace × rf^k below max_t (15 and 45 run-minutes); a trial reaching a rung for the first
 * time stops unless its value is within the best 1/rf of the values recorded there so far (numpy's
 * nanpercentile, linear); at max_t it stops (complete). Ray negates a "min" metric.
 */
export class AshaScheduler {
  private readonly rungs: Array<{ milestone: number; recorded: Map<string, number> }>;
  private readonly maxT: number;
  private readonly rf: number;
  constructor(grace = 15, maxT = MAX_MINUTES, rf = 3) {
    this.maxT = maxT;
    this.rf = rf;
    const maxRungs = Math.floor(Math.log(maxT / grace) / Math.log(rf) + 1);
    this.rungs = [...Array(maxRungs).keys()]
      .reverse()
      .map((k) => ({ milestone: grace * rf ** k, recorded: new Map() }));
  }

  /** 'continue' or 'stop' for a trial's result at run-minute t with value v (lower is better). */
  onResult(trial: string, t: number, v: number): 'continue' | 'stop' {
    if (t >= this.maxT) return 'stop';
    const reward = -v;
    for (const rung of this.rungs) {
      if (t < rung.milestone || rung.recorded.has(trial)) continue;
      const values = [...rung.recorded.values()];
      const cutoff = values.length ? percentile(values, (1 - 1 / this.rf) * 100) : null;
      rung.recorded.set(trial, reward);
      return cutoff !== null && reward < cutoff ? 'stop' : 'continue';
    }
    return 'continue';
  }
}

/** numpy.percentile with linear interpolation. */
export function percentile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  const pos = ((s.length - 1) * q) / 100;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}

export interface Trial {
  name: string;
  run: SimRun;
  start: number;
  /** Last reported value and its run-minute. */
  last?: { t: number; v: number };
  done?: 'complete' | 'stopped' | 'error';
}

/** What a method does around asyncTrials: proposes, judges each report, hears each end, names its answer. */
export interface TrialHooks {
  next: () => Promise<{ name: string; topology: Topology } | null>;
  onReport: (t: Trial, minute: number, value: number) => Promise<'continue' | 'stop'>;
  onEnd: (t: Trial) => Promise<void>;
  incumbent: (trials: Trial[]) => Promise<Trial | null>;
}

/** The trials of one asyncTrials campaign, the ones still running, and whether `next` ran dry. */
interface TrialPool {
  readonly ledger: Ledger;
  readonly trials: Trial[];
  readonly running: Trial[];
  exhausted: boolean;
}

const TRIAL_STEP = 5;

/**
 * Trials `parallel` at a time, reporting the full-run value every 5 run-minutes: `next` proposes a
 * topology (null when it has none), `onReport` says whether the trial goes on, `onEnd` hears how it
 * ended, `incumbent` names the method's answer. Runs until the budget is spent.
 */
export async function asyncTrials(ctx: Context, hooks: TrialHooks): Promise<Ledger> {
  const pool: TrialPool = { ledger: new Ledger(), trials: [], running: [], exhausted: false };
  for (let wall = 0; ; wall += TRIAL_STEP) {
    await startTrials(ctx, hooks, pool, wall);
    if (pool.running.length === 0) break;
    const next = wall + TRIAL_STEP;
    for (const t of [...pool.running]) {
      const end = await trialEnd(ctx.world, hooks, t, next);
      if (end) await endTrial(pool, hooks, t, end, next);
    }
    const best = await hooks.incumbent(pool.trials);
    if (best) pool.ledger.setIncumbent(next, best.run.truth.secondsPerRollout, best.name);
    if (await stopAtBudget(ctx, hooks, pool, next)) break;
  }
  return pool.ledger;
}

/** Starts trials on free slots while the budget lasts (a trial is charged as it runs). */
async function startTrials(ctx: Context, hooks: TrialHooks, pool: TrialPool, wall: number): Promise<void> {
  const { running } = pool;
  while (
    !pool.exhausted &&
    running.length < ctx.policy.parallel &&
    pool.ledger.gpuHoursAt(wall) < ctx.budget
  ) {
    const n = await hooks.next();
    if (!n) {
      pool.exhausted = true;
      break;
    }
    const t: Trial = { name: n.name, run: ctx.world.run(n.topology), start: wall };
    pool.trials.push(t);
    running.push(t);
  }
}

/** How a running trial ends by wall-minute `next` (its report at a 5-minute mark may stop it), or undefined. */
async function trialEnd(
  world: World,
  hooks: TrialHooks,
  t: Trial,
  next: number,
): Promise<Trial['done'] | undefined> {
  const minute = next - t.start - STARTUP;
  if (t.run.oom && next - t.start >= STARTUP) return 'error';
  if (!(minute > 0 && minute % TRIAL_STEP === 0)) return undefined;
  if (world.crashedBy(t.run, minute)) return 'error';
  const v = world.fullRun(t.run, minute);
  if (v === undefined) return minute >= MAX_MINUTES ? 'error' : undefined;
  t.last = { t: minute, v };
  const action = await hooks.onReport(t, minute, v);
  if (action === 'stop') return minute >= MAX_MINUTES ? 'complete' : 'stopped';
  return undefined;
}

/** Ends a trial: charged for what it ran (an OOM its startup, a crash up to the crash). */
async function endTrial(
  pool: TrialPool,
  hooks: TrialHooks,
  t: Trial,
  end: NonNullable<Trial['done']>,
  next: number,
): Promise<void> {
  t.done = end;
  pool.running.splice(pool.running.indexOf(t), 1);
  const ran = t.run.oom
    ? STARTUP
    : t.run.shape.crashAtMinutes !== undefined && end === 'error'
      ? STARTUP + t.run.shape.crashAtMinutes
      : next - t.start;
  pool.ledger.add(t.start, Math.min(ran, next - t.start), t.run.oom, t.name === 'baseline');
  await hooks.onEnd(t);
}

/** The budget is hard: what runs when it is spent is stopped; true when it is. */
async function stopAtBudget(
  ctx: Context,
  hooks: TrialHooks,
  pool: TrialPool,
  next: number,
): Promise<boolean> {
  const { ledger, running } = pool;
  const charged = ledger.gpuHoursAt(next) + running.reduce((a, t) => a + (GPUS * (next - t.start)) / 60, 0);
  if (charged < ctx.budget) return false;
  for (const t of running.splice(0)) {
    t.done = 'stopped';
    ledger.add(t.start, next - t.start, false, t.name === 'baseline');
    await hooks.onEnd(t);
  }
  const last = await hooks.incumbent(pool.trials);
  if (last) ledger.setIncumbent(next, last.run.truth.secondsPerRollout, last.name);
  return true;
}

/** ASHA as Ray Tune runs it, over random topologies (the baseline first). */
export async function ashaCampaign(ctx: Context): Promise<MethodResult> {
  const rand = mulberry32(ctx.world.seed * 104729 + 3);
  const scheduler = new AshaScheduler(15, MAX_MINUTES, 3);
  const seen = new Set<string>();
  let n = 0;
  const ledger = await asyncTrials(ctx, {
    next: async () => {
      if (n === 0) {
        n++;
        seen.add(pointKey(ctx.basePoint));
        return { name: 'baseline', topology: ctx.base };
      }
      for (let tries = 0; tries < 1000; tries++) {
        const p = randomPoint(rand);
        if (seen.has(pointKey(p))) continue;
        seen.add(pointKey(p));
        return { name: `asha-${n++}`, topology: build(ctx.base, p) };
      }
      return null;
    },
    onReport: async (t, minute, v) => scheduler.onResult(t.name, minute, v),
    onEnd: async () => {},
    // Ray's get_best_result(scope="last"): the best last reported value among trials that did not error
    incumbent: async (trials) => {
      const ok = trials.filter((t) => t.last && t.done !== 'error');
      return ok.sort((a, b) => a.last!.v - b.last!.v)[0] ?? null;
    },
  });
  return { ledger, stopReason: 'budget spent', rounds: 0, predictions: [] };
}

export { AXIS_NAMES };
