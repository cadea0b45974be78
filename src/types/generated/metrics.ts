/* Generated from topologies/schema/metrics.schema.json by scripts/gen-types.mjs. Do not edit. */

/**
 * What the monitor learns about one candidate run: the detector's verdict and the stable metrics. Written into the sticky comment's machine-readable block and read by the record. Field names follow AlpaSim's experiment-record reference.
 */
export interface CandidateObservation {
  run_name: string;
  verdict: Verdict;
  stable_metrics: StableMetrics;
  failure?: Failure;
  decision?: Decision;
}
/**
 * This interface was referenced by `CandidateObservation`'s JSON-Schema
 * via the `definition` "verdict".
 */
export interface Verdict {
  state: 'no-data' | 'warming' | 'stabilising' | 'stable' | 'cyclic' | 'drifting' | 'unhealthy';
  /**
   * Run-minutes since the first sample.
   */
  minutes_of_data?: number;
  /**
   * Where the detector found the start-up and congestion to end.
   */
  warmup_end_minutes?: number | null;
  /**
   * The full-run seconds per rollout read now.
   */
  current_full_run?: number | null;
  /**
   * Stable value with its confidence interval.
   */
  value?: null | Interval;
  /**
   * Projected full-run seconds per rollout at the end of the run; candidates are compared on it.
   */
  projected_full_run?: null | Interval;
  /**
   * Marginal seconds per rollout after the warm-up (60 ÷ steady completion rate per run-minute), with its 95% interval.
   */
  steady_seconds_per_rollout?: null | Interval;
  /**
   * Run-minute (from the first sample) the projection is made for: the job's wall time or the last rollout, whichever comes first.
   */
  run_end_minutes?: number | null;
  cycle?: {
    period_minutes?: number;
    amplitude_relative?: number;
  } | null;
  evidence: string[];
  /**
   * Set with the drifting verdict.
   */
  drift?: {
    /**
     * Change of the steady seconds per rollout per hour, relative to its level.
     */
    slope_relative_per_hour: number;
  } | null;
  /**
   * What a stable verdict promises (item 6 of issue 38): full-run: the full-run value within ±max_ci_relative with the measured drift extrapolated (its error × the lever in the interval); steady-rate: the weaker claim, the steady rate within ±max_ci_relative, with no drift beyond drift_bound_per_hour ruled out.
   */
  stable_claim?: null | {
    kind: 'full-run' | 'steady-rate';
    /**
     * The drift (relative per hour, one-sided 95%) not ruled out.
     */
    drift_bound_per_hour: number | null;
    text: string;
  };
  /**
   * The estimator that decided the value (e.g. completions, littles-law, combined).
   */
  estimator?: string | null;
  /**
   * The run's start cohorts (src/analysis/cohorts.ts): per start minute, the log of its seconds per rollout fitted by a censored likelihood (log duration = cohort + worker + noise, rollouts in flight right-censored at their age), with its variance. Decisions contrast two runs' tables over the cohorts both share (equal run age, first wave included); cohorts started once the suite drains are left out.
   */
  cohorts?: null | {
    from_minute: number;
    step_minutes: number;
    log_seconds: (number | null)[];
    log_var: (number | null)[];
    events: number[];
    /**
     * Run-minute of the last complete reading (a worker whose counter is gone is censored at its own last one).
     */
    data_end_minutes: number;
    /**
     * First start minute left out: the suite drains (rollouts in flight falling, the last scenes).
     */
    drain_from_minute: number | null;
    /**
     * The run's data will not grow (its job ended).
     */
    final: boolean;
    /**
     * Rollout-level noise (log scale), pooled over workers.
     */
    noise_sd?: number;
    /**
     * Per cohort, the rank-one covariance term the noise's own uncertainty adds (src/analysis/cohort-fit.ts).
     */
    noise_coupling?: (number | null)[];
    /**
     * The variance the estimated noise adds to every cohort's level (σ²/2 in a log-normal's mean).
     */
    level_var?: number;
    /**
     * Unix seconds of the run's minute 0: whether two runs shared the cluster's wall clock.
     */
    started_at?: number | null;
  };
  /**
   * What decisions read (src/analysis/rollouts.ts): the projected full-run seconds per rollout from the rollouts reconstructed from the per-worker duration histogram, the first wave dropped and rollouts in flight censored. The verdict's own value keeps its warm-up rule.
   */
  decision_estimate?: null | {
    projected_full_run: Interval;
    /**
     * Run-minute the steady data starts at (the first wave's starts end).
     */
    first_wave_end_minutes: number;
    mean_duration_minutes?: number;
    steady_rollouts: number;
    censored_rollouts: number;
    first_wave_rollouts?: number;
    /**
     * What the estimate used.
     */
    evidence: string;
    /**
     * What the standard error rests on (src/analysis/rollout-error.ts); enough false: no claim is made on it.
     */
    error_basis?: {
      /**
       * Independent blocks of starts (half a mean duration long) with ended rollouts.
       */
      blocks: number;
      block_minutes: number;
      rollouts: number;
      method: string;
      enough: boolean;
    };
    /**
     * Rollout-level drift: durations against start time after the transient, relative per hour (the decision's drift guard).
     */
    drift?: null | {
      slope_relative_per_hour: number;
      se: number;
      from_minute: number;
    };
    /**
     * The estimate at each run-minute (compact): the record keeps it so that a later candidate is compared with this run at equal run age.
     */
    trajectory?: null | {
      from_minute: number;
      step_minutes: number;
      values: number[];
      log_se: number[];
      basis_from_minute: number | null;
      /**
       * The rollout-level drift at each minute (relative per hour); null where it could not be measured yet.
       */
      drift_slope?: (number | null)[];
      drift_se?: (number | null)[];
    };
  };
}
/**
 * This interface was referenced by `CandidateObservation`'s JSON-Schema
 * via the `definition` "interval".
 */
