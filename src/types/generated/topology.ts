/* Generated from topologies/schema/topology.schema.json by scripts/gen-types.mjs. Do not edit. */

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
  /**
   * Environment of the service's containers (NAME=value), as in AlpaSim's service config and the topology-knobs example. Names are limited to runtime tuning families (OMP_, MKL_, CUDA_, NCCL_, PYTORCH_, XDG_, HOME, ...); values to plain path and setting characters.
   *
   * @maxItems 32
   */
  environments?: string[];
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
