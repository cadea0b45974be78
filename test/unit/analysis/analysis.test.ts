import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { analyseBottleneck } from '../../../src/analysis/bottleneck.js';
import { explainFailure, instancesOnGpu } from '../../../src/analysis/failure.js';
import { observeRun, slurmTimeToMinutes } from '../../../src/analysis/observe.js';
import { analyseResources, opportunities } from '../../../src/analysis/resources.js';
import { gpuMap } from '../../../src/topology/capacity.js';
import type { Topology } from '../../../src/types/generated/topology.js';
import { BALANCED_64, simulateTrace } from '../../fixtures/traces/synthetic.js';

const preset = (name: string) =>
  parse(
    readFileSync(join(import.meta.dirname, '../../../topologies/presets', `${name}.yaml`), 'utf8'),
  ) as Topology;
const t64 = preset('8gpu_64rollouts');

describe('bottleneck', () => {
  it('one service holds the queue → that service, high confidence', () => {
    const b = analyseBottleneck({
      queueMax: { renderer: 50, driver: 6, physics: 3, controller: 2 },
      queueMin: { renderer: 40, driver: 2, physics: 1, controller: 0 },
      idleFraction: 0.75,
      inFlight: 64,
    });
    expect(b).toMatchObject({ kind: 'service', service: 'renderer', confidence: 'high' });
    expect(b.evidence.join(' ')).toMatch(/renderer holds the queue/);
  });
  it('several high queues → total capacity too high', () => {
    const b = analyseBottleneck({
      queueMax: { renderer: 50, driver: 45 },
      queueMin: { renderer: 40, driver: 30 },
      inFlight: 64,
    });
    expect(b.kind).toBe('total-capacity-too-high');
  });
  it('low everywhere → not enough load', () => {
    expect(
      analyseBottleneck({ queueMax: { renderer: 1, driver: 0.5 }, queueMin: { renderer: 0, driver: 0 } })
        .kind,
    ).toBe('not-enough-load');
  });
  it('low min with high max → imbalance between workers', () => {
    const b = analyseBottleneck({
      queueMax: { driver: 40, renderer: 4 },
      queueMin: { driver: 2, renderer: 1 },
      inFlight: 64,
    });
    expect(b).toMatchObject({ kind: 'imbalance', service: 'driver' });
  });
  it('runtime idle under 60% → runtime-bound, with the nr_workers advice', () => {
    const b = analyseBottleneck({
      queueMax: { driver: 4, renderer: 3 },
      queueMin: {},
      idleFraction: 0.4,
      inFlight: 64,
    });
    expect(b.kind).toBe('runtime-bound');
    expect(b.evidence.join(' ')).toMatch(/raise runtime.nr_workers/);
  });
  it('CPU-bound process groups are named in the evidence', () => {
    const b = analyseBottleneck({
      queueMax: { controller: 50 },
      queueMin: { controller: 40 },
      processCpu: { controller: 180 },
    });
    expect(b.evidence.join(' ')).toMatch(/process group controller at 180% CPU/);
  });
  it('no queue data → unknown, low confidence', () => {
    expect(analyseBottleneck({ queueMax: {}, queueMin: {} })).toMatchObject({
      kind: 'unknown',
      confidence: 'low',
    });
  });
});

describe('resources', () => {
  const usage = analyseResources({
    gpus: new Map([
      [
        '0',
        { utilization: [90, 95], memoryUsedGb: [70, 74], memoryTotalGb: [80], pressurePercent: [88, 92] },
      ],
      [
        '4',
        { utilization: [20, 30], memoryUsedGb: [20, 22], memoryTotalGb: [80], pressurePercent: [25, 28] },
      ],
    ]),
    services: gpuMap(t64),
    hostAvailableGb: [100, 60],
    hostTotalGb: [1000],
  });
  it('per GPU min/mean/max, total, headroom and the services on it', () => {
    expect(usage.gpu_by_index?.['0']).toMatchObject({
      topology_services: ['renderer', 'trafficsim'],
      utilization_percent: { min: 90, mean: 92.5, max: 95 },
      memory_total_gb: 80,
      memory_headroom_gb_min: 6,
    });
    expect(usage.gpu_by_index?.['4']?.topology_services).toEqual(['driver', 'physics']);
    // GPUs of the topology without samples are listed too
    expect(Object.keys(usage.gpu_by_index ?? {})).toEqual(['0', '1', '2', '3', '4', '5', '6', '7']);
    expect(usage.host_memory).toEqual({ available_gb_min: 60, total_gb: 1000 });
  });
  it("headroom is DCGM's free framebuffer when exported: total − used overstates it by the driver-reserved memory", () => {
    const withFree = analyseResources({
      gpus: new Map([['0', { memoryUsedGb: [70, 74], memoryTotalGb: [80], memoryFreeGb: [5.7, 5.5] }]]),
    });
    expect(withFree.gpu_by_index?.['0']?.memory_headroom_gb_min).toBe(5.5);
  });
  it('observeRun reads the free framebuffer (DCGM_FI_DEV_FB_FREE) into the headroom', () => {
    const points = (v: number): Array<[number, number]> => [
      [1000, v],
      [1060, v],
    ];
    const gpu = (v: number) => [{ labels: { run_name: 'r', gpu: '0' }, points: points(v) }];
    const a = observeRun({
      runName: 'r',
      series: {
        rolloutsTotal: [{ labels: { run_name: 'r' }, points: points(10) }],
        gpuMemory: gpu(74),
        gpuMemoryTotal: gpu(80),
        gpuMemoryFree: gpu(5.5),
      },
      timeScale: 1,
      nowTs: 1060,
      stepSeconds: 15,
    });
    expect(a.observation.stable_metrics?.resource_usage?.gpu_by_index?.['0']?.memory_headroom_gb_min).toBe(
      5.5,
    );
  });
  it('opportunities: memory at the limit, spare GPUs next to a bottleneck', () => {
    const o = opportunities(usage, {
      kind: 'service',
      service: 'renderer',
      evidence: [],
      confidence: 'high',
    });
    expect(o.join('\n')).toMatch(/GPU 0 peaks at 93% memory/);
    expect(o.join('\n')).toMatch(
      /GPU 4 \(driver, physics\) is 25% busy with 58 GB free: room for instances of the bottleneck renderer/,
    );
  });
});