export interface Interval {
  value: number;
  low: number;
  high: number;
}
/**
 * This interface was referenced by `CandidateObservation`'s JSON-Schema
 * via the `definition` "stableMetrics".
 */
export interface StableMetrics {
  warmup_excluded_s?: number | null;
  completed_rollouts?: number | null;
  failed_rollouts?: number | null;
  seconds_per_rollout_5m?: number | null;
  seconds_per_rollout_full_run?: number | null;
  rollout_duration_p95_s?: number | null;
  step_duration_p95_s?: number | null;
  /**
   * Keyed by topology service name.
   */
  rpc_queue_depth_at_start_latest_by_service?: {
    [k: string]: {
      worker_min?: number | null;
      worker_max?: number | null;
    };
  };
  rpc_duration_p95_s_by_method?: {
    [k: string]: number | null;
  };
  runtime_idle_fraction?: number | null;
  resource_usage?: {
    process_cpu_utilization_percent_by_group?: {
      [k: string]: MinMeanMax;
    };
    gpu_by_index?: {
      [k: string]: GpuUsage;
    };
    host_memory?: {
      available_gb_min?: number | null;
      total_gb?: number | null;
    };
  };
  bottleneck?: Bottleneck;
  telemetry_quality?: {
    missing_metrics?: string[];
    gaps?: string[];
    notes?: string | null;
  };
}
/**
 * This interface was referenced by `CandidateObservation`'s JSON-Schema
 * via the `definition` "minMeanMax".
 */
export interface MinMeanMax {
  min?: number | null;
  mean?: number | null;
  max?: number | null;
}
/**
 * This interface was referenced by `CandidateObservation`'s JSON-Schema
 * via the `definition` "gpuUsage".
 */
export interface GpuUsage {
  topology_services?: string[];
  utilization_percent?: MinMeanMax;
  memory_used_gb?: MinMeanMax;
  memory_total_gb?: number | null;
  memory_pressure_percent?: MinMeanMax;
  memory_headroom_gb_min?: number | null;
}
/**
 * This interface was referenced by `CandidateObservation`'s JSON-Schema
 * via the `definition` "bottleneck".
 */
export interface Bottleneck {
  kind:
    | 'service'
    | 'total-capacity-too-high'
    | 'not-enough-load'
    | 'imbalance'
    | 'runtime-bound'
    | 'none'
    | 'unknown';
  /**
   * Topology service name (renderer, driver, physics, controller, trafficsim).
   */
  service?: string | null;
  evidence: string[];
  confidence: 'low' | 'medium' | 'high';
}
/**
 * This interface was referenced by `CandidateObservation`'s JSON-Schema
 * via the `definition` "failure".
 */
export interface Failure {
  kind:
    | 'gpu-oom'
    | 'host-oom'
    | 'crash'
    | 'node-failure'
    | 'time-limit'
    | 'cancelled'
    | 'preempted'
    | 'no-telemetry';
  message: string;
  slurm_state?: string;
  exit_code?: string | null;
  evidence?: string[];
  /**
   * The GPU named by an out-of-memory line.
   */
  gpu?: number | null;
  likely_fix?: string;
}
/**
 * The sequential comparison with the reference (the current best, or the baseline while there is none).
 *
 * This interface was referenced by `CandidateObservation`'s JSON-Schema
 * via the `definition` "decision".
 */
