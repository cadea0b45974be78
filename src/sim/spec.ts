// What AlpaSim's telemetry exposes, as the twin serves it: histogram buckets and label sets copied from
// src/runtime/alpasim_runtime/telemetry/telemetry_context.py, process groups from the wizard's
// process-exporter config (src/wizard/alpasim_wizard/telemetry/prometheus.py).
import type { ServiceName } from '../catalog/alpasim.js';

export const BUCKETS = {
  rpcDuration: [0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0],
  rpcBlocking: [0.0001, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0],
  rolloutDuration: [1, 2.5, 5, 10, 25, 50, 100, 250, 500],
  stepDuration: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  observationBarrier: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  schedulerWait: [0.01, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
} as const;

/** RPC methods per service, with the share of the service's per-step time each takes. */
export const METHODS: Record<ServiceName, { method: string; share: number }[]> = {
  // AlpaSim's default render bundling (BATCH_RENDER_RGB): one batched call per step.
  renderer: [{ method: 'batch_render_rgb', share: 1 }],
  driver: [
    { method: 'drive', share: 0.8 },
    { method: 'submit_image_observation', share: 0.12 },
    { method: 'submit_egomotion_observation', share: 0.05 },
    { method: 'submit_route', share: 0.03 },
  ],
  physics: [{ method: 'ground_intersection', share: 1 }],
  controller: [{ method: 'run_controller_and_vehicle', share: 1 }],
  trafficsim: [{ method: 'simulate', share: 1 }],
};

/**
 * The `kind` label of `alpasim_renderer_rollouts_started` and `…_scheduler_wait_seconds`: AlpaSim's
 * FifoDispatch, the default (`scene_affine_dispatch.enabled: false`), labels every dispatch `fifo`.
 */
export const DISPATCH_KIND = 'fifo';

/** process-exporter group names (groupname label). */
export const PROCESS_GROUPS = [
  'runtime',
  'driver',
  'renderer',
  'physics',
  'trafficsim',
  'controller',
] as const;

/** node_cpu_seconds_total modes the twin reports. */
export const CPU_MODES = ['idle', 'user', 'system'] as const;
