// suggest(): from the experiment's evidence to up to max_parallel new candidates, or the advice
// to stop. Pure: the record adapter and the file/PR writing live in src/usecases/suggest.ts.
import { CAPACITY_IMBALANCE_LIMIT, GPU_MEMORY_LIMITS, SERVICES, TIMELINE } from '../catalog/alpasim.js';
import { capacitySummary } from '../topology/capacity.js';
import { canonicalJson, topologyHash } from '../topology/expand.js';
import { EXPERIMENT_DEFAULTS } from '../topology/settings.js';
import type { Candidate } from '../types/generated/candidate.js';
import type { Topology } from '../types/generated/topology.js';
import { type Evidence, figureOfTried, readEvidence, secondsPerRollout } from './evidence.js';
import { fitInMemory } from './fit-memory.js';
import { classifyChange, moveTag, outcomeOf, stopForNoProgress } from './history.js';
import {
  fitMemoryModel,
  predictConservative,
  predictMemory,
  respectFailures,
  serviceSet,
} from './memory-model.js';
import { searchPredicted } from './model-search.js';
import { type Move, type MoveContext, movesFor } from './moves.js';
import {
  type Calibration,
  calibrate,
  DROP_Z,
  expectedDecisionMinutes,
  MAX_MISFIT,
  measurementOf,
  PREDICTION_LEVEL,
  predictSeconds,
} from './predict.js';
import { activeServices, cacheSize, clone, concurrency, gpusOf, replicas } from './topology-ops.js';
import type { Proposal, ProposalPrediction, SuggestInput, SuggestResult, TriedCandidate } from './types.js';

export const DEFAULT_PATIENCE_ROUNDS = 2;
export const DEFAULT_MIN_IMPROVEMENT = EXPERIMENT_DEFAULTS.minImprovement;

export type HashFn = (topology: Topology) => string;

/**
 * Rules every proposal keeps (the topology validator checks more when injected):
 * skip and non-topology keys as in the base, GPU indices on the node, renderer without replicas,
 * positive integers everywhere.
 */
export function proposalProblems(t: Topology, base: Topology, gpusPerNode: number): string[] {
  const problems: string[] = [];
  for (const svc of SERVICES) {
    const before = base.runtime?.endpoints?.[svc]?.skip ?? false;
    const after = t.runtime?.endpoints?.[svc]?.skip ?? false;
    if (before !== after) problems.push(`runtime.endpoints.${svc}.skip changed (${before} → ${after})`);
    if ((base.services?.[svc] === undefined) !== (t.services?.[svc] === undefined)) {
      problems.push(`services.${svc} added or removed`);
    }
  }
  if (canonicalJson(t.trafficsim) !== canonicalJson(base.trafficsim))
    problems.push('trafficsim.server changed');
  if (canonicalJson(t.eval) !== canonicalJson(base.eval)) problems.push('eval changed');
  for (const svc of activeServices(t)) {
    for (const gpu of gpusOf(t, svc) ?? []) {
      if (!Number.isInteger(gpu) || gpu < 0 || gpu >= gpusPerNode) {
        problems.push(`services.${svc}.gpus has ${gpu}, outside 0..${gpusPerNode - 1}`);
      }
    }
    const n = t.runtime?.endpoints?.[svc]?.n_concurrent_rollouts ?? 1;
    if (!Number.isInteger(n) || n < 1)
      problems.push(`runtime.endpoints.${svc}.n_concurrent_rollouts is ${n}`);
    const r = replicas(t, svc);
    if (!Number.isInteger(r) || r < 1) problems.push(`services.${svc}.replicas_per_container is ${r}`);
  }
  if (replicas(t, 'renderer') > 1)
    problems.push('services.renderer.replicas_per_container > 1 (NRE supports one)');
  const workers = t.runtime?.nr_workers ?? 1;
  if (!Number.isInteger(workers) || workers < 1) problems.push(`runtime.nr_workers is ${workers}`);
  // What `topo validate` warns about is not proposed either (capacity-imbalance, cache-size).
  const summary = capacitySummary(t);
  if (summary.imbalance > CAPACITY_IMBALANCE_LIMIT && summary.imbalance > capacitySummary(base).imbalance)
    problems.push(
      `capacities differ by ${Math.round((summary.imbalance - 1) * 100)}% (limit ${Math.round((CAPACITY_IMBALANCE_LIMIT - 1) * 100)}%)`,
    );
  for (const svc of ['renderer', 'physics'] as const) {
    const cache = activeServices(t).includes(svc) ? cacheSize(t, svc) : undefined;
    if (cache !== undefined && cache < concurrency(t, svc) + 1)
      problems.push(`${svc} cache ${cache} below n_concurrent_rollouts + 1 (${concurrency(t, svc) + 1})`);
  }
  return problems;
}

