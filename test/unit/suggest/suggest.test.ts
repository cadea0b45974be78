import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { steadyState } from '../../../src/sim/model.js';
import { loadProfile } from '../../../src/sim/profile.js';
import { oomLine } from '../../../src/sim/run.js';
import { predictMemory } from '../../../src/suggest/memory-model.js';
import { changeText, resizeCaches } from '../../../src/suggest/moves.js';
import { proposalProblems, suggest } from '../../../src/suggest/suggest.js';
import { capacitySummary } from '../../../src/topology/capacity.js';
import { topologyHash } from '../../../src/topology/expand.js';
import { input, observe, preset, TRUE_MODEL } from './helpers.js';

const base = preset('8gpu_64rollouts');

function baseline(spec: Parameters<typeof observe>[1]) {
  return {
    name: 'baseline',
    parent: null,
    topology: base,
    status: 'accepted' as const,
    observation: observe(base, spec),
  };
}

/** suggest after a baseline that ran out of GPU memory with this message, on GPUs of `gib`. */
function suggestAfterOom(message: string, gpu: number, gib: number) {
  const failed = {
    name: 'baseline',
    parent: null,
    topology: base,
    status: 'failed' as const,
    observation: { failure: { kind: 'gpu-oom' as const, message, gpu } },
  };
  return suggest(input([failed], { cluster: { gpusPerNode: 8, gpuMemoryGiB: gib, cpusPerNode: 64 } }));
}

