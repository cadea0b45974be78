import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { fittedMemoryModel, triedFromRecord } from '../../../src/suggest/record.js';
import { suggest } from '../../../src/suggest/suggest.js';
import { expandCandidate } from '../../../src/topology/expand.js';
import type { Candidate } from '../../../src/types/generated/candidate.js';
import type { ExperimentRecord } from '../../../src/types/generated/record.js';
import { blockAgainstBase, candidateFileText, withMemoryModel } from '../../../src/usecases/suggest.js';
import { input, observe, preset, TRUE_MODEL } from './helpers.js';

const base = preset('8gpu_64rollouts');

function record(): ExperimentRecord {
  const obs = observe(base, {
    seconds: 2,
    queues: { driver: [20, 41], renderer: [0, 3] },
    bottleneck: { kind: 'service', service: 'driver', evidence: [], confidence: 'high' },
  })!;
  return {
    schema_version: 1,
    experiment_id: 'topology-opt-vam-local-20261202',
    objective: 'minimize stabilized full-run seconds_per_rollout',
    fixed_inputs: { deploy: 'twin-balanced', driver: 'vam', base_topology: 'topology=8gpu_64rollouts' },
    current_best: {
      topology: 'baseline',
      stabilized_seconds_per_rollout_full_run: 2,
      decision_reasoning: null,
    },
    runs: [
      {
        name: 'baseline',
        parent: null,
        status: 'accepted',
        topology: { base: '8gpu_64rollouts', block: {} },
        verdict: obs.verdict ?? null,
        stable_metrics: obs.stable_metrics ?? null,
        decision: { outcome: 'accept' },
      },
      {
        name: 'oom',
        parent: 'baseline',
        status: 'failed',
        topology: {
          base: '8gpu_64rollouts',
          block: { services: { driver: { replicas_per_container: 16 } } },
        },
        failures: [{ kind: 'gpu-oom', message: 'CUDA out of memory', gpu: 4 }],
        decision: { outcome: 'reject' },
      },
    ],
  };
}

describe('the record adapter', () => {
  it('expands every run over the base and carries its evidence and failures', () => {
    const pending: Candidate = {
      name: 'queued',
      parent: 'baseline',
      topology: { runtime: { nr_workers: 12 } },
    };
    const tried = triedFromRecord(record(), base, new Map([['queued', pending]]));
    expect(tried.map((t) => [t.name, t.status])).toEqual([
      ['baseline', 'accepted'],
      ['oom', 'failed'],
      ['queued', 'pending'],
    ]);
    expect(tried[1]!.topology.services?.driver?.replicas_per_container).toBe(16);
    expect(tried[1]!.topology.services?.renderer?.gpus).toEqual([0, 1, 2, 3]);
    expect(tried[1]!.observation?.failure?.kind).toBe('gpu-oom');
    expect(tried[2]!.topology.runtime?.nr_workers).toBe(12);
    const result = suggest(input(tried));
    expect(result.parent).toBe('baseline');
    // The failed topology and the queued one are never proposed again.
    expect(result.proposals.every((p) => p.candidate.name !== 'oom')).toBe(true);
  });

  it('fits the memory model from the record, falling back to the prior', () => {
    expect(fittedMemoryModel(undefined, base, TRUE_MODEL).source).toBe('prior');
    const fitted = fittedMemoryModel(record(), base, TRUE_MODEL);
    expect(fitted.source).toBe('fitted');
    expect(fitted.samples).toBe(8);
  });
});

describe('candidate files', () => {
  it('hold only the keys that differ from the base, GPU lists in flow style', () => {
    const result = suggest(
      input([
        {
          name: 'baseline',
          topology: base,
          status: 'accepted',
          observation: observe(base, {
            seconds: 2,
            queues: { driver: [20, 41], renderer: [0, 3] },
            bottleneck: { kind: 'service', service: 'driver', evidence: [], confidence: 'high' },
          }),
        },
      ]),
    );
    const proposal = result.proposals[0]!;
    const text = candidateFileText(proposal, base, base);
    expect(text).toMatch(/^# Proposed by `topo suggest` \(scale-bottleneck, driver\)\./);
    const candidate = parse(text) as Candidate;
    expect(candidate.name).toBe(proposal.candidate.name);
    expect(candidate.topology).toEqual(blockAgainstBase(base, proposal.candidate.topology));
    expect(expandCandidate(base, candidate.topology)).toEqual(
      expandCandidate(base, proposal.candidate.topology),
    );
    expect(candidate.topology.services?.renderer).toBeUndefined();
    if (text.includes('gpus:')) expect(text).toMatch(/gpus: \[[\d, ]+\]/);
  });

  it('puts the fitted model into the experiment cluster of clusters.yaml', () => {
    const text = 'clusters:\n  local:\n    gpus_per_node: 8\n  other:\n    gpus_per_node: 4\n';
    const out = parse(withMemoryModel(text, 'local', TRUE_MODEL));
    expect(out.clusters.local.memory_model).toEqual(TRUE_MODEL);
    expect(out.clusters.other.memory_model).toBeUndefined();
    expect(withMemoryModel(text, 'local', undefined)).toBe(text);
  });
});