/** The candidate the proposals change: the record's best, else the fastest measured run. */
export function pickParent(
  tried: readonly TriedCandidate[],
  currentBest?: string | null,
): TriedCandidate | undefined {
  const named = currentBest ? tried.find((r) => r.name === currentBest) : undefined;
  if (named && secondsPerRollout(named) !== undefined) return named;
  const measured = tried.filter(
    (r) => !r.observation?.failure && r.status !== 'failed' && secondsPerRollout(r) !== undefined,
  );
  // ranked by the figure every surface shows (a decided run's is its decision's), as the record's best
  measured.sort((a, b) => (figureOfTried(a) ?? 0) - (figureOfTried(b) ?? 0));
  return measured[0];
}

const SHORT: Record<Move['kind'], string> = {
  'scale-bottleneck': 'scale',
  'raise-workers': 'workers',
  'lower-total': 'lower-total',
  'raise-total': 'raise-total',
  rebalance: 'rebalance',
  'resize-caches': 'caches',
  'place-free': 'place',
  'fit-memory': 'fit-memory',
  'model-search': 'model',
};

function uniqueName(base: string, taken: Set<string>): string {
  const stem = base.slice(0, 36).replace(/-+$/, '');
  let name = stem;
  for (let i = 2; taken.has(name); i++) name = `${stem}-${i}`;
  taken.add(name);
  return name;
}

export interface SuggestOptions {
  /** Topology identity; defaults to the shared normalised hash (src/topology/expand.ts). */
  hash?: HashFn;
  /** Extra validation (the topology validator): messages for problems, empty when valid. */
  validate?: (topology: Topology) => string[];
  /** Hashes not to propose (e.g. refused by the file validator on an earlier attempt). */
  exclude?: ReadonlySet<string>;
  /**
   * A person asked for `count` proposals (`topo suggest --count`): the moves the calibrated model
   * calls dominated (predicted to lose to its best by more than min_improvement) fill what the others
   * leave, each saying so. The autopilot and the campaign loop keep only the undominated.
   */
  fillCount?: boolean;
}

/**
 * What the memory limit is checked on: per GPU, the conservative prediction (envelope and margin,
 * against the 90% error line) or the plain one scaled so that the 80% line `topo validate` warns at
 * maps onto 90%, whichever is larger. So a move passes only when both hold; a GPU the parent already
 * has above 80% may stay where it is but not grow.
 */
export function limitView(
  t: Topology,
  memory: ReturnType<typeof fitMemoryModel>,
  gpuMemoryGiB: number,
  /** The measured parent whose GPUs above 80% may stay; null for one that did not fit (it ran out of memory). */
  parent: Topology | null,
  /** Services together on a GPU where no measured run had them: also under the 80% line (the model's own search). */
  novelAtWarning = false,
): Proposal['predictedMemory'] {
  const warn = GPU_MEMORY_LIMITS.warning * gpuMemoryGiB;
  const parentPlain = new Map(
    parent ? predictMemory(parent, memory.model, gpuMemoryGiB).map((p) => [p.gpu, p.gib]) : [],
  );
  const plain = new Map(predictMemory(t, memory.model, gpuMemoryGiB).map((p) => [p.gpu, p.gib]));
  const measured = new Set(memory.measuredSets ?? []);
  return predictConservative(t, memory, gpuMemoryGiB).map((p) => {
    const line = Math.max(warn, parentPlain.get(p.gpu) ?? 0);
    const scaled = ((plain.get(p.gpu) ?? 0) / line) * GPU_MEMORY_LIMITS.error * gpuMemoryGiB;
    // services together on a GPU where no measured run had them together: the conservative
    // prediction is an extrapolation, so the model's own search keeps it under the 80% line too
    const novel =
      novelAtWarning && measured.size > 0 && !measured.has(serviceSet(t, p.gpu))
        ? (p.gib / GPU_MEMORY_LIMITS.warning) * GPU_MEMORY_LIMITS.error
        : 0;
    const gib = Math.max(p.gib, scaled, novel);
    return { gpu: p.gpu, gib, fraction: gib / gpuMemoryGiB };
  });
}

type MemoryFit = ReturnType<typeof fitMemoryModel>;

/** A move that passed every check, with its score and predictions. */
interface ScoredMove {
  move: Move;
  hash: string;
  score: number;
  predicted: Proposal['predictedMemory'];
  prediction?: ProposalPrediction;
}

