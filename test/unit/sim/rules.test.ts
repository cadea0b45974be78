// Recording rules: generated files are current, promtool accepts them, and `promtool test rules` checks the
// alpasim:* values the workflow reads, for the production file and the time-scaled one.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { RECORDING_RULES } from '../../../src/catalog/alpasim.js';
import { root } from './helpers.js';

const prod = join(root, 'telemetry/prometheus/alpasim.rules.yml');
const scaled = join(root, 'telemetry/prometheus/alpasim.rules.timescale-60.yml');

function promtoolTest(ruleFile: string, interval: string, tests: unknown[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'topo-rules-'));
  const file = join(dir, 'test.yml');
  writeFileSync(file, stringify({ rule_files: [ruleFile], evaluation_interval: interval, tests }));
  try {
    return execFileSync('promtool', ['test', 'rules', file], { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`promtool test rules failed:\n${err.stdout ?? ''}${err.stderr ?? err.message}`);
  }
}

const L = 'run_uuid="u1",run_name="topo-e-c-12345678"';
const series = (name: string, labels: string, values: string) => ({
  series: `${name}{${L}${labels}}`,
  values,
});

describe('recording rules', () => {
  it('are what scripts/gen-rules.mjs generates', () => {
    execFileSync('node', [join(root, 'scripts/gen-rules.mjs'), '--check'], { stdio: 'pipe' });
  });

  it('pass promtool check rules and define every rule the workflow reads', () => {
    for (const f of [prod, scaled]) {
      const out = execFileSync('promtool', ['check', 'rules', f], { encoding: 'utf8' });
      expect(out).toContain('SUCCESS');
      const text = execFileSync('cat', [f], { encoding: 'utf8' });
      for (const rule of Object.values(RECORDING_RULES)) expect(text).toContain(`record: ${rule}\n`);
    }
  });

  const input = (step: number) => [
    // two workers: elapsed (simulated seconds) and rollouts; 1 rollout per 2 s on each, i.e. 1 s/rollout overall
    series('alpasim_simulation_elapsed_seconds', ',worker_id="0"', `0+${step}x20`),
    series('alpasim_simulation_elapsed_seconds', ',worker_id="1"', `0+${step}x20`),
    series('alpasim_rollouts_total', ',worker_id="0",status="completed"', `0+${step / 2}x20`),
    series('alpasim_rollouts_total', ',worker_id="1",status="completed"', `0+${step / 2}x20`),
    series('alpasim_rpc_queue_depth_at_start_latest', ',worker_id="0",service="sensorsim"', '9x20'),
    series('alpasim_rpc_queue_depth_at_start_latest', ',worker_id="1",service="sensorsim"', '5x20'),
    series('alpasim_rpc_queue_depth_at_start_latest', ',worker_id="0",service="driver"', '1x20'),
    series('alpasim_event_loop_idle_seconds_total', ',worker_id="0"', `0+${0.7 * step}x20`),
    series('alpasim_event_loop_poll_seconds_total', ',worker_id="0"', `0+${0.1 * step}x20`),
    series('alpasim_event_loop_work_seconds_total', ',worker_id="0"', `0+${0.2 * step}x20`),
    series('DCGM_FI_DEV_FB_USED', ',node="n1",gpu="3"', '61440x20'),
    series('DCGM_FI_DEV_FB_FREE', ',node="n1",gpu="3"', '20480x20'),
    series('DCGM_FI_DEV_FB_TOTAL', ',node="n1",gpu="3"', '81920x20'),
    series('DCGM_FI_DEV_GPU_UTIL', ',node="n1",gpu="3"', '87x20'),
    series('namedprocess_namegroup_cpu_seconds_total', ',groupname="driver",mode="user"', `0+${2 * step}x20`),
  ];
  const common = (evalTime: string) => [
    {
      expr: 'alpasim:simulation_seconds_per_rollout:avg',
      eval_time: evalTime,
      exp_samples: [{ labels: `alpasim:simulation_seconds_per_rollout:avg{${L}}`, value: 1 }],
    },
    {
      expr: 'alpasim:simulation_seconds_per_rollout:rate5m',
      eval_time: evalTime,
      exp_samples: [{ labels: `alpasim:simulation_seconds_per_rollout:rate5m{${L}}`, value: 1 }],
    },
    {
      expr: 'alpasim:rpc_queue_depth_at_start_latest:max',
      eval_time: evalTime,
      exp_samples: [
        { labels: `alpasim:rpc_queue_depth_at_start_latest:max{${L},service="driver"}`, value: 1 },
        { labels: `alpasim:rpc_queue_depth_at_start_latest:max{${L},service="sensorsim"}`, value: 9 },
      ],
    },
    {
      expr: 'alpasim:rpc_queue_depth_at_start_latest:min{service="sensorsim"}',
      eval_time: evalTime,
      exp_samples: [
        { labels: `alpasim:rpc_queue_depth_at_start_latest:min{${L},service="sensorsim"}`, value: 5 },
      ],
    },
    {
      expr: 'alpasim:event_loop_idle_fraction:ratio',
      eval_time: evalTime,
      exp_samples: [{ labels: `alpasim:event_loop_idle_fraction:ratio{${L}}`, value: 0.7 }],
    },
    {
      expr: 'alpasim:gpu_memory_gb:avg',
      eval_time: evalTime,
      exp_samples: [{ labels: `alpasim:gpu_memory_gb:avg{${L},gpu="3"}`, value: 60 }],
    },
    {
      expr: 'alpasim:gpu_memory_total_gb:avg',
      eval_time: evalTime,
      exp_samples: [{ labels: `alpasim:gpu_memory_total_gb:avg{${L},gpu="3"}`, value: 80 }],
    },
    {
      expr: 'alpasim:gpu_memory_pressure_percent:avg',
      eval_time: evalTime,
      exp_samples: [{ labels: `alpasim:gpu_memory_pressure_percent:avg{${L},node="n1",gpu="3"}`, value: 75 }],
    },
    {
      expr: 'alpasim:gpu_utilization_percent:avg',
      eval_time: evalTime,
      exp_samples: [{ labels: `alpasim:gpu_utilization_percent:avg{${L},gpu="3"}`, value: 87 }],
    },
    {
      expr: 'alpasim:process_cpu_utilization_percent:rate30s',
      eval_time: evalTime,
      exp_samples: [
        { labels: `alpasim:process_cpu_utilization_percent:rate30s{${L},groupname="driver"}`, value: 200 },
      ],
    },
  ];

  it('compute the alpasim:* values at the production 5 s scrape (promtool test rules)', () => {
    const out = promtoolTest(prod, '5s', [
      { interval: '5s', input_series: input(5), promql_expr_test: common('90s') },
    ]);
    expect(out).toContain('SUCCESS');
  });

  it('compute the same values at time scale 60 with a 1 s scrape (windows scaled)', () => {
    // 1 wall second = 60 simulated seconds: elapsed grows by 60 per scrape, rollouts by 30 per worker.
    const out = promtoolTest(scaled, '1s', [
      { interval: '1s', input_series: input(60), promql_expr_test: common('18s') },
    ]);
    expect(out).toContain('SUCCESS');
  });
});
