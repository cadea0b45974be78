/* Generated from topologies/schema/record.schema.json by scripts/gen-types.mjs. Do not edit. */

/**
 * experiments/<experiment_id>.json: the experiment's memory for machines. Field names follow AlpaSim's experiment-record reference (.agents/skills/optimize-slurm-topology/references/experiment-record.md). experiments/<experiment_id>.md is rendered from it.
 */
export interface ExperimentRecord {
  /**
   * Bumped on an incompatible change of this schema.
   */
  schema_version: 1;
  /**
   * topology-opt-<driver>-<cluster>-<YYYYMMDD>
   */
  experiment_id: string;
  objective: string;
  /**
   * The full AlpaSim run command the experiment started from.
   */
  command?: string | null;
  fixed_inputs: RecordFixedInputs;
  current_best: CurrentBest;
  /**
   * One entry per candidate, in the order they were recorded (the progress table's steps).
   */
  runs: RecordRun[];
  /**
   * Set by /topo conclude: where the final report lives.
   */
  report?: {
    path: string;
    concluded_at?: string | null;
  } | null;
}
/**
 * This interface was referenced by `ExperimentRecord`'s JSON-Schema
 * via the `definition` "fixedInputs".
 */
export interface RecordFixedInputs {
  deploy: string;
  driver: string;
  /**
   * topology=<preset>
   */
  base_topology: string;
  /**
   * Cluster name in topologies/clusters.yaml.
   */
  cluster?: string | null;
  scenes?: {
    scene_ids?: string[] | null;
    test_suite_id?: string | null;
    scene_count?: number | null;
  };
  cameras?: string | null;
  control_timestep_us?: number | null;
  simulation_duration_s?: number | null;
  rollouts_per_scene?: number | null;
  git_commit?: string | null;
  remote_checkout?: string | null;
  overrides?: string[];
  telemetry?: {
    prometheus_url?: string | null;
    grafana_url?: string | null;
    file_sd_source?: string | null;
  };
  slurm?: {
    account?: string | null;
    partition?: string | null;
    gpus_per_node?: number | null;
    walltime?: string | null;
  };
}
/**
 * This interface was referenced by `ExperimentRecord`'s JSON-Schema
 * via the `definition` "currentBest".
 */
export interface CurrentBest {
  /**
   * The best accepted candidate's name (null before the first acceptance).
   */
  topology: string | null;
  run_name?: string | null;
  stabilized_seconds_per_rollout_full_run: number | null;
  decision_reasoning: string | null;
}
/**
 * This interface was referenced by `ExperimentRecord`'s JSON-Schema
 * via the `definition` "run".
 */
export interface RecordRun {
  /**
   * Candidate name.
   */
  name: string;
  parent?: string | null;
  /**
   * topo-<experiment_id>-<candidate>-<hash8>: Slurm job name and metrics run_name.
   */
  run_name?: string | null;
  job_id?: string | null;
  run_dir?: string | null;
  topology?: RunTopology;
  status: 'pending' | 'running' | 'accepted' | 'rejected' | 'failed' | 'stopped';
  hypothesis?: string | null;
  expected_effect?: string | null;
  /**
   * Topology keys changed against the parent: key -> 'old -> new'.
   */
  change?: {
    [k: string]: string;
  };
  verdict?: null | Verdict;
  comparison?: null | Comparison;
  /**
   * Includes the bottleneck, the per-GPU resource use and the telemetry quality (gaps).
   */
  stable_metrics?: null | StableMetrics;
  failures?: Failure[];
  decision: Decision;
  skill_reflections?: SkillReflection[];
  pull_request?: {
    number: number;
    url?: string | null;
    merge_commit_sha?: string | null;
  } | null;
  /**
   * When the pull request was closed.
   */
  recorded_at?: string | null;
}
/**
 * This interface was referenced by `ExperimentRecord`'s JSON-Schema
 * via the `definition` "runTopology".
 */