/** What one round of suggest() reads: the input, its parent's evidence, the models, and what it rejected. */
interface Round {
  readonly input: SuggestInput;
  readonly options: SuggestOptions;
  readonly hash: HashFn;
  readonly memory: MemoryFit;
  readonly parent: TriedCandidate;
  readonly evidence: Evidence;
  /** The rules' memory check; `strict` also keeps novel GPU sharing under the 80% line (the model's search). */
  readonly ctx: MoveContext;
  readonly strict: MoveContext;
  readonly calibration: Calibration | null;
  /** Whether the calibrated model reproduces its readings well enough to rank moves. */
  readonly reliable: boolean;
  readonly minImprovement: number;
  readonly triedHashes: ReadonlySet<string>;
  readonly rejected: SuggestResult['rejected'];
}

export function suggest(input: SuggestInput, options: SuggestOptions = {}): SuggestResult {
  const hash = options.hash ?? topologyHash;
  const memory = respectFailures(
    fitMemoryModel(input.tried, input.cluster.memoryModel),
    input.tried,
    input.cluster.gpuMemoryGiB,
  );
  const count = Math.max(0, Math.min(input.count ?? input.maxParallel, input.maxParallel));
  const parent = pickParent(input.tried, input.currentBest);
  const rejected: SuggestResult['rejected'] = [];
  if (!parent) return withoutParent(input, options, memory, rejected);

  const round = roundOf(input, options, hash, memory, parent, rejected);
  const moves = candidateMoves(round);
  const scored = scoreMoves(round, moves);
  const pool = round.reliable ? undominated(scored, round.minImprovement, rejected) : [...scored];
  const picked = pickDiverse(pool, count, []);
  // a person who asked for this many (`topo suggest --count`) gets the dominated moves after the rest
  const filled = options.fillCount ? fillDominated(scored, pool, picked, count, rejected) : new Map();
  const taken = new Set(input.tried.map((r) => r.name));
  const proposals = picked.map((p) => proposalOf(round, p, taken, filled));
  const outlook = round.reliable ? modelOutlook(scored, picked) : undefined;
  const stop = roundStop(round, proposals, outlook, moves.length);
  return {
    proposals,
    stop: stop ?? { stop: false, reason: `${proposals.length} proposal(s) from ${parent.name}'s evidence` },
    memory,
    parent: parent.name,
    rejected,
    ...(outlook ? { outlook } : {}),
    ...(round.calibration ? { calibration: calibrationSummary(round.calibration, round.reliable) } : {}),
  };
}

/**
 * No measured run to change. Every run ended in a failure: waiting brings no evidence, and changing a
 * broken topology blindly is a guess, so stop and say which failure to fix, unless the baseline ran
 * out of GPU memory and a smaller topology is predicted to fit.
 */
function withoutParent(
  input: SuggestInput,
  options: SuggestOptions,
  memory: MemoryFit,
  rejected: SuggestResult['rejected'],
): SuggestResult {
  const waiting = input.tried.length > 0;
  const failures = input.tried.filter((r) => r.status === 'failed' || r.observation?.failure);
  const allFailed = waiting && failures.length === input.tried.length;
  const first = failures[0]?.observation?.failure;
  const oom = allFailed ? failures.find((r) => r.observation?.failure?.kind === 'gpu-oom') : undefined;
  const fitted = oom ? fittedAfterOutOfMemory(input, options, memory, rejected, oom) : null;
  if (fitted) return fitted;
  return {
    proposals: [],
    stop: allFailed
      ? {
          stop: true,
          reason: `every run so far failed (${failures[0]?.name}${first ? `: ${first.kind}: ${first.message}` : ''}): there is no evidence to suggest from; ${first?.kind === 'gpu-oom' ? 'fit the baseline to this GPU memory (a smaller preset or fewer replicas per GPU)' : "fix that cause (the job's log says more) and run the baseline again"}`,
        }
      : {
          stop: false,
          reason: waiting
            ? 'no measured candidate in the record yet: once the baseline (or a candidate) is decided, record it (merge its pull request, or `topo record <experiment> <candidate> --accept`; `topo watch` records what it decides)'
            : 'no candidate yet: run the baseline first',
        },
    memory,
    parent: null,
    rejected,
  };
}