describe('suggest', () => {
  it("names the parent at its judgement's figure, not its own projection (issue 39 item 6)", () => {
    // `model` was decided better than the baseline: 10 × (1 − 20.8%) = 7.92 s, though its own
    // projection reads 8.17; the record, comment and chart show 7.92 (old main: "parent model: 8.17")
    const queues = { driver: [20, 41] as [number, number], renderer: [0, 3] as [number, number] };
    const model = {
      name: 'model',
      parent: 'baseline',
      topology: base,
      status: 'accepted' as const,
      observation: observe(base, {
        seconds: 8.17,
        queues,
        decision: {
          state: 'better',
          reference: { role: 'baseline', name: 'baseline', pr: null },
          min_improvement: 0.02,
          evidence: [],
          relative_change: { value: -0.208, low: -0.25, high: -0.17 },
          figure: { value: 7.92, low: 7.5, high: 8.3, reference_value: 10 },
        },
      }),
    };
    const result = suggest(input([baseline({ seconds: 10, queues }), model], { currentBest: 'model' }));
    expect(result.parent).toBe('model');
    expect(result.proposals.length).toBeGreaterThan(0);
    for (const p of result.proposals)
      expect(p.candidate.hypothesis).toContain('(parent model: 7.92 s/rollout)');
  });

  it('scales the driver when its queue is the deepest and cites the evidence', () => {
    const result = suggest(
      input([
        baseline({
          seconds: 2.0,
          queues: {
            driver: [20, 41],
            renderer: [0, 3],
            physics: [0, 2],
            controller: [0, 1],
            trafficsim: [0, 2],
          },
          bottleneck: {
            kind: 'service',
            service: 'driver',
            evidence: ['driver queue-depth max 41'],
            confidence: 'high',
          },
        }),
      ]),
    );
    expect(result.parent).toBe('baseline');
    expect(result.proposals.length).toBeGreaterThanOrEqual(1);
    expect(result.proposals.length).toBeLessThanOrEqual(3);
    const first = result.proposals[0]!;
    expect(first.kind).toBe('scale-bottleneck');
    expect(first.service).toBe('driver');
    expect(first.candidate.parent).toBe('baseline');
    expect(first.candidate.hypothesis).toContain('driver queue-depth max 41 vs renderer 3');
    expect(first.candidate.hypothesis).toContain('driver is the bottleneck');
    expect(first.candidate.expected_effect).toMatch(/seconds per rollout down/);
    // Rollouts in flight are kept: the driver's load is spread, not cut.
    expect(capacitySummary(first.candidate.topology).inFlight).toBeGreaterThanOrEqual(64);
    for (const p of result.proposals) {
      expect(proposalProblems(p.candidate.topology, base, 8)).toEqual([]);
      expect(p.hash).not.toBe(topologyHash(base));
      expect(p.candidate.name).toMatch(/^[a-z0-9][a-z0-9-]{0,39}$/);
      for (const m of p.predictedMemory) expect(m.fraction).toBeLessThanOrEqual(0.9);
    }
    // The validator's capacity-imbalance warning (driver 64 → 96 against 64) is never proposed.
    expect(result.rejected).toContainEqual({
      change: 'driver: replicas_per_container 8 → 12; capacity 64 → 96',
      reason: 'fails validation: capacities differ by 50% (limit 25%)',
    });
    expect(new Set(result.proposals.map((p) => p.candidate.name)).size).toBe(result.proposals.length);
    expect(result.stop.stop).toBe(false);
  });

  it('scales the renderer with repeated GPU entries, never replicas', () => {
    // One GPU: a second renderer container can only be a repeated entry of GPU 0.
    const one = preset('1gpu');
    const result = suggest(
      input(
        [
          {
            name: 'baseline',
            topology: one,
            status: 'accepted',
            observation: observe(one, {
              seconds: 9,
              util: { 0: 60 },
              queues: { renderer: [3, 4], driver: [0, 1] },
              bottleneck: { kind: 'service', service: 'renderer', evidence: [], confidence: 'high' },
            }),
          },
        ],
        {
          baseTopology: one,
          cluster: { gpusPerNode: 1, gpuMemoryGiB: 80, cpusPerNode: 16, memoryModel: TRUE_MODEL },
        },
      ),
    );
    const renderer = result.proposals.filter(
      (p) => p.service === 'renderer' && p.kind === 'scale-bottleneck',
    );
    expect(renderer.length).toBeGreaterThan(0);
    for (const p of renderer) {
      expect(p.candidate.topology.services?.renderer?.replicas_per_container ?? 1).toBe(1);
      const gpus = p.candidate.topology.services?.renderer?.gpus ?? [];
      expect(gpus.length).toBeGreaterThan(1);
      expect(gpus.every((g) => g === 0)).toBe(true);
      expect(p.change).toContain('a repeated GPU entry');
    }
  });

  it('makes room for the bottleneck by shrinking idle services, within 90% memory', () => {
    const result = suggest(
      input(
        [
          baseline({
            seconds: 2.0,
            queues: { renderer: [10, 30], driver: [0, 1], physics: [0, 0.5] },
            bottleneck: { kind: 'service', service: 'renderer', evidence: [], confidence: 'high' },
          }),
        ],
        { cluster: { gpusPerNode: 8, gpuMemoryGiB: 80, cpusPerNode: 64, memoryModel: TRUE_MODEL } },
      ),
    );
    const scaled = result.proposals.find((p) => p.service === 'renderer' && p.kind === 'scale-bottleneck');
    expect(scaled).toBeDefined();
    expect(scaled!.change).toMatch(
      /to stay under 90% GPU memory: .*replicas_per_container \d+ → \d+ \(queue-depth max/,
    );
    for (const p of result.proposals) {
      for (const m of predictMemory(p.candidate.topology, TRUE_MODEL, 80))
        expect(m.fraction).toBeLessThanOrEqual(0.9);
    }
  });

  it('raises nr_workers when the runtime idles under 60%', () => {
    const result = suggest(
      input([baseline({ seconds: 2.0, idle: 0.4, queues: { renderer: [0, 2], driver: [0, 2] } })]),
    );
    const workers = result.proposals.find((p) => p.kind === 'raise-workers');
    expect(workers).toBeDefined();
    expect(workers!.candidate.topology.runtime?.nr_workers).toBeGreaterThan(8);
    expect(workers!.candidate.hypothesis).toContain('runtime idle fraction 40% < 60%');
  });

  it('lowers total capacity when several services queue', () => {
    const result = suggest(
      input([
        baseline({
          seconds: 2.0,
          queues: { renderer: [5, 30], driver: [5, 28] },
          bottleneck: {
            kind: 'total-capacity-too-high',
            evidence: ['renderer 30, driver 28'],
            confidence: 'medium',
          },
        }),
      ]),
    );
    // 48 in flight leaves the driver's 32 instances at 64 (one rollout each at least): the validator
    // would warn about the imbalance, so the move is refused and says why.
    expect(result.proposals.find((p) => p.kind === 'lower-total')).toBeUndefined();
    expect(result.rejected).toContainEqual({
      change: "rollouts in flight 64 → 48 (every service's n_concurrent_rollouts lowered, caches with them)",
      reason: 'fails validation: capacities differ by 33% (limit 25%)',
    });
  });

  it('lowers total capacity, caches following, when every service can follow', () => {
    const twelve = preset('8gpu_12rollouts');
    const result = suggest(
      input(
        [
          {
            name: 'baseline',
            parent: null,
            topology: twelve,
            status: 'accepted',
            observation: observe(twelve, {
              seconds: 2.0,
              queues: { renderer: [5, 30], driver: [5, 28] },
              bottleneck: { kind: 'total-capacity-too-high', evidence: [], confidence: 'medium' },
            }),
          },
        ],
        {
          baseTopology: twelve,
          cluster: { gpusPerNode: 8, gpuMemoryGiB: 80, cpusPerNode: 64, memoryModel: TRUE_MODEL },
        },
      ),
    );
    const lower = result.proposals.find((p) => p.kind === 'lower-total');
    expect(lower).toBeDefined();
    const t = lower!.candidate.topology;
    expect(capacitySummary(t).inFlight).toBeLessThan(12);
    // The renderer cache keeps the preset's camera multiple: (n + 1) × 4.
    const n = t.runtime?.endpoints?.renderer?.n_concurrent_rollouts ?? 0;
    expect(t.defines?.nre_cache_size).toBe((n + 1) * 4);
  });

  it('never changes skip and never proposes a tried topology', () => {
    const withSkip = structuredClone(base);
    withSkip.runtime!.endpoints!.trafficsim = { ...withSkip.runtime!.endpoints!.trafficsim, skip: true };
    const spec = {
      seconds: 2.0,
      queues: { driver: [20, 41] as [number, number], renderer: [0, 3] as [number, number] },
      bottleneck: { kind: 'service' as const, service: 'driver', evidence: [], confidence: 'high' as const },
    };
    const first = suggest(
      input([
        {
          name: 'baseline',
          parent: null,
          topology: withSkip,
          status: 'accepted',
          observation: observe(withSkip, spec),
        },
      ]),
    );
    for (const p of first.proposals)
      expect(p.candidate.topology.runtime?.endpoints?.trafficsim?.skip).toBe(true);
    const tried = [
      {
        name: 'baseline',
        parent: null,
        topology: withSkip,
        status: 'accepted' as const,
        observation: observe(withSkip, spec),
      },
      ...first.proposals.map((p) => ({
        name: p.candidate.name,
        parent: 'baseline',
        topology: p.candidate.topology,
        status: 'running' as const,
      })),
    ];
    const second = suggest(input(tried, { baseTopology: withSkip }));
    const triedHashes = new Set(tried.map((t) => topologyHash(t.topology)));
    for (const p of second.proposals) expect(triedHashes.has(p.hash)).toBe(false);
    expect(second.rejected.some((r) => r.reason.startsWith('already tried'))).toBe(true);
  });

  it('makes no proposal predicted above 90% memory', () => {
    // 60 GiB GPUs: the renderer GPUs (8 + 17×2 + 0.5 = 42.5 GiB ≈ 71%) leave little room.
    const spec = {
      seconds: 2.0,
      gpuMemoryGiB: 60,
      queues: { renderer: [10, 30] as [number, number], driver: [0, 2] as [number, number] },
      bottleneck: {
        kind: 'service' as const,
        service: 'renderer',
        evidence: [],
        confidence: 'high' as const,
      },
    };
    const result = suggest(
      input([baseline(spec)], {
        cluster: { gpusPerNode: 8, gpuMemoryGiB: 60, cpusPerNode: 64, memoryModel: TRUE_MODEL },
      }),
    );
    expect(result.proposals.length).toBeGreaterThan(0);
    for (const p of result.proposals) {
      for (const m of predictMemory(p.candidate.topology, TRUE_MODEL, 60))
        expect(m.fraction).toBeLessThanOrEqual(0.9);
    }
  });

  it('says stop when no move fits in memory', () => {
    // 52 GiB GPUs: the renderer GPUs already hold 48.5 GiB, every move keeps them above 90%.
    const spec = {
      seconds: 2.0,
      gpuMemoryGiB: 52,
      queues: { driver: [20, 41] as [number, number], renderer: [0, 3] as [number, number] },
      bottleneck: { kind: 'service' as const, service: 'driver', evidence: [], confidence: 'high' as const },
    };
    const result = suggest(
      input([baseline(spec)], {
        cluster: { gpusPerNode: 8, gpuMemoryGiB: 52, cpusPerNode: 64, memoryModel: TRUE_MODEL },
      }),
    );
    expect(result.proposals).toEqual([]);
    expect(result.stop.stop).toBe(true);
    expect(result.stop.reason).toMatch(/^no free resources/);
  });

  it('asks for the decided baseline to be recorded when the record measures nothing yet (issue 41)', () => {
    const result = suggest(input([{ name: 'baseline', parent: null, topology: base, status: 'running' }]));
    expect(result.proposals).toEqual([]);
    expect(result.stop.stop).toBe(false);
    expect(result.stop.reason).toMatch(
      /no measured candidate in the record yet: once the baseline .* is decided, record it/,
    );
    expect(result.stop.reason).toContain('topo record <experiment> <candidate> --accept');
  });

  it('advises to stop after two rounds without a significant improvement', () => {
    const spec = {
      seconds: 2.0,
      queues: { driver: [20, 41] as [number, number], renderer: [0, 3] as [number, number] },
      bottleneck: { kind: 'service' as const, service: 'driver', evidence: [], confidence: 'high' as const },
    };
    const tried: Parameters<typeof input>[0] = [baseline(spec)];
    // Six children of the baseline (two rounds of three), none better: workers 9..14.
    for (let i = 0; i < 6; i++) {
      const t = structuredClone(base);
      t.runtime!.nr_workers = 9 + i;
      tried.push({
        name: `workers-${9 + i}`,
        parent: 'baseline',
        topology: t,
        status: 'rejected',
        observation: observe(t, {
          ...spec,
          seconds: 2.01,
          decision: {
            state: i === 0 ? 'worse' : 'equivalent',
            reference: { role: 'baseline', name: 'baseline', pr: null },
            min_improvement: 0.02,
            evidence: [],
          },
        }),
      });
    }
    const oneRound = suggest(input(tried.slice(0, 4)));
    expect(oneRound.stop.stop).toBe(false);
    const last = suggest(input(tried));
    expect(last.stop.stop).toBe(true);
    expect(last.stop.reason).toMatch(/no significant improvement over the last 2 rounds/);
    expect(last.stop.reason).toContain('workers-14 not-better');
  });

  it('keeps going while a recent round improved', () => {
    const spec = {
      seconds: 2.0,
      queues: { driver: [20, 41] as [number, number], renderer: [0, 3] as [number, number] },
    };
    const tried: Parameters<typeof input>[0] = [baseline(spec)];
    for (let i = 0; i < 6; i++) {
      const t = structuredClone(base);
      t.runtime!.nr_workers = 9 + i;
      tried.push({
        name: `workers-${9 + i}`,
        parent: 'baseline',
        topology: t,
        status: 'rejected',
        observation: observe(t, { ...spec, seconds: i === 4 ? 1.8 : 2.01 }),
      });
    }
    const result = suggest(input(tried, { currentBest: 'baseline' }));
    expect(result.stop.stop).toBe(false);
  });

  it('never cuts a cache below its camera multiple (8gpu_12rollouts renderer cache 16 stays)', () => {
    const twelve = preset('8gpu_12rollouts');
    expect(twelve.defines?.nre_cache_size).toBe(16);
    expect(resizeCaches(twelve)).toEqual([]);
    const small = structuredClone(twelve);
    small.defines = { ...small.defines, nre_cache_size: 2 };
    const [grow] = resizeCaches(small);
    expect(grow?.topology.defines?.nre_cache_size).toBe(4);
    expect(grow?.change).toBe('nre_cache_size 2 → 4');
  });

  it('raises nr_workers only as far as the idle cores allow', () => {
    const observation = observe(base, {
      seconds: 2.0,
      idle: 0.4,
      queues: { renderer: [0, 2], driver: [0, 2] },
    });
    const withCpu = (busyPercent: number) => ({
      ...observation,
      stable_metrics: {
        ...observation!.stable_metrics!,
        resource_usage: {
          ...observation!.stable_metrics!.resource_usage,
          process_cpu_utilization_percent_by_group: { runtime: { mean: busyPercent, max: busyPercent } },
        },
      },
    });
    const run = (busy: number) =>
      suggest(
        input([
          { name: 'baseline', parent: null, topology: base, status: 'accepted', observation: withCpu(busy) },
        ]),
      ).proposals.find((p) => p.kind === 'raise-workers');
    // 64 cores, 90% usable = 57: 50 busy leaves 7 more workers at most.
    expect(run(5000)?.candidate.topology.runtime?.nr_workers).toBeLessThanOrEqual(8 + 7);
    expect(run(5760)).toBeUndefined();
    expect(run(100)?.candidate.topology.runtime?.nr_workers).toBeGreaterThan(8);
  });

  it('lists only what changes (no "2 → 2")', () => {
    expect(changeText('n_concurrent_rollouts', 2, 2)).toBe('');
    expect(changeText('n_concurrent_rollouts', 2, 3)).toBe('n_concurrent_rollouts 2 → 3');
  });

  it('stops at once, saying why, when every run failed without running out of memory', () => {
    const result = suggest(
      input([
        {
          name: 'baseline',
          parent: null,
          topology: base,
          status: 'failed',
          observation: { failure: { kind: 'crash', message: 'runtime worker crashed after 10 minutes' } },
        },
      ]),
    );
    expect(result.proposals).toEqual([]);
    expect(result.stop.stop).toBe(true);
    expect(result.stop.reason).toContain(
      'every run so far failed (baseline: crash: runtime worker crashed after 10 minutes)',
    );
  });

  it('a baseline out of GPU memory is a start: the largest topologies the memory model fits, with the evidence', () => {
    // AlpaSim's 64-rollout preset on 40 GiB GPUs: GPU 0 (renderer, 17 cached scenes) runs out
    const result = suggestAfterOom('CUDA out of memory on GPU 0', 0, 40);
    expect(result.stop.stop).toBe(false);
    expect(result.parent).toBe('baseline');
    expect(result.proposals.length).toBeGreaterThanOrEqual(1);
    const [first, ...rest] = result.proposals;
    expect(first!.kind).toBe('fit-memory');
    expect(first!.candidate.hypothesis).toMatch(/baseline ran out of GPU memory on GPU 0/);
    expect(first!.candidate.expected_effect).toMatch(/predicted peak [\d.]+ GiB on GPU \d \(\d+%/);
    // the failure is evidence: GPU 0 needed more than 40 GiB, so the model is scaled until it says so
    expect(result.memory.notes.join(' ')).toMatch(/baseline ran out of memory on GPU 0 \(40 GiB\)/);
    for (const p of result.proposals) {
      expect(proposalProblems(p.candidate.topology, base, 8)).toEqual([]);
      for (const m of p.predictedMemory) expect(m.gib).toBeLessThanOrEqual(0.9 * 40);
    }
    // largest first: no later proposal keeps more rollouts in flight
    for (const p of rest)
      expect(capacitySummary(p.candidate.topology).inFlight).toBeLessThan(
        capacitySummary(first!.candidate.topology).inFlight,
      );
    // truth: the balanced twin on 40 GiB GPUs runs the largest one without running out of memory
    const balanced = loadProfile('twin-balanced', fileURLToPath(new URL('../../..', import.meta.url)));
    const twin = { ...balanced, gpu: { ...balanced.gpu, memory_gb: 40 } };
    expect(steadyState(base, twin).oom).toBeDefined();
    expect(steadyState(first!.candidate.topology, twin).oom).toBeUndefined();
  });
  it('a baseline that does not fit is followed by proposals that all fit (issue 33: heavy physics memory)', () => {
    // physics holds large scene meshes: GPUs 4-7 (driver 8 + physics 4 replicas) need ~109 of 80 GiB,
    // and CUDA fails at the allocation that tips it over, well below what the GPU would need
    const balanced = loadProfile('twin-balanced', fileURLToPath(new URL('../../..', import.meta.url)));
    const twin = {
      ...balanced,
      services: {
        ...balanced.services,
        physics: { ...balanced.services.physics, memory_gb: 4, scene_memory_gb: 2.5 },
      },
    };
    const oom = steadyState(base, twin).oom!;
    expect(oom).toBeDefined();
    const result = suggestAfterOom(oomLine(oom.gpu, oom.triedGb, oom.usedGb, oom.totalGb), oom.gpu, 80);
    expect(result.proposals.length).toBeGreaterThanOrEqual(2);
    for (const p of result.proposals) {
      // the memory model puts none above the 90% line, and the twin runs every one
      for (const m of p.predictedMemory) expect(m.gib).toBeLessThanOrEqual(0.9 * 80);
      expect(steadyState(p.candidate.topology, twin).oom).toBeUndefined();
    }
  });
});
