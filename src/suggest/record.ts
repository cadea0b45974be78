// The adapter from the experiment record (experiments/<id>.json) to the suggester's input, and
// the fitted memory model for any caller that has a record (validation uses it too). Pure.
import { expandCandidate } from '../topology/expand.js';
import type { Candidate } from '../types/generated/candidate.js';
import type { MemoryModel } from '../types/generated/clusters.js';
import type { ExperimentRecord, RecordRun } from '../types/generated/record.js';
import type { Topology } from '../types/generated/topology.js';
import { fitMemoryModel } from './memory-model.js';
import type { FittedMemoryModel, TriedCandidate } from './types.js';

/** The record's runs (and candidate files not yet in the record) as the suggester's tried list. */
export function triedFromRecord(
  record: ExperimentRecord | undefined,
  base: Topology,
  candidateFiles: ReadonlyMap<string, Candidate>,
): TriedCandidate[] {
  const tried: TriedCandidate[] = [];
  const seen = new Set<string>();
  for (const run of record?.runs ?? []) {
    const block = run.topology?.block ?? candidateFiles.get(run.name)?.topology ?? {};
    tried.push({
      name: run.name,
      parent: run.parent ?? null,
      topology: expandCandidate(base, block),
      status: run.status,
      observation: observationOf(run),
    });
    seen.add(run.name);
  }
  // Candidate files without a record entry are live or queued: tried, no evidence yet.
  for (const [name, candidate] of [...candidateFiles].sort(([a], [b]) => a.localeCompare(b))) {
    if (seen.has(name)) continue;
    tried.push({
      name,
      parent: candidate.parent ?? null,
      topology: expandCandidate(base, candidate.topology),
      status: 'pending',
    });
  }
  return tried;
}

function observationOf(run: RecordRun): TriedCandidate['observation'] {
  const failure = run.failures?.[0];
  return {
    ...(run.verdict ? { verdict: run.verdict } : {}),
    ...(run.stable_metrics ? { stable_metrics: run.stable_metrics } : {}),
    ...(run.monitor_decision ? { decision: run.monitor_decision } : {}),
    ...(failure ? { failure } : {}),
  };
}

/**
 * The memory model learned from the record's measured runs (GPU memory per GPU from DCGM and each
 * run's GPU map), in clusters.yaml's MemoryModel shape; the prior (clusters.yaml memory_model)
 * when nothing was measured. `base` is the expanded base preset.
 */
export function fittedMemoryModel(
  record: ExperimentRecord | undefined,
  base: Topology,
  prior?: MemoryModel,
): FittedMemoryModel {
  return fitMemoryModel(triedFromRecord(record, base, new Map()), prior);
}