/** The proposals sized to fit after `oom` ran out of GPU memory, or null when none is predicted to. */
function fittedAfterOutOfMemory(
  input: SuggestInput,
  options: SuggestOptions,
  memory: MemoryFit,
  rejected: SuggestResult['rejected'],
  oom: TriedCandidate,
): SuggestResult | null {
  const fitted = afterOutOfMemory(input, oom, memory, options, rejected);
  if (!fitted.length) return null;
  const names = new Set(input.tried.map((r) => r.name));
  return {
    proposals: fitted.map((f) => ({
      ...f,
      candidate: { ...f.candidate, name: uniqueName(f.candidate.name, names) },
    })),
    stop: {
      stop: false,
      reason: `${oom.name} ran out of GPU memory: ${fitted.length} proposal(s) sized by the ${memory.source} memory model to fit`,
    },
    memory,
    parent: oom.name,
    rejected,
  };
}

function roundOf(
  input: SuggestInput,
  options: SuggestOptions,
  hash: HashFn,
  memory: MemoryFit,
  parent: TriedCandidate,
  rejected: SuggestResult['rejected'],
): Round {
  const gib = input.cluster.gpuMemoryGiB;
  const ctx: MoveContext = {
    gpusPerNode: input.cluster.gpusPerNode,
    gpuMemoryGiB: gib,
    cpusPerNode: input.cluster.cpusPerNode,
    predict: (t) => limitView(t, memory, gib, parent.topology),
    // The conservative prediction (envelope and margin) stays under the error line; the 80% warning
    // line is the validator's, on its own prediction (src/usecases/suggest.ts refuses its warnings).
    memoryLimit: GPU_MEMORY_LIMITS.error,
  };
  const calibration =
    input.predict === false
      ? null
      : calibrate(input.tried, input.cluster, { previous: input.previousPredictions ?? [] });
  return {
    input,
    options,
    hash,
    memory,
    parent,
    evidence: readEvidence(parent),
    ctx,
    strict: { ...ctx, predict: (t) => limitView(t, memory, gib, parent.topology, true) },
    calibration,
    // a model that cannot reproduce the readings it was fitted on ranks nothing (its predictions are shown)
    reliable: !!calibration && calibration.misfit <= MAX_MISFIT,
    minImprovement: input.minImprovement ?? DEFAULT_MIN_IMPROVEMENT,
    triedHashes: new Set(input.tried.map((r) => hash(r.topology))),
    rejected,
  };
}

/** What the rules and the topology validator find wrong with a proposed topology. */
function problemsOf(round: Round, t: Topology): string[] {
  return [
    ...proposalProblems(t, round.input.baseTopology, round.input.cluster.gpusPerNode),
    ...(round.options.validate?.(t) ?? []),
  ];
}

/** The rules' moves from the parent's evidence, and the calibrated model's own proposal. */
function candidateMoves(round: Round): Move[] {
  const { parent, calibration, options } = round;
  return [
    ...movesFor(clone(parent.topology), round.evidence, round.ctx),
    // the calibrated model's own proposal: the combination of rule-shaped changes it predicts fastest
    ...(round.reliable && calibration
      ? searchPredicted(
          parent.topology,
          calibration,
          round.strict,
          {
            problems: (t) => problemsOf(round, t),
            exclude: new Set([...round.triedHashes, ...(options.exclude ?? [])]),
          },
          1,
        )
      : []),
  ];
}

/** History's weights: tags of children of this parent that did not help, and the tag that made it. */
function historyWeights(round: Round): { failedHere: Map<string, number>; momentum: Set<string> } {
  const { input, parent } = round;
  const byName = new Map(input.tried.map((r) => [r.name, r]));
  const failedHere = new Map<string, number>();
  for (const run of input.tried) {
    if (run.parent !== parent.name) continue;
    const outcome = outcomeOf(run, byName);
    if (outcome === 'better' || outcome === 'unknown') continue;
    for (const tag of classifyChange(parent.topology, run.topology)) {
      failedHere.set(tag, (failedHere.get(tag) ?? 1) * (outcome === 'failed' ? 0.3 : 0.6));
    }
  }
  const grandparent = parent.parent ? byName.get(parent.parent) : undefined;
  const momentum = grandparent
    ? new Set(classifyChange(grandparent.topology, parent.topology))
    : new Set<string>();
  return { failedHere, momentum };
}

/** The moves that pass every check, scored; the others go to `rejected` with why (a repeat silently). */
function scoreMoves(round: Round, moves: readonly Move[]): ScoredMove[] {
  const weights = historyWeights(round);
  const seen = new Set<string>();
  const scored: ScoredMove[] = [];
  for (const move of moves) {
    const h = round.hash(move.topology);
    if (round.triedHashes.has(h)) {
      round.rejected.push({ change: move.change, reason: 'already tried (same normalised topology)' });
      continue;
    }
    if (seen.has(h)) continue;
    const refused = refusalOf(round, move, h);
    if (refused) {
      round.rejected.push({ change: move.change, reason: refused });
      continue;
    }
    seen.add(h);
    const predicted = predictConservative(move.topology, round.memory, round.ctx.gpuMemoryGiB);
    const ranked = rankMove(round, move, predicted, weights);
    if (typeof ranked === 'string') round.rejected.push({ change: move.change, reason: ranked });
    else scored.push({ move, hash: h, predicted, ...ranked });
  }
  return scored;
}

