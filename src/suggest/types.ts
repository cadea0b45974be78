// The suggest core's input and output: small on purpose, so the core is testable with
// hand-made inputs and the record adapter (src/usecases/suggest.ts) is the only place that
// knows the record's shape.
import type { ServiceName } from '../catalog/alpasim.js';
import type { Candidate } from '../types/generated/candidate.js';
import type { MemoryModel } from '../types/generated/clusters.js';
import type { CandidateObservation } from '../types/generated/metrics.js';
import type { Topology } from '../types/generated/topology.js';

/** What the suggester needs to know about one tried candidate. */
export interface TriedCandidate {
  /** Candidate name (the file name without .yaml). */
  name: string;
  parent?: string | null;
  /** Fully expanded topology (base preset merged with the candidate's keys). */
  topology: Topology;
  /** pending/running candidates count as tried (never proposed again) but carry no evidence yet. */
  status: 'pending' | 'running' | 'accepted' | 'rejected' | 'failed' | 'stopped';
  /**
   * Its seconds per rollout as every surface shows it (src/record/figure.ts figureOf: its decision's
   * figure, anchored on its reference's); absent: its verdict's projection is shown.
   */
  figure?: number;
  /** What the monitor observed; absent while pending or when nothing was measured. */
  observation?: Partial<Pick<CandidateObservation, 'verdict' | 'stable_metrics' | 'decision' | 'failure'>>;
}

export interface ClusterLimits {
  gpusPerNode: number;
  gpuMemoryGiB: number;
  cpusPerNode: number;
  /** clusters.yaml's memory_model: the prior and the fallback of the fitted model. */
  memoryModel?: MemoryModel;
}

export interface SuggestInput {
  experimentId: string;
  /** The base preset, fully expanded: the source of `skip` and of keys a candidate leaves out. */
  baseTopology: Topology;
  cluster: ClusterLimits;
  /** Live candidates at once; proposals are capped by it. */
  maxParallel: number;
  /** Wanted proposals (defaults to maxParallel, never above it). */
  count?: number;
  /** Every candidate of the experiment in the order they were tried (baseline first). */
  tried: TriedCandidate[];
  /** Name of the current best candidate (the record's current_best); defaults to the fastest measured run. */
  currentBest?: string | null;
  /** Rounds without a significant improvement after which the suggester says stop (default 2). */
  patienceRounds?: number;
  /** The experiment's `min_improvement` (default 0.02): proposals predicted below it are dropped. */
  minImprovement?: number;
  /**
   * Calibrate the twin's model on the measured runs and predict each proposal (default true); false
   * ranks by the tuning rules alone (the seed's workflow by hand).
   */
  predict?: boolean;
  /** Predictions made for runs before they were measured (the record's): the calibration error. */
  previousPredictions?: { name: string; predictedSeconds: number }[];
}

/** A proposal's predicted seconds per rollout (src/suggest/predict.ts), for the pull request and the record. */
export interface ProposalPrediction {
  /** Predicted seconds per rollout and its interval (two-sided, `level`). */
  seconds: number;
  low: number;
  high: number;
  level: number;
  /** Relative gain against the parent's measured value (positive = faster), with its interval. */
  gain: number;
  gainLow: number;
  gainHigh: number;
  /** Standard deviation of log(seconds) behind the interval. */
  logSd: number;
  /**
   * Its part net of the parent's own measurement error: the error of the gain a decision beside a
   * new job of the parent reads (the parent's recorded error cancels there), and of the difference
   * between two proposals anchored on the same parent.
   */
  netLogSd: number;
  /** The measured candidate the prediction is anchored on (the proposal's parent). */
  parent: string;
  /** The parent's steady seconds per rollout the model anchors on (the prediction's scale). */
  parentSeconds: number;
  /** The parent's figure as the dashboard and the record show it (TriedCandidate.figure), when known. */
  parentFigure?: number;
  /** GPU-hours the run is expected to take to a decision, and the predicted gain per GPU-hour. */
  expectedGpuHours: number;
  gainPerGpuHour: number;
  /** The calibration: runs it was fitted on, the misfit of their readings, past prediction error. */
  calibration: { runs: string[]; misfit: number; calibrationError: number | null };
}

export type MoveKind =
  | 'scale-bottleneck'
  | 'raise-workers'
  | 'lower-total'
  | 'raise-total'
  | 'rebalance'
  | 'resize-caches'
  | 'place-free'
  | 'fit-memory'
  | 'model-search';

export interface GpuPrediction {
  gpu: number;
  gib: number;
  fraction: number;
}

export interface Proposal {
  /** The candidate file's content (topology fully expanded). */
  candidate: Candidate;
  kind: MoveKind;
  service?: ServiceName;
  /** Short summary of the change ("driver: 4 → 5 containers, n_concurrent_rollouts 16 → 13"). */
  change: string;
  /** Normalised hash of the proposed topology. */
  hash: string;
  /** Predicted GPU memory per GPU in use: the largest of the fitted model and its envelope, plus the fit's margin. */
  predictedMemory: GpuPrediction[];
  /** Predicted seconds per rollout (absent without a measured parent or with `predict: false`). */
  prediction?: ProposalPrediction;
  score: number;
}

export interface StopAdvice {
  stop: boolean;
  reason: string;
}

export interface FittedMemoryModel {
  model: MemoryModel;
  /** Models that fit the readings as well but split unvaried directions differently (fitted only). */
  envelope?: MemoryModel[];
  /** 'fitted' from measured runs, 'prior' from clusters.yaml, 'default' when neither exists. */
  source: 'fitted' | 'prior' | 'default';
  /** Observations (GPU × run) the fit used. */
  samples: number;
  /** Largest absolute residual of the fit, GiB (0 when not fitted). */
  maxResidualGiB: number;
  /** Largest under-prediction of a measured reading, GiB: added to every prediction before the limit. */
  marginGiB: number;
  /** The sets of services measured together on one GPU ("driver+physics", "renderer"), when fitted. */
  measuredSets?: string[];
  notes: string[];
}

export interface SuggestResult {
  proposals: Proposal[];
  stop: StopAdvice;
  memory: FittedMemoryModel;
  /** Name of the candidate the proposals change. */
  parent: string | null;
  /** Why moves were not made (already tried, predicted over the memory limit, invalid, predicted below min_improvement). */
  rejected: { change: string; reason: string }[];
  /**
   * Where the calibrated model points (absent without a reliable model): the fastest predicted move
   * that passed every check, its predicted gain and the interval's low end, and whether it is proposed.
   */
  outlook?: { change: string; gain: number; gainLow: number; proposed: boolean };
  /** The calibrated model behind the predictions (absent with `predict: false` or without a measured run). */
  calibration?: {
    runs: string[];
    /** Reduced chi-square of the readings the model was fitted on (≈ 1: they fit within their noise). */
    misfit: number;
    /** Proposals were ranked and filtered by their predictions (false: the model fits too badly; by the rules). */
    ranked: boolean;
    calibrationError: number | null;
    level: number;
  };
}
