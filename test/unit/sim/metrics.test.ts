// The twin's exposition: AlpaSim's raw names, types, labels and histogram buckets, through prom-client.
import { describe, expect, it } from 'vitest';
import { RAW_METRICS } from '../../../src/catalog/alpasim.js';
import { Simulation } from '../../../src/sim/engine.js';
import { createRegistries } from '../../../src/sim/metrics.js';
import { oomLine, runTwin } from '../../../src/sim/run.js';
import { profile, topology } from './helpers.js';

describe('exposition', () => {
  const sim = new Simulation(topology('8gpu_64rollouts'), profile('twin-balanced'), {
    totalRollouts: 100_000,
  });
  const regs = createRegistries(sim.state, { hostname: 'node1' });
  regs.update(sim.advanceTo(1200));

  it('serves one registry per runtime worker with AlpaSim labels', async () => {
    expect(regs.workers).toHaveLength(8);
    const text = await regs.workers[3]!.metrics();
    expect(text).toContain('# TYPE alpasim_rollouts_total counter');
    expect(text).toMatch(/alpasim_rollouts_total\{status="completed",worker_id="3"\} \d+/);
    expect(text).toMatch(/alpasim_simulation_elapsed_seconds\{worker_id="3"\} [\d.]+/);
    expect(text).toMatch(/alpasim_rpc_queue_depth_at_start_latest\{service="sensorsim",worker_id="3"\} \d+/);
    expect(text).toContain('# TYPE alpasim_rpc_duration_seconds histogram');
    expect(text).toMatch(
      /alpasim_rpc_duration_seconds_bucket\{service="driver",method="drive",worker_id="3",le="0.01"\}/,
    );
    expect(text).toMatch(
      /alpasim_rpc_duration_seconds_bucket\{service="sensorsim",method="batch_render_rgb",worker_id="3",le="\+Inf"\}/,
    );
    expect(text).toMatch(/alpasim_rpc_blocking_seconds_bucket\{[^}]*le="0.0001"\}/);
    expect(text).toMatch(/alpasim_rollout_duration_seconds_bucket\{worker_id="3",le="500"\}/);
    expect(text).toMatch(/alpasim_step_duration_seconds_bucket\{worker_id="3",le="30"\}/);
    for (const name of [RAW_METRICS.eventLoopIdle, RAW_METRICS.eventLoopPoll, RAW_METRICS.eventLoopWork]) {
      expect(text).toMatch(new RegExp(`${name}\\{worker_id="3"\\} [\\d.]+`));
    }
  });

  it('keeps cumulative histogram buckets monotone and consistent with _count', async () => {
    const text = await regs.workers[0]!.metrics();
    const lines = text.split('\n').filter((l) => l.startsWith('alpasim_step_duration_seconds_bucket'));
    const values = lines.map((l) => Number(l.split(' ').at(-1)));
    for (let i = 1; i < values.length; i++) expect(values[i]).toBeGreaterThanOrEqual(values[i - 1]!);
    const count = Number(/alpasim_step_duration_seconds_count\{[^}]*\} (\d+)/.exec(text)![1]);
    expect(values.at(-1)).toBe(count);
    expect(count).toBeGreaterThan(0);
  });

  it('serves DCGM, process-exporter and node-exporter metrics', async () => {
    const dcgm = await regs.dcgm.metrics();
    for (const n of [RAW_METRICS.gpuUtil, RAW_METRICS.fbUsed, RAW_METRICS.fbFree, RAW_METRICS.fbTotal]) {
      expect(dcgm).toMatch(new RegExp(`${n}\\{gpu="7",[^}]*\\} [\\d.]+`));
    }
    const proc = await regs.process.metrics();
    expect(proc).toMatch(/namedprocess_namegroup_cpu_seconds_total\{groupname="runtime"\} [\d.]+/);
    expect(proc).toMatch(
      /namedprocess_namegroup_memory_bytes\{groupname="renderer",memtype="resident"\} [\d.e+]+/,
    );
    const node = await regs.node.metrics();
    expect(node).toMatch(/node_memory_MemAvailable_bytes [\d.e+]+/);
    expect(node).toMatch(/node_memory_MemTotal_bytes [\d.e+]+/);
    expect(node).toMatch(/node_cpu_seconds_total\{cpu="0",mode="idle"\} [\d.]+/);
  });
});

describe('start-up failure', () => {
  it('prints a CUDA out-of-memory line naming the GPU and exits non-zero', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runTwin(
      [
        'deploy=twin-balanced',
        'topology=8gpu_64rollouts',
        'driver=vavam',
        'services.renderer.gpus=[3,3,3,3]',
      ],
      { out: (l) => out.push(l), err: (l) => err.push(l), env: { TOPO_TWIN_TIME_SCALE: '100000' } },
    );
    expect(code).toBe(1);
    const line = err.find((l) => l.startsWith('torch.OutOfMemoryError'));
    expect(line).toMatch(
      /^torch\.OutOfMemoryError: CUDA out of memory\. Tried to allocate [\d.]+ GiB\. GPU 3 has a total capacity of 80\.00 GiB/,
    );
    expect(oomLine(2, 1.5, 79, 80)).toContain(
      'GPU 2 has a total capacity of 80.00 GiB of which 1.00 GiB is free',
    );
  });

  it('refuses bad overrides like the wizard, with exit code 1', async () => {
    const err: string[] = [];
    const code = await runTwin(['deploy=twin-balanced', 'topology=nope', 'driver=vavam'], {
      out: () => {},
      err: (l) => err.push(l),
      env: {},
    });
    expect(code).toBe(1);
    expect(err.join('\n')).toContain('topology=nope: unknown topology preset');
  });
});