/** Why a move is refused (the validator, the rules, the memory limit), or null. */
function refusalOf(round: Round, move: Move, h: string): string | null {
  if (round.options.exclude?.has(h)) return 'refused by the topology validator';
  const problems = problemsOf(round, move.topology);
  if (problems.length > 0) return `fails validation: ${problems.join('; ')}`;
  const { ctx } = round;
  const over = (move.kind === 'model-search' ? round.strict : ctx)
    .predict(move.topology)
    .filter((p) => p.gib > ctx.memoryLimit * ctx.gpuMemoryGiB);
  if (over.length === 0) return null;
  const predicted = predictConservative(move.topology, round.memory, ctx.gpuMemoryGiB);
  return `predicted GPU memory above ${Math.round(ctx.memoryLimit * 100)}% (or above the ${Math.round(GPU_MEMORY_LIMITS.warning * 100)}% line topo validate warns at) on GPU ${over.map((p) => `${p.gpu} (${predicted.find((q) => q.gpu === p.gpu)?.gib.toFixed(1)} GiB)`).join(', ')}`;
}

/**
 * A valid move's score: the rules' priority weighted by history, or, with a reliable model, its
 * predicted gain per GPU-hour; a string when even an optimistic bound on its gain misses min_improvement.
 */
function rankMove(
  round: Round,
  move: Move,
  predicted: Proposal['predictedMemory'],
  { failedHere, momentum }: ReturnType<typeof historyWeights>,
): { score: number; prediction?: ProposalPrediction } | string {
  const { calibration, minImprovement } = round;
  const tag = moveTag(move.kind, move.service);
  let score = move.priority * (failedHere.get(tag) ?? 1);
  if (momentum.has(tag)) score *= 1.15;
  const peak = Math.max(0, ...predicted.map((p) => p.fraction));
  score -= 0.01 * peak; // tie-break toward headroom
  const prediction = calibration
    ? predictionFor(calibration, move.topology, round.parent, round.input.cluster.gpusPerNode)
    : undefined;
  if (prediction && round.reliable) {
    // even an optimistic bound on the gain too short of min_improvement: the run cannot pay for
    // itself (the bound net of the parent's own error: the decision reads a new job of the parent)
    if (
      1 - (prediction.seconds * Math.exp(-DROP_Z * prediction.netLogSd)) / prediction.parentSeconds <
      minImprovement
    )
      return `predicted below min_improvement ${pct(minImprovement)}: ${pct(prediction.gain)} faster [${pct(prediction.gainLow)}, ${pct(prediction.gainHigh)}]`;
    // ranked by predicted gain per GPU-hour; the rules' evidence breaks ties
    score = prediction.gainPerGpuHour * (1 + 0.01 * score);
  }
  return { score, ...(prediction ? { prediction } : {}) };
}

/** A picked move as a proposal: its candidate file, named apart from `taken`. */
function proposalOf(
  round: Round,
  { move, hash: h, score, predicted, prediction }: ScoredMove,
  taken: Set<string>,
  filled: ReadonlyMap<Move, string>,
): Proposal {
  const { parent, memory } = round;
  const parentValue = figureOfTried(parent);
  const detail = move.service ? `${SHORT[move.kind]}-${move.service}` : SHORT[move.kind];
  const name = uniqueName(detail, taken);
  const peak = predicted.reduce((a, b) => (b.fraction > a.fraction ? b : a), {
    gpu: -1,
    gib: 0,
    fraction: 0,
  });
  const memoryText =
    peak.gpu >= 0
      ? ` Predicted peak GPU memory ${peak.gib.toFixed(1)} GiB on GPU ${peak.gpu} (${Math.round(peak.fraction * 100)}%, ${memory.source} model).`
      : '';
  return {
    candidate: {
      name,
      parent: parent.name,
      hypothesis: `${move.hypothesis}${parentValue !== undefined ? ` (parent ${parent.name}: ${parentValue.toFixed(2)} s/rollout)` : ''}${filled.has(move) ? ` Proposed because --count asked for more: the model calls it ${filled.get(move)}` : ''}`,
      expected_effect: `${move.expectedEffect}${memoryText}`,
      ...(prediction ? { prediction: candidatePrediction(prediction) } : {}),
      topology: move.topology,
    },
    kind: move.kind,
    ...(move.service ? { service: move.service } : {}),
    change: move.change,
    hash: h,
    predictedMemory: predicted,
    ...(prediction ? { prediction } : {}),
    score: Math.round(score * 1e6) / 1e6,
  };
}

