// The demo's starting point: a full AlpaSim run command as a team would type it on a real cluster,
// except that `deploy=` names a twin hardware profile (src/sim/profiles/<deploy>.yaml).

/**
 * Twin profile and preset whose baseline leaves a clear, findable improvement: a large policy model
 * (the driver binds) on AlpaSim's small 8gpu_12rollouts preset, with GPU memory to spare, so the
 * suggester's driver moves gain about 10%. Other combinations were tried: on 8gpu_64rollouts the
 * twin's node is near its memory limit and the suggester finds nothing to add; twin-balanced on
 * 8gpu_12rollouts gains ~7% only when its near-tie of queues points at the controller.
 */
export const DEMO_DEPLOY = 'twin-driver-bound';

export const SAMPLE_COMMAND = [
  'sbatch --account=demo --partition=gpu --gpus-per-node=8',
  'src/tools/run-on-slurm/submit.sh',
  `deploy=${DEMO_DEPLOY}`,
  'topology=8gpu_12rollouts',
  'driver=vavam',
  'scenes.test_suite_id=public_2601',
  'runtime.simulation_config.n_rollouts=1',
].join(' ');

/** Demo shapes: the full demo runs two suggest rounds, `--quick` one. */
export const DEMO_MODES = {
  full: { rounds: 2, perRound: 3, maxSimulatedMinutes: 120 },
  quick: { rounds: 1, perRound: 3, maxSimulatedMinutes: 120 },
} as const;

/** yyyymmdd (UTC) for the experiment id. */
export function dateStamp(date: Date): string {
  return date.toISOString().slice(0, 10).replace(/-/g, '');
}
