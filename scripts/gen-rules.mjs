#!/usr/bin/env node
// Generates the project's Prometheus recording rules for AlpaSim's alpasim:* series:
//   telemetry/prometheus/alpasim.rules.yml              production: AlpaSim's windows, 5 s scrape/evaluation
//   telemetry/prometheus/alpasim.rules.timescale-<S>.yml  the twin at time scale S: windows divided by S
// The expressions are AlpaSim's (src/utils/alpasim_utils/telemetry/metrics_plot_recording_rules.yml), grouped
// by run_uuid, run_name. `--check` exits 1 when a committed file differs from what this script generates.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'telemetry/prometheus');
/** Time scales with a committed rule file (the local cluster's default is 60). */
const SCALES = [60];
/** Shortest window at a compressed time scale: a rate needs several samples of the local 1 s scrape. */
const MIN_WINDOW_S = 4;

const METHODS =
  'run_controller_and_vehicle|drive|submit_egomotion_observation|submit_route|submit_image_observation|ground_intersection|render_rgb';
const BY = 'run_uuid, run_name';

/** Rules with window placeholders {1m}, {5m}, {30s} (AlpaSim's windows). */
const RULES = [
  [
    'alpasim:rpc_duration_seconds_bucket:sum',
    `sum by (${BY}, method, le) (alpasim_rpc_duration_seconds_bucket{method=~"${METHODS}"})`,
  ],
  [
    'alpasim:rpc_duration_seconds_bucket:rate1m',
    `sum by (${BY}, method, le) (rate(alpasim_rpc_duration_seconds_bucket{method=~"${METHODS}"}[{1m}]))`,
  ],
  [
    'alpasim:rpc_blocking_seconds_bucket:sum',
    `sum by (${BY}, method, le) (alpasim_rpc_blocking_seconds_bucket{method=~"${METHODS}"})`,
  ],
  [
    'alpasim:rpc_queue_depth_at_start_latest:max',
    `max by (${BY}, service) (alpasim_rpc_queue_depth_at_start_latest)`,
  ],
  [
    'alpasim:rpc_queue_depth_at_start_latest:min',
    `min by (${BY}, service) (alpasim_rpc_queue_depth_at_start_latest)`,
  ],
  [
    'alpasim:rollout_duration_seconds_bucket:sum',
    `sum by (${BY}, le) (alpasim_rollout_duration_seconds_bucket)`,
  ],
  ['alpasim:step_duration_seconds_bucket:sum', `sum by (${BY}, le) (alpasim_step_duration_seconds_bucket)`],
  [
    'alpasim:driver_drive_rpc_duration_seconds_bucket:sum',
    `sum by (${BY}, le) (alpasim_rpc_duration_seconds_bucket{service="driver",method="drive"})`,
  ],
  [
    'alpasim:driver_drive_rpc_duration_seconds_bucket:rate1m',
    `sum by (${BY}, le) (rate(alpasim_rpc_duration_seconds_bucket{service="driver",method="drive"}[{1m}]))`,
  ],
  [
    'alpasim:nre_render_rpc_duration_seconds_bucket:sum',
    `sum by (${BY}, le) (alpasim_rpc_duration_seconds_bucket{service="sensorsim",method=~"render_rgb|batch_render_rgb|render_aggregated"})`,
  ],
  [
    'alpasim:nre_render_rpc_duration_seconds_bucket:rate1m',
    `sum by (${BY}, le) (rate(alpasim_rpc_duration_seconds_bucket{service="sensorsim",method=~"render_rgb|batch_render_rgb|render_aggregated"}[{1m}]))`,
  ],
  [
    'alpasim:rpc_duration_seconds:p95',
    `histogram_quantile(0.95, sum by (${BY}, method, le) (rate(alpasim:rpc_duration_seconds_bucket:sum[{1m}])))`,
  ],
  [
    'alpasim:rpc_blocking_seconds:p95',
    `histogram_quantile(0.95, sum by (${BY}, method, le) (rate(alpasim:rpc_blocking_seconds_bucket:sum[{1m}])))`,
  ],
  [
    'alpasim:rollout_duration_seconds:p95',
    `histogram_quantile(0.95, sum by (${BY}, le) (rate(alpasim:rollout_duration_seconds_bucket:sum[{1m}])))`,
  ],
  [
    'alpasim:rollout_duration_seconds:p95_by_worker',
    `histogram_quantile(0.95, sum by (${BY}, worker_id, le) (rate(alpasim_rollout_duration_seconds_bucket[{1m}])))`,
  ],
  [
    'alpasim:step_duration_seconds:p95',
    `histogram_quantile(0.95, sum by (${BY}, le) (rate(alpasim:step_duration_seconds_bucket:sum[{1m}])))`,
  ],
  [
    'alpasim:driver_drive_rpc_duration_seconds:p95',
    `histogram_quantile(0.95, sum by (${BY}, le) (alpasim:driver_drive_rpc_duration_seconds_bucket:rate1m))`,
  ],
  [
    'alpasim:nre_render_rpc_duration_seconds:p95',
    `histogram_quantile(0.95, sum by (${BY}, le) (alpasim:nre_render_rpc_duration_seconds_bucket:rate1m))`,
  ],
  [
    'alpasim:event_loop_idle_fraction:ratio',
    `sum by (${BY}) (alpasim_event_loop_idle_seconds_total) / sum by (${BY}) (alpasim_event_loop_idle_seconds_total + alpasim_event_loop_poll_seconds_total + alpasim_event_loop_work_seconds_total)`,
  ],
  ['alpasim:simulation_rollouts_completed:sum', `sum by (${BY}) (alpasim_rollouts_total)`],
  [
    'alpasim:simulation_seconds_per_rollout:avg',
    `(max by (${BY}) (alpasim_simulation_elapsed_seconds) / sum by (${BY}) (alpasim_rollouts_total)) and on (${BY}) (sum by (${BY}) (alpasim_rollouts_total) > 0)`,
  ],
  [
    'alpasim:simulation_seconds_per_rollout:rate5m',
    `(max by (${BY}) (increase(alpasim_simulation_elapsed_seconds[{5m}])) / sum by (${BY}) (increase(alpasim_rollouts_total[{5m}]))) and on (${BY}) (sum by (${BY}) (increase(alpasim_rollouts_total[{5m}])) > 0)`,
  ],
  // {per-wall-second}: the twin's counters advance in simulated seconds, so a rate per wall second is divided by S.
  [
    'alpasim:process_cpu_utilization_percent:rate30s',
    `100 * sum by (${BY}, groupname) (rate(namedprocess_namegroup_cpu_seconds_total[{30s}])){per-wall-second}`,
  ],
  ['alpasim:gpu_utilization_percent:avg', `avg by (${BY}, gpu) (DCGM_FI_DEV_GPU_UTIL)`],
  ['alpasim:gpu_memory_gb:avg', `avg by (${BY}, gpu) (DCGM_FI_DEV_FB_USED) / 1024`],
  ['alpasim:gpu_memory_total_gb:avg', `avg by (${BY}, gpu) (DCGM_FI_DEV_FB_TOTAL) / 1024`],
  [
    'alpasim:gpu_memory_pressure_percent:avg',
    `100 * sum by (${BY}, node, gpu) (DCGM_FI_DEV_FB_USED) / (sum by (${BY}, node, gpu) (DCGM_FI_DEV_FB_USED) + sum by (${BY}, node, gpu) (DCGM_FI_DEV_FB_FREE))`,
  ],
];