/**
 * The round's stop: the campaign's rule (no progress for `patience` rounds, unless the model predicts
 * a gain with confidence), the calibrated model's, or, with nothing to propose, why not.
 */
function roundStop(
  round: Round,
  proposals: readonly Proposal[],
  outlook: SuggestResult['outlook'],
  moveCount: number,
): SuggestResult['stop'] | null {
  const { input, minImprovement } = round;
  const noProgress = stopForNoProgress(
    input.tried,
    input.patienceRounds ?? DEFAULT_PATIENCE_ROUNDS,
    input.maxParallel,
    outlook ? { minImprovement, gainLow: outlook.gainLow } : null,
  );
  const stop =
    noProgress ?? (round.reliable ? calibratedStop(outlook, round.calibration, minImprovement) : null);
  if (stop || proposals.length > 0) return stop;
  return { stop: true, reason: nothingToProposeReason(round, moveCount) };
}

/** Why a round proposes nothing: no gain worth a run, no free memory, no change called for, or all tried. */
function nothingToProposeReason(round: Round, moveCount: number): string {
  const { rejected, minImprovement, ctx } = round;
  const memoryBound = rejected.some((r) => r.reason.startsWith('predicted GPU memory'));
  const gainBound = rejected.filter((r) => r.reason.startsWith('predicted below min_improvement'));
  return gainBound.length
    ? `no move is predicted to gain min_improvement ${pct(minImprovement)}, even at an optimistic bound (${gainBound.length} predicted, e.g. ${gainBound[0]?.change}: ${gainBound[0]?.reason.replace(/^[^:]*: /, '')})`
    : memoryBound
      ? `no free resources: every move the evidence calls for is predicted above ${Math.round(ctx.memoryLimit * 100)}% GPU memory (or above the ${Math.round(GPU_MEMORY_LIMITS.warning * 100)}% line topo validate warns at) or was tried already`
      : moveCount === 0
        ? `the evidence of ${round.parent.name} calls for no change (bottleneck: ${round.evidence.bottleneck.kind})`
        : 'every move the evidence calls for was tried already';
}

/** The result's calibration block: what the model was fitted on and whether it ranked. */
function calibrationSummary(
  calibration: Calibration,
  reliable: boolean,
): NonNullable<SuggestResult['calibration']> {
  return {
    runs: calibration.runs,
    misfit: Math.round(calibration.misfit * 100) / 100,
    ranked: reliable,
    calibrationError:
      calibration.calibrationError === null ? null : Math.round(calibration.calibrationError * 1e4) / 1e4,
    level: PREDICTION_LEVEL,
  };
}

const pct = (x: number) => `${Math.round(1000 * x) / 10}%`;

/**
 * The moves the calibrated model does not expect to lose to the best predicted one by more than
 * min_improvement, even at an optimistic bound (DROP_Z) on their difference. Both are anchored on
 * the same parent, so its measurement error cancels: the difference's error is the two net errors.
 * A dominated move would be decided a loser beside the winner at best: it costs a run and buys
 * nothing the best does not.
 */
/** Greedy pick with a diversity discount, so one round can test different explanations. */
function pickDiverse<T extends { move: Move; score: number }>(pool: T[], count: number, picked: T[]): T[] {
  while (picked.length < count && pool.length > 0) {
    const adjusted = pool.map((s) => {
      const same = picked.filter(
        (p) => moveTag(p.move.kind, p.move.service) === moveTag(s.move.kind, s.move.service),
      ).length;
      return { s, value: s.score * 0.75 ** same };
    });
    adjusted.sort((a, b) => b.value - a.value);
    const best = adjusted[0]!.s;
    picked.push(best);
    pool.splice(pool.indexOf(best), 1);
  }
  return picked;
}

/**
 * Fills `picked` up to `count` with the moves undominated() dropped (each still predicted to gain
 * min_improvement over the parent and valid: the other rules hold), best first, when a person asked
 * for that many: the campaign's budget rule is theirs to overrule, never a rule of validity. Their
 * `dominated` entries leave `rejected`; returns each filled move with why the model calls it dominated.
 */