describe('failures', () => {
  it('GPU out of memory names the GPU, its services with their shares, and a fix', () => {
    const f = explainFailure(
      {
        kind: 'gpu-oom',
        message: 'CUDA out of memory',
        gpu: 4,
        slurm_state: 'FAILED',
        exit_code: '1:0',
        evidence: ['txt-logs/driver-4.log:88 CUDA out of memory'],
      },
      {
        topology: t64,
        gpus: {
          '4': { memory_used_gb: { max: 79.5 }, memory_total_gb: 80 },
          '5': { memory_used_gb: { max: 20 }, memory_total_gb: 80 },
        },
      },
    );
    expect(f.message).toBe('GPU 4 ran out of memory; it holds driver ×8 (67%), physics ×4 (33%).');
    expect(f.likely_fix).toMatch(/reduce driver on GPU 4 \(8 instances\) or move one to GPU 5/);
    expect(f.evidence).toContain('GPU 4 memory peaked at 79.5 of 80 GB');
    expect(f.evidence).toContain('Slurm state FAILED, exit code 1:0');
  });
  it('instance shares per GPU', () => {
    expect(instancesOnGpu(t64, 0)).toEqual([
      { service: 'renderer', instances: 1, share: 0.5 },
      { service: 'trafficsim', instances: 1, share: 0.5 },
    ]);
  });
  it('other kinds get the standard fix', () => {
    expect(explainFailure({ kind: 'node-failure', message: 'node died' }).likely_fix).toMatch(/resubmit/);
  });
});

describe('observeRun', () => {
  it('turns Prometheus-shaped series at time scale 60 into a verdict and stable metrics', () => {
    const trace = simulateTrace({ ...BALANCED_64, name: 't', endMinutes: 100, scrapeMinutes: 1 });
    const ts0 = 1_700_000_000;
    // time scale 60: one real second is one run-minute
    const pts = (s: { t: number; v: number }[]) => s.map((p) => [ts0 + p.t, p.v] as [number, number]);
    const run = 'topo-exp-c1-0123abcd';
    const a = observeRun({
      runName: run,
      series: {
        secondsPerRolloutAvg: [{ labels: { run_name: run }, points: pts(trace.fullRun) }],
        rolloutsTotal: [{ labels: { run_name: run }, points: pts(trace.completed) }],
        rolloutsFailed: [{ labels: { run_name: run }, points: pts(trace.failed) }],
        elapsed: [{ labels: { run_name: run }, points: pts(trace.elapsed) }],
        queueDepthMax: [
          { labels: { run_name: run, service: 'sensorsim' }, points: [[ts0 + 90, 50]] },
          { labels: { run_name: run, service: 'driver' }, points: [[ts0 + 90, 4]] },
        ],
        queueDepthMin: [{ labels: { run_name: run, service: 'sensorsim' }, points: [[ts0 + 90, 40]] }],
        targetsUp: [{ labels: { run_name: run }, points: [[ts0 + 100, 3]] }],
      },
      timeScale: 60,
      nowTs: ts0 + 100,
      stepSeconds: 1,
      jobStartTs: ts0 - 5,
      topology: t64,
    });
    const o = a.observation;
    expect(['stable', 'cyclic']).toContain(o.verdict.state);
    expect(o.stable_metrics.rpc_queue_depth_at_start_latest_by_service?.renderer).toEqual({
      worker_min: 40,
      worker_max: 50,
    });
    expect(o.stable_metrics.bottleneck).toMatchObject({ kind: 'service', service: 'renderer' });
    expect(o.stable_metrics.completed_rollouts).toBe(trace.completed.at(-1)?.v);
    expect(a.startTs).toBe(ts0);
    expect(a.chart.fullRun.length).toBeGreaterThan(50);
  });
  it('parses Slurm time limits', () => {
    expect(slurmTimeToMinutes('03:59:00')).toBe(239);
    expect(slurmTimeToMinutes('1-00:00')).toBe(1440);
    expect(slurmTimeToMinutes('soon')).toBeNull();
  });
});
