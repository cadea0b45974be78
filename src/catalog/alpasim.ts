// The AlpaSim facts this project builds on, in one place: when AlpaSim changes, this is the edit.
// Source: NVlabs/alpasim (src/wizard/configs/topology, src/tools/run-on-slurm/submit.sh, the
// telemetry recording rules) and the project's docs/alpasim notes.

/** Topology service names, as in `services.<svc>` and `runtime.endpoints.<svc>`. */
export const SERVICES = ['renderer', 'driver', 'physics', 'controller', 'trafficsim'] as const;
export type ServiceName = (typeof SERVICES)[number];

/** The `service` label AlpaSim's metrics use for a topology service. */
export const METRIC_SERVICE_LABEL: Record<ServiceName, string> = {
  renderer: 'sensorsim',
  driver: 'driver',
  physics: 'physics',
  controller: 'controller',
  trafficsim: 'traffic',
};

/** The topology service a metric `service` label stands for (undefined when unknown). */
export function serviceFromMetricLabel(label: string): ServiceName | undefined {
  return SERVICES.find((s) => METRIC_SERVICE_LABEL[s] === label);
}

/** Services that run on CPU only by nature (their `gpus` is normally null). */
export const CPU_SERVICES: readonly ServiceName[] = ['controller'];

/** Services whose scene cache is sized by a `defines.*_cache_size` key. */
export const CACHE_KEYS = {
  renderer: 'nre_cache_size',
  physics: 'physics_cache_size',
} as const satisfies Partial<Record<ServiceName, string>>;

/**
 * Config groups that switch a service off (their choice `disabled` sets `runtime.endpoints.<svc>.skip: true`),
 * and the choice base_config makes when the command names none: trafficsim is opt-in (`trafficsim=catk`).
 */
export const SERVICE_SWITCH_GROUPS: Partial<Record<ServiceName, { default?: string }>> = {
  trafficsim: { default: 'disabled' },
  physics: {},
};
export const DISABLED_GROUP_CHOICE = 'disabled';

/** Physics cache size when a preset does not set it (AlpaSim's base config). */
export const DEFAULT_PHYSICS_CACHE_SIZE = 16;

/** Public topology presets shipped as data under topologies/presets/. */
export const PRESETS = ['1gpu', '2gpu', '8gpu_12rollouts', '8gpu_64rollouts', '8gpu_no_replicas'] as const;
export type PresetName = (typeof PRESETS)[number];

/** AlpaSim's daemon-mode preset: GPUs and concurrency come from CLI overrides, so it has no topology to tune. */
export const CLI_DRIVEN_PRESET = 'daemon';

/** The three config groups AlpaSim's submit.sh refuses to run without. */
export const REQUIRED_GROUPS = ['deploy', 'topology', 'driver'] as const;

/** The submit script's defaults (its #SBATCH lines). */
export const SUBMIT_DEFAULTS = {
  nodes: 1,
  gpusPerNode: 8,
  exclusive: true,
  time: '03:59:00',
  requeue: true,
} as const;

/**
 * submit.sh requeues itself `--signal=B:USR1@300` (5 minutes) before the time limit, at most
 * ALPASIM_MAX_REQUEUES (default 20) times, and the restart resumes the run
 * (runtime.enable_autoresume=true): a run outlives one job's wall time until its rollouts are done.
 */
export const REQUEUE = { leadMinutes: 5, maxRequeues: 20 } as const;

/** Hydra override that names the run; it becomes the `run_name` label of every metric. */
export const RUN_NAME_OVERRIDE = 'wizard.run_name';

/** Hydra keys that define *what* is simulated: fixed across an experiment's candidates. */
export const FIXED_INPUT_KEYS = {
  scenes: 'scenes.test_suite_id',
  rolloutsPerScene: 'runtime.simulation_config.n_rollouts',
  cameras: 'cameras',
  controlTimestep: 'runtime.simulation_config.control_timestep_us',
} as const;

/** Scrape and rule-evaluation interval of AlpaSim's telemetry, seconds. */
export const SCRAPE_INTERVAL_S = 5;

/** Run time line (minutes of wall time at time scale 1). */
export const TIMELINE = {
  startupMinutes: 5,
  congestionMinutes: [10, 15] as const,
  stabiliseMinutes: [30, 45] as const,
  simulatedSecondsPerRollout: 20,
} as const;

/** GPU memory limits as fractions of the GPU's memory: above `error` is an out-of-memory risk. */
/**
 * Predicted GPU memory as a fraction of a GPU's: above `warning` little headroom; above `error`
 * AlpaSim's hard limit (out-of-memory crashes); above `capacity` it cannot fit at all.
 */
export const GPU_MEMORY_LIMITS = { warning: 0.8, error: 0.9, capacity: 1 } as const;

/** Capacity ratio (largest/smallest) above which excess capacity is wasted memory. */
export const CAPACITY_IMBALANCE_LIMIT = 1.25;

