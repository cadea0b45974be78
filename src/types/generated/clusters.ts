/* Generated from topologies/schema/clusters.schema.json by scripts/gen-types.mjs. Do not edit. */

/**
 * topologies/clusters.yaml: where and how candidates run.
 */
export interface ClustersFile {
  clusters: {
    [k: string]: Cluster;
  };
}
/**
 * This interface was referenced by `ClustersFile`'s JSON-Schema
 * via the `definition` "cluster".
 */
export interface Cluster {
  /**
   * local: the runner sits on the login node; ssh: commands go over SSH.
   */
  transport: 'local' | 'ssh';
  /**
   * SSH host (transport ssh).
   */
  host?: string;
  /**
   * SSH user (transport ssh).
   */
  user?: string;
  port?: number;
  /**
   * The host's public key as in known_hosts (type and base64); the connection is refused on mismatch.
   */
  known_host_key?: string;
  /**
   * Absolute path of the AlpaSim checkout on the cluster.
   */
  alpasim_checkout: string;
  /**
   * Submit script, relative to the checkout (src/tools/run-on-slurm/submit.sh) or absolute.
   */
  submit_script: string;
  /**
   * Where job output goes, relative to the checkout or absolute.
   */
  run_dir?: string;
  /**
   * File-SD folder: a local path or host:/path.
   */
  file_sd: string;
  prometheus_url: string;
  grafana_url?: string;
  gpus_per_node: number;
  gpu_memory_gib: number;
  cpus_per_node: number;
  slurm: {
    account?: string;
    partition?: string;
    time?: string;
    /**
     * Pass --exclusive to sbatch (AlpaSim's submit.sh default); false lets a single-node test cluster run several jobs side by side.
     */
    exclusive?: boolean;
  };
  /**
   * 1 in production; the AlpaSim twin compresses time by this factor.
   */
  time_scale?: number;
  memory_model?: MemoryModel;
}
/**
 * Predicted GPU memory: GiB per replica of each service, GiB per cached scene, and a fixed overhead per GPU in use.
 *
 * This interface was referenced by `ClustersFile`'s JSON-Schema
 * via the `definition` "memoryModel".
 */
export interface MemoryModel {
  per_replica_gib: {
    renderer?: number;
    driver?: number;
    physics?: number;
    controller?: number;
    trafficsim?: number;
  };
  per_cached_scene_gib?: {
    renderer?: number;
    physics?: number;
  };
  per_gpu_overhead_gib?: number;
}