function fillDominated<T extends { move: Move; score: number }>(
  scored: readonly T[],
  pool: readonly T[],
  picked: T[],
  count: number,
  rejected: SuggestResult['rejected'],
): Map<Move, string> {
  const filled = new Map<Move, string>();
  const dropped = scored.filter((s) => !pool.includes(s) && !picked.includes(s));
  for (const s of pickDiverse(dropped, count - picked.length, [])) {
    const i = rejected.findIndex((r) => r.change === s.move.change && r.reason.startsWith('dominated'));
    if (i < 0) continue;
    filled.set(s.move, `${rejected[i]?.reason}.`);
    rejected.splice(i, 1);
    picked.push(s);
  }
  return filled;
}

export function undominated<T extends { move: Move; prediction?: ProposalPrediction }>(
  scored: readonly T[],
  minImprovement: number,
  rejected: SuggestResult['rejected'],
): T[] {
  const predicted = scored.filter((s) => s.prediction);
  const best = predicted.sort((a, b) => a.prediction!.seconds - b.prediction!.seconds)[0]?.prediction;
  if (!best) return [...scored];
  return scored.filter(({ move, prediction: p }) => {
    if (!p || p === best) return true;
    const sd = Math.hypot(p.netLogSd, best.netLogSd);
    const lose = Math.log(p.seconds / best.seconds) - DROP_Z * sd;
    if (lose <= Math.log(1 + minImprovement)) return true;
    rejected.push({
      change: move.change,
      reason: `dominated: predicted ${pct(p.seconds / best.seconds - 1)} slower than the best predicted move (${pct(Math.exp(lose) - 1)} at an optimistic bound), more than min_improvement ${pct(minImprovement)}`,
    });
    return false;
  });
}

/**
 * The model's word, as far as it has earned it: stop when its best remaining move is predicted to
 * gain less than min_improvement even with its calibration error (the RMS of log(measured ÷
 * predicted) over the proposals measured so far, at DROP_Z) added. Its prior error terms (the
 * structural one, a misfit) are what it claims before it has been checked: a model that has been
 * right within 1% on the runs it predicted is trusted to 1%, one never checked not at all (null).
 */
export function calibratedStop(
  outlook: SuggestResult['outlook'],
  calibration: Calibration | null,
  minImprovement: number,
): { stop: true; reason: string } | null {
  const error = calibration?.calibrationError;
  if (!outlook || error == null) return null;
  const bound = outlook.gain + DROP_Z * error;
  if (bound >= minImprovement) return null;
  return {
    stop: true,
    reason: `the calibrated model's best remaining move (${outlook.change}) is predicted ${pct(outlook.gain)} faster, ${pct(bound)} at most with its calibration error (±${pct(error)} on the runs it predicted): below min_improvement ${pct(minImprovement)}`,
  };
}

/**
 * Where the calibrated model points: the fastest predicted of the moves that passed every check, its
 * gain's interval, and whether this round proposes it (the campaign's stop rule counts only rounds
 * that did).
 */
function modelOutlook(
  scored: readonly { hash: string; move: Move; prediction?: ProposalPrediction }[],
  picked: readonly { hash: string }[],
): SuggestResult['outlook'] {
  const best = scored
    .filter((s) => s.prediction)
    .sort((a, b) => a.prediction!.seconds - b.prediction!.seconds)[0];
  if (!best?.prediction) return undefined;
  return {
    change: best.move.change,
    gain: best.prediction.gain,
    gainLow: best.prediction.gainLow,
    proposed: picked.some((p) => p.hash === best.hash),
  };
}

/**
 * A baseline that ran out of GPU memory is a start: the largest topologies the memory model says fit
 * (src/suggest/fit-memory.ts), never tried before, valid, with the failure and the predictions as
 * their evidence.
 */