/** Runtime event-loop idle fraction: below `low` the runtime is busy; aim for the target band. */
export const RUNTIME_IDLE = { low: 0.6, target: [0.7, 0.8] as const } as const;

/** Prometheus job labels of AlpaSim's scrape targets. */
export const TARGET_JOBS = {
  runtime: 'alpasim-runtime-worker',
  node: 'alpasim-node',
  process: 'alpasim-process',
  dcgm: 'alpasim-dcgm',
} as const;

/** Labels every AlpaSim target carries. */
export const TARGET_LABELS = ['run_uuid', 'run_name', 'user', 'node', 'slurm_job_id'] as const;

/** Raw metric names served by the runtime workers and exporters. */
export const RAW_METRICS = {
  rolloutsTotal: 'alpasim_rollouts_total',
  simulationElapsed: 'alpasim_simulation_elapsed_seconds',
  queueDepth: 'alpasim_rpc_queue_depth_at_start_latest',
  rpcDuration: 'alpasim_rpc_duration_seconds',
  rpcBlocking: 'alpasim_rpc_blocking_seconds',
  rolloutDuration: 'alpasim_rollout_duration_seconds',
  stepDuration: 'alpasim_step_duration_seconds',
  eventLoopIdle: 'alpasim_event_loop_idle_seconds_total',
  eventLoopPoll: 'alpasim_event_loop_poll_seconds_total',
  eventLoopWork: 'alpasim_event_loop_work_seconds_total',
  gpuUtil: 'DCGM_FI_DEV_GPU_UTIL',
  fbUsed: 'DCGM_FI_DEV_FB_USED',
  fbFree: 'DCGM_FI_DEV_FB_FREE',
  fbTotal: 'DCGM_FI_DEV_FB_TOTAL',
  processCpu: 'namedprocess_namegroup_cpu_seconds_total',
  processMemory: 'namedprocess_namegroup_memory_bytes',
  processCpuPerProcess: 'alpasim_process_cpu_seconds_total',
  hostMemAvailable: 'node_memory_MemAvailable_bytes',
  hostMemTotal: 'node_memory_MemTotal_bytes',
  hostCpu: 'node_cpu_seconds_total',
} as const;

/** Values of the `status` label of `alpasim_rollouts_total` (the runtime's terminal rollout states). */
export const ROLLOUT_STATUS = { completed: 'completed', failed: 'failed' } as const;

/** Recording rules AlpaSim ships and the workflow reads. */
export const RECORDING_RULES = {
  secondsPerRolloutAvg: 'alpasim:simulation_seconds_per_rollout:avg',
  secondsPerRolloutRate5m: 'alpasim:simulation_seconds_per_rollout:rate5m',
  rolloutsCompleted: 'alpasim:simulation_rollouts_completed:sum',
  queueDepthMax: 'alpasim:rpc_queue_depth_at_start_latest:max',
  queueDepthMin: 'alpasim:rpc_queue_depth_at_start_latest:min',
  idleFraction: 'alpasim:event_loop_idle_fraction:ratio',
  rpcDurationP95: 'alpasim:rpc_duration_seconds:p95',
  rolloutDurationP95: 'alpasim:rollout_duration_seconds:p95',
  driveP95: 'alpasim:driver_drive_rpc_duration_seconds:p95',
  renderP95: 'alpasim:nre_render_rpc_duration_seconds:p95',
  gpuUtil: 'alpasim:gpu_utilization_percent:avg',
  gpuMemory: 'alpasim:gpu_memory_gb:avg',
  gpuMemoryTotal: 'alpasim:gpu_memory_total_gb:avg',
  gpuMemoryPressure: 'alpasim:gpu_memory_pressure_percent:avg',
  processCpu: 'alpasim:process_cpu_utilization_percent:rate30s',
  processCpuPerProcess: 'alpasim:process_cpu_utilization_percent:per_process:rate30s',
  processCpuMaxByGroup: 'alpasim:process_cpu_utilization_percent:max_by_group:rate30s',
  rpcBlockingP95: 'alpasim:rpc_blocking_seconds:p95',
} as const;

/**
 * The RPC methods AlpaSim's p95 recording rules keep (their method=~ list). The renderer's default call under
 * BATCH_RENDER_RGB bundling is `batch_render_rgb`, which this list leaves out (the nre_render rules cover it);
 * the traffic service's call is `simulate`.
 */
export const RPC_METHODS = [
  'run_controller_and_vehicle',
  'drive',
  'submit_egomotion_observation',
  'submit_image_observation',
  'submit_route',
  'ground_intersection',
  'render_rgb',
] as const;

/**
 * The project's provisioned copy of the "AlpaSim Runtime" dashboard (telemetry/grafana). AlpaSim's own file has no
 * uid (src/catalog/generated/dashboard.json): links go by slug, see src/telemetry/grafana.ts.
 */
export const GRAFANA_DASHBOARD = { uid: 'alpasim-runtime', title: 'AlpaSim Runtime' } as const;