const WINDOWS = { '1m': 60, '5m': 300, '30s': 30 };

function duration(seconds) {
  return seconds % 60 === 0 ? `${seconds / 60}m` : `${seconds}s`;
}

export function render(scale) {
  const lines = [
    `# Generated by scripts/gen-rules.mjs (\`node scripts/gen-rules.mjs\`); do not edit by hand.`,
    scale === 1
      ? '# AlpaSim recording rules for production: 5 s scrape and evaluation, AlpaSim windows.'
      : `# AlpaSim recording rules for the twin at time scale ${scale}: windows divided by ${scale} (at least ${MIN_WINDOW_S}s).`,
    'groups:',
    `  - name: alpasim_metrics_plot${scale === 1 ? '' : `_timescale_${scale}`}`,
    ...(scale === 1 ? ['    interval: 5s'] : []),
    '    rules:',
  ];
  for (const [record, expr] of RULES) {
    const e = expr
      .replace('{per-wall-second}', scale === 1 ? '' : ` / ${scale}`)
      .replace(/\{(1m|5m|30s)\}/g, (_, w) =>
        scale === 1 ? w : duration(Math.max(MIN_WINDOW_S, Math.round(WINDOWS[w] / scale))),
      );
    lines.push(`      - record: ${record}`, `        expr: >-`, `          ${e}`);
  }
  return `${lines.join('\n')}\n`;
}

export function outputs() {
  return [
    { file: join(outDir, 'alpasim.rules.yml'), text: render(1) },
    ...SCALES.map((s) => ({ file: join(outDir, `alpasim.rules.timescale-${s}.yml`), text: render(s) })),
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const scaleArg = process.argv.indexOf('--scale');
  if (scaleArg > 0) {
    const s = Number(process.argv[scaleArg + 1]);
    if (!Number.isInteger(s) || s < 1) {
      console.error('--scale needs a positive integer');
      process.exit(2);
    }
    process.stdout.write(render(s));
    process.exit(0);
  }
  let stale = 0;
  for (const { file, text } of outputs()) {
    if (check) {
      if (!existsSync(file) || readFileSync(file, 'utf8') !== text) {
        stale++;
        console.error(
          `stale rules: ${file} differs from scripts/gen-rules.mjs; run \`node scripts/gen-rules.mjs\``,
        );
      }
    } else {
      writeFileSync(file, text);
      console.log(`generated ${file.slice(root.length + 1)}`);
    }
  }
  if (stale) process.exit(1);
}