function afterOutOfMemory(
  input: SuggestInput,
  failed: TriedCandidate,
  memory: ReturnType<typeof fitMemoryModel>,
  options: SuggestOptions,
  rejected: SuggestResult['rejected'],
): Proposal[] {
  const hash = options.hash ?? topologyHash;
  const tried = new Set(input.tried.map((r) => hash(r.topology)));
  const gib = input.cluster.gpuMemoryGiB;
  const failure = failed.observation?.failure;
  const fitted = fitInMemory(
    {
      failed: failed.topology,
      // the failed topology did not fit: its GPUs get no allowance above the 80% line
      predict: (t) => limitView(t, memory, gib, null),
      gpuMemoryGiB: gib,
      problems: (t) => [
        ...proposalProblems(t, input.baseTopology, input.cluster.gpusPerNode),
        ...(options.validate?.(t) ?? []),
        ...(tried.has(hash(t)) || options.exclude?.has(hash(t)) ? ['already tried'] : []),
      ],
    },
    Math.max(1, Math.min(input.count ?? input.maxParallel, input.maxParallel)),
  );
  if (fitted.length === 0)
    rejected.push({
      change: 'shrink the failed topology to fit',
      reason: `no smaller topology is predicted under ${Math.round(GPU_MEMORY_LIMITS.error * 100)}% of ${gib} GiB on every GPU`,
    });
  return fitted.map((f) => {
    const why = `${failed.name} ran out of GPU memory${failure?.gpu != null ? ` on GPU ${failure.gpu}` : ''}${failure?.message ? ` (${failure.message})` : ''}; the ${memory.source} memory model predicts it at ${f.before.gib.toFixed(1)} GiB on GPU ${f.before.gpu} (${Math.round(f.before.fraction * 100)}% of ${gib} GiB)`;
    return {
      candidate: {
        name: 'fit-memory',
        parent: failed.name,
        hypothesis: `${why}. This is the largest topology shrunk from it that the model puts under ${Math.round(GPU_MEMORY_LIMITS.error * 100)}% on every GPU: ${f.change}.`,
        expected_effect: `runs without running out of GPU memory: predicted peak ${f.after.gib.toFixed(1)} GiB on GPU ${f.after.gpu} (${Math.round(f.after.fraction * 100)}%, ${memory.source} model); its measured memory then fits the model for the next round.`,
        topology: f.topology,
      },
      kind: 'fit-memory' as const,
      change: f.change,
      hash: hash(f.topology),
      predictedMemory: predictConservative(f.topology, memory, gib),
      score: 1,
    };
  });
}

/** The candidate file's (and the record's) prediction block. */
export function candidatePrediction(p: ProposalPrediction): NonNullable<Candidate['prediction']> {
  return {
    seconds_per_rollout: p.seconds,
    low: p.low,
    high: p.high,
    level: p.level,
    gain: p.gain,
    parent: p.parent,
    parent_seconds_per_rollout: p.parentSeconds,
    calibrated_on: p.calibration.runs,
  };
}

/**
 * "Predicted 6.1% faster [2.0%, 9.8%] than parent (2.43 → 2.28 s/rollout, 90% interval)". The parent
 * reads at the figure the dashboard and the record show for it (its decision's), the predicted value
 * at the same scale (the model's steady seconds anchor the gain, never a second figure of the parent).
 */
export function predictionSentence(p: ProposalPrediction): string {
  const parent = p.parentFigure ?? p.parentSeconds;
  const seconds = (p.seconds / p.parentSeconds) * parent;
  return `Predicted ${pct(p.gain)} faster [${pct(p.gainLow)}, ${pct(p.gainHigh)}] than ${p.parent} (${parent.toFixed(2)} → ${seconds.toFixed(2)} s/rollout, ${Math.round(p.level * 100)}% interval, model calibrated on ${p.calibration.runs.length} run${p.calibration.runs.length === 1 ? '' : 's'})`;
}

/** The proposal's prediction anchored on its measured parent, with its expected cost. */
function predictionFor(
  cal: Calibration,
  topology: Topology,
  parent: TriedCandidate,
  gpus: number,
): ProposalPrediction | undefined {
  const m = measurementOf(parent);
  if (!m) return undefined;
  const seconds = m.seconds;
  const p = predictSeconds(cal, topology, {
    name: parent.name,
    topology: parent.topology,
    seconds,
    logSe: m.logSe,
  });
  if (!p) return undefined;
  const expectedGpuHours = (gpus * (TIMELINE.startupMinutes + expectedDecisionMinutes(p.gain))) / 60;
  const r = (x: number, d = 4) => Math.round(x * 10 ** d) / 10 ** d;
  return {
    seconds: r(p.seconds),
    low: r(p.low),
    high: r(p.high),
    level: PREDICTION_LEVEL,
    gain: r(p.gain),
    gainLow: r(p.gainLow),
    gainHigh: r(p.gainHigh),
    logSd: r(p.logSd),
    netLogSd: r(Math.sqrt(Math.max(0, p.logSd ** 2 - m.logSe ** 2))),
    parent: parent.name,
    parentSeconds: r(seconds),
    ...(parent.figure !== undefined ? { parentFigure: r(parent.figure) } : {}),
    expectedGpuHours: r(expectedGpuHours, 2),
    gainPerGpuHour: r(p.gain / expectedGpuHours, 5),
    calibration: {
      runs: cal.runs,
      misfit: r(cal.misfit, 2),
      calibrationError: cal.calibrationError === null ? null : r(cal.calibrationError),
    },
  };
}