export interface RunTopology {
  /**
   * topology=<preset> the block is applied over.
   */
  base: string;
  /**
   * hash8 of the normalised, fully expanded topology (as in the run name).
   */
  hash?: string | null;
  /**
   * The candidate's topology block as written in its YAML file.
   */
  block?: null | Topology;
  /**
   * topologies/<experiment>/<candidate>.yaml
   */
  file?: string | null;
}
/**
 * Exactly AlpaSim's topology keys (src/wizard/configs/topology/<name>.yaml), so an AlpaSim topology file can be pasted in. Every key is optional: what is absent comes from the base preset.
 */
export interface Topology {
  defines?: {
    /**
     * Scenes the renderer keeps loaded; rule of thumb renderer n_concurrent_rollouts + 1.
     */
    nre_cache_size?: number;
    /**
     * Scenes physics keeps loaded; rule of thumb physics n_concurrent_rollouts + 1.
     */
    physics_cache_size?: number;
  };
  services?: {
    renderer?: Service;
    driver?: Service;
    physics?: Service;
    controller?: Service;
    trafficsim?: Service;
  };
  runtime?: {
    /**
     * Runtime worker processes (1 = inline).
     */
    nr_workers?: number;
    endpoints?: {
      renderer?: Endpoint;
      driver?: Endpoint;
      physics?: Endpoint;
      controller?: Endpoint;
      trafficsim?: Endpoint;
    };
  };
  /**
   * Present in AlpaSim's presets; accepted so a preset can be pasted in.
   */
  trafficsim?: {
    server?: {
      max_workers?: number;
    };
  };
  /**
   * Present in AlpaSim's 8gpu_64rollouts preset; accepted so a preset can be pasted in.
   */
  eval?: {
    num_processes?: number;
  };
}
/**
 * This interface was referenced by `Topology`'s JSON-Schema
 * via the `definition` "service".
 */
export interface Service {
  /**
   * GPU indices, one container per entry (repeats allowed); null = one CPU container.
   *
   * @minItems 1
   * @maxItems 256
   */
  gpus?: [number, ...number[]] | null;
  /**
   * Service instances inside each container, each on its own port.
   */
  replicas_per_container?: number;
}
/**
 * This interface was referenced by `Topology`'s JSON-Schema
 * via the `definition` "endpoint".
 */
export interface Endpoint {
  /**
   * Rollouts one instance serves at once.
   */
  n_concurrent_rollouts?: number;
  /**
   * Service disabled. A candidate must never change it.
   */
  skip?: boolean;
}
export interface Verdict {
  state: 'no-data' | 'warming' | 'stabilising' | 'stable' | 'cyclic' | 'unhealthy';
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
}
export interface Interval {
  value: number;
  low: number;
  high: number;
}
export interface Comparison {
  /**
   * The candidate compared with (baseline or current best).
   */
  against: string;
  ratio?: null | Interval;
  difference_s?: null | Interval;
  outcome: 'better' | 'worse' | 'indistinguishable' | 'not-comparable';
}
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
export interface MinMeanMax {
  min?: number | null;
  mean?: number | null;
  max?: number | null;
}
export interface GpuUsage {
  topology_services?: string[];
  utilization_percent?: MinMeanMax;
  memory_used_gb?: MinMeanMax;
  memory_total_gb?: number | null;
  memory_pressure_percent?: MinMeanMax;
  memory_headroom_gb_min?: number | null;
}
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
 * This interface was referenced by `ExperimentRecord`'s JSON-Schema
 * via the `definition` "decision".
 */
export interface Decision {
  outcome: 'pending' | 'accept' | 'reject';
  reason?: string | null;
  next?: string | null;
}
/**
 * This interface was referenced by `ExperimentRecord`'s JSON-Schema
 * via the `definition` "skillReflection".
 */
export interface SkillReflection {
  topic: 'metrics' | 'queries' | 'topology_knobs' | 'run_workflow' | 'failure_mode' | 'other';
  learning: string;
  suggested_skill_update?: string | null;
  /**
   * Where it came from: a comment URL, or 'pull request body'.
   */
  source?: string | null;
  author?: string | null;
}
