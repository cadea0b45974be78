/* Generated from topologies/schema/twin-profile.schema.json by scripts/gen-types.mjs. Do not edit. */

/**
 * Hardware truth of the AlpaSim twin (src/sim/profiles/<deploy>.yaml). Only the twin reads it; the analysis sees metrics only.
 */
export interface TwinProfile {
  /**
   * Equals the file name (the deploy= value).
   */
  name: string;
  description: string;
  /**
   * Default random seed of a run.
   */
  seed?: number;
  gpu: {
    /**
     * GPUs per node.
     */
    count: number;
    /**
     * Memory of one GPU, GiB.
     */
    memory_gb: number;
    /**
     * CUDA context per container on a GPU, GiB.
     */
    context_gb?: number;
    /**
     * Extra slowdown per additional co-located container sharing a GPU (time-slicing overhead).
     */
    contention?: number;
  };
  cpu: {
    /**
     * CPU cores the services and runtime share.
     */
    cores: number;
  };
  host: {
    memory_gb: number;
    base_used_gb?: number;
  };
  /**
   * Control steps per rollout (200 = 20 s at 10 Hz).
   */
  steps_per_rollout: number;
  /**
   * Scenes per test suite id; unknown suites use `default`.
   */
  scenes?: {
    [k: string]: number;
  };
  services: {
    renderer: Service;
    driver: Service;
    physics: Service;
    controller: Service;
    trafficsim: Service;
  };
  runtime: {
    /**
     * Runtime event-loop CPU work per rollout step (Python), ms.
     */
    step_work_ms: number;
    /**
     * Network/gRPC latency per call, ms.
     */
    rpc_latency_ms?: number;
    /**
     * Host memory per runtime worker, GiB.
     */
    memory_gb?: number;
  };
  noise?: {
    /**
     * Coefficient of variation of a rollout's duration.
     */
    rollout_cv?: number;
    rpc_cv?: number;
  };
  timeline: {
    /**
     * Wall seconds (unscaled) before targets appear.
     */
    startup_s: number;
    /**
     * Extra slowdown at t=0 (cold caches, autotuning), decaying.
     */
    warmup_factor?: number;
    warmup_tau_s?: number;
  };
  /**
   * Effects of the hardware truth that a queueing model of the services alone does not have (benchmark profiles: the predictor's model cannot express them).
   */
  effects?: {
    /**
     * Extra slowdown of a GPU's shared work per other service co-located on it (different services slow each other more than containers of one service do).
     */
    gpu_interference?: number;
    /**
     * CPU-side work (runtime event loops, CPU services, per-call CPU) slows by 1 + this × (node CPU utilisation)².
     */
    cpu_contention?: number;
    /**
     * Scene caches miss even when large enough to prefetch: a rollout loads its scene with probability (rollouts per instance ÷ cache size)^k (renderer and physics).
     */
    cache_miss_exponent?: number;
  };
  faults?: {
    /**
     * Fraction of rollouts that end with status=failed.
     */
    failure_rate?: number;
    /**
     * Runtime crashes (exit 1) this many simulated seconds after start.
     */
    crash_after_s?: number;
    /**
     * Host out-of-memory kill this many simulated seconds after start.
     */
    host_oom_after_s?: number;
    /**
     * Period of a cyclic throughput component (topology cannot fix it).
     */
    cycle_period_s?: number;
    cycle_amplitude?: number;
  };
}
/**
 * This interface was referenced by `TwinProfile`'s JSON-Schema
 * via the `definition` "service".
 */
export interface Service {
  /**
   * Time of one call per step on an uncontended device, ms.
   */
  call_ms: number;
  /**
   * Fraction of a call that occupies the shared GPU (the rest is serial per instance).
   */
  gpu_share?: number;
  /**
   * CPU time per call on the node's shared cores, ms.
   */
  cpu_ms?: number;
  /**
   * GPU memory per service instance (replica), GiB.
   */
  memory_gb?: number;
  /**
   * GPU memory per cached scene, GiB (renderer: nre_cache_size, physics: physics_cache_size).
   */
  scene_memory_gb?: number;
  /**
   * Seconds to load a scene on a cache miss.
   */
  scene_load_s?: number;
  /**
   * Host memory per instance, GiB.
   */
  host_memory_gb?: number;
}