export interface Decision {
  /**
   * better: faster by more than min_improvement over the full run (the equal-age contrast and the full-run guard both settle it); better-at-equal-age: the provisional winner, faster by more than min_improvement at equal run age while the full-run guard (a drift against the reference) is still open: it keeps running; faster-drift-not-ruled-out: closed at the horizon (or when its reference's data ended) faster at equal run age, with a drift that could undo it over the full run not ruled out; not-better: it cannot be min_improvement faster than the reference (it may still be a little slower or a little faster); reference: this candidate is the baseline or the current best.
   */
  state:
    | 'measuring'
    | 'better-at-equal-age'
    | 'better'
    | 'worse'
    | 'equivalent'
    | 'not-better'
    | 'faster-drift-not-ruled-out'
    | 'reference';
  reference: DecisionReference;
  /**
   * (candidate - reference) / reference of seconds per rollout, with an interval valid under repeated looks; negative is faster.
   */
  relative_change?: null | Interval;
  /**
   * The candidate's seconds per rollout as decided: the reference's figure × (1 + relative_change), with the change's interval. Every surface shows this figure for the run.
   */
  figure?: null | DecidedFigure;
  min_improvement: number;
  method?: string;
  /**
   * Run-minute the decision was reached.
   */
  decided_at_minutes?: number | null;
  /**
   * The full-run guard (src/analysis/decision.ts): the drift of the candidate against its reference (the slope of the cohort differences on start age) and the equal-age contrast extrapolated by it to the run's rollout-weighted mean age, widened by the lever × the slope's error, read through the same boundary. better and equivalent stand only when it settles them too.
   */
  full_run?: null | {
    /**
     * settled: the full-run interval settles the same claim; open: it does not yet; drifts: the slope is significant (the candidate drifts against its reference), said on not-better and worse too; not-measured: no slope yet.
     */
    guard: 'settled' | 'open' | 'drifts' | 'not-measured';
    /**
     * The relative change extrapolated to the full run, with its interval through the decision's boundary.
     */
    change: null | Interval;
    slope_relative_per_hour: number | null;
    slope_se: number | null;
    /**
     * From the contrast's mean cohort age to the run's rollout-weighted mean age.
     */
    lever_minutes: number | null;
  };
  /**
   * What the equal-age contrast rests on (src/analysis/cohorts.ts).
   */
  contrast?: null | {
    /**
     * Start cohorts both runs share.
     */
    cohorts: number;
    /**
     * The contrast's weighted mean cohort (start) age.
     */
    mean_age_minutes: number;
    /**
     * model: the censored likelihood's; robust: from the spread of the cohort differences (larger).
     */
    error: 'model' | 'robust';
  };
  expected_minutes_to_decision?: number | null;
  gpu_minutes_used?: number | null;
  /**
   * GPU-minutes of wall time left when the job was stopped on the decision.
   */
  gpu_minutes_saved?: number | null;
  /**
   * GPU-minutes saved against the seed's rule by hand (start-up plus a 45-minute read) when stopped on the decision; negative when the decision took longer.
   */
  gpu_minutes_saved_vs_seed?: number | null;
  evidence: string[];
}
/**
 * What a decision was made against: a structured value, never a string to parse.
 *
 * This interface was referenced by `CandidateObservation`'s JSON-Schema
 * via the `definition` "reference".
 */
export interface DecisionReference {
  /**
   * baseline or current best (the record's, or a baseline running now); leading candidate: the pruner's; run: a run a person named (topo analyze --against).
   */
  role: 'baseline' | 'current best' | 'leading candidate' | 'run';
  /**
   * The reference candidate (for `run`: its run name).
   */
  name: string;
  /**
   * Its pull request, when it is another one's (the leading candidate).
   */
  pr?: number | null;
}
/**
 * This interface was referenced by `CandidateObservation`'s JSON-Schema
 * via the `definition` "decidedFigure".
 */
export interface DecidedFigure {
  value: number;
  low: number;
  high: number;
  /**
   * The reference's seconds per rollout the figure is anchored at (as every surface shows the reference).
   */
  reference_value: number;
}
/**
 * A proposal's predicted seconds per rollout (topo suggest: the twin's model calibrated on the measured runs), anchored on its measured parent; in the record with the measured value beside it.
 *
 * This interface was referenced by `CandidateObservation`'s JSON-Schema
 * via the `definition` "prediction".
 */
export interface Prediction {
  seconds_per_rollout: number;
  low: number;
  high: number;
  /**
   * Two-sided coverage of [low, high].
   */
  level: number;
  /**
   * Predicted relative gain against the parent (positive = faster).
   */
  gain?: number;
  /**
   * The measured candidate the prediction is anchored on.
   */
  parent: string;
  parent_seconds_per_rollout?: number;
  /**
   * Runs the model was calibrated on.
   */
  calibrated_on?: string[];
  /**
   * Record only: the run's measured value.
   */
  measured_seconds_per_rollout?: number | null;
  /**
   * Record only: measured ÷ predicted − 1.
   */
  error?: number | null;
  /**
   * Record only: the measured value lies in [low, high].
   */
  covered?: boolean | null;
}
