/* Generated from topologies/schema/record.schema.json by scripts/gen-types.mjs. Do not edit. */
import type {Topology} from './topology.js';
import type {Decision as MetricsDecision, Failure, Prediction, StableMetrics, Verdict} from './metrics.js';

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
   * Jobs of the current best run beside a round's candidates (experiment.yaml `reference: beside`): each recorded with the GPU-minutes its Slurm allocation held, charged to the experiment (docs/record.md).
   */
  reference_runs?: ReferenceRun[];
  /**
   * Set by /topo report: where the final report lives.
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
   * Predicted (topo suggest) against measured seconds per rollout.
   */
  prediction?: null | Prediction;
  /**
   * Topology keys changed against the parent: key -> 'old -> new'.
   */
  change?: {
    [k: string]: string;
  };
  verdict?: null | Verdict;
  /**
   * The monitor's decision against the reference as its last comment, check and label showed it (the one truth every surface reads).
   */
  monitor_decision?: null | MetricsDecision;
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
/**
 * This interface was referenced by `ExperimentRecord`'s JSON-Schema
 * via the `definition` "referenceRun".
 */
export interface ReferenceRun {
  /**
   * The candidate it ran (the current best, else the baseline, when its round started).
   */
  of: string;
  /**
   * Its Slurm job name and metrics run_name.
   */
  run_name: string;
  job_id?: string | null;
  /**
   * The pull request whose round asked for it.
   */
  pull_request?: number | null;
  /**
   * GPU-minutes its Slurm allocation held (elapsed × GPUs); null when never known.
   */
  gpu_minutes: number | null;
  /**
   * How its Request ended (decided: no open decision needed it; closed, cancelled, superseded, failed, lost, stopped).
   */
  ended?: string | null;
  /**
   * The candidates of its pull request decided against it.
   */
  candidates?: string[];
  /**
   * Its verdict at its end: a repeated run of its topology (the between-run term reads it).
   */
  verdict?: null | Verdict;
  recorded_at?: string | null;
}
