// The experiment record: the experiment's memory (experiments/<id>.json) and the helpers that read it.
// Pure: no I/O here. Types come from topologies/schema/record.schema.json.
import type { ReferenceSource } from '../lifecycle/reference.js';
import { TOPOLOGY_HASH8 } from '../topology/run-name.js';
import { EXPERIMENT_DEFAULTS } from '../topology/settings.js';
import type { Cluster } from '../types/generated/clusters.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { Interval, Verdict } from '../types/generated/metrics.js';
import type { ExperimentRecord, RecordRun } from '../types/generated/record.js';

export type {
  CurrentBest,
  Decision,
  ExperimentRecord,
  RecordRun,
  RunTopology,
  SkillReflection,
} from '../types/generated/record.js';

export const RECORD_SCHEMA_VERSION = 1 as const;
export const DEFAULT_OBJECTIVE = 'minimize stabilized full-run seconds_per_rollout';

/** Where an experiment's record files live in the repository. */
export function recordPaths(experimentId: string): {
  json: string;
  markdown: string;
  report: string;
  chart: string;
} {
  return {
    json: `experiments/${experimentId}.json`,
    markdown: `experiments/${experimentId}.md`,
    report: `experiments/${experimentId}-report.md`,
    chart: `experiments/${experimentId}.svg`,
  };
}

/** A fresh record for `topo init` (and for the first close when init's record was never committed). */
export function createRecord(experiment: Experiment, cluster?: Cluster): ExperimentRecord {
  const fixed = experiment.fixed_inputs;
  return {
    schema_version: RECORD_SCHEMA_VERSION,
    experiment_id: experiment.experiment_id,
    objective: experiment.objective ?? DEFAULT_OBJECTIVE,
    command: experiment.command ?? null,
    fixed_inputs: {
      deploy: fixed.deploy,
      driver: fixed.driver,
      base_topology: `topology=${experiment.base_topology}`,
      cluster: experiment.cluster,
      scenes: {
        scene_ids: null,
        test_suite_id: fixed.scenes ?? null,
        scene_count: fixed.scene_count ?? null,
      },
      cameras: fixed.cameras ?? null,
      control_timestep_us: fixed.control_timestep_us ?? null,
      simulation_duration_s: fixed.simulation_duration_s ?? 20,
      rollouts_per_scene: fixed.rollouts_per_scene ?? EXPERIMENT_DEFAULTS.rolloutsPerScene,
      git_commit: fixed.git_commit ?? null,
      remote_checkout: cluster?.alpasim_checkout ?? null,
      overrides: [...(fixed.overrides ?? [])],
      telemetry: {
        prometheus_url: cluster?.prometheus_url ?? null,
        grafana_url: cluster?.grafana_url ?? null,
        file_sd_source: cluster?.file_sd ?? null,
      },
      slurm: {
        account: fixed.slurm?.account ?? cluster?.slurm.account ?? null,
        partition: fixed.slurm?.partition ?? cluster?.slurm.partition ?? null,
        gpus_per_node: fixed.slurm?.gpus_per_node ?? cluster?.gpus_per_node ?? null,
        walltime: fixed.slurm?.time ?? cluster?.slurm.time ?? null,
      },
    },
    current_best: {
      topology: null,
      run_name: null,
      stabilized_seconds_per_rollout_full_run: null,
      decision_reasoning: null,
    },
    runs: [],
    report: null,
  };
}

/**
 * The value candidates are compared on: the projected full-run seconds per rollout when the detector
 * gave one, else the stable value, else the last full-run reading. Lower is better.
 */
export function stabilisedValue(run: RecordRun): number | null {
  return (
    run.verdict?.projected_full_run?.value ??
    run.verdict?.value?.value ??
    run.stable_metrics?.seconds_per_rollout_full_run ??
    null
  );
}

/** The baseline: the first run without a parent (else the first run). */
export function baselineRun(record: ExperimentRecord): RecordRun | undefined {
  return record.runs.find((r) => !r.parent) ?? record.runs[0];
}

/** The run named as current best. */
export function bestRun(record: ExperimentRecord): RecordRun | undefined {
  const name = record.current_best.topology;
  return name ? record.runs.find((r) => r.name === name) : undefined;
}

/**
 * A record run as the monitor's reference: its name, projected seconds per rollout with interval, and
 * its verdict (with the decision estimate's trajectory, so that a candidate is compared with it at
 * equal run age: src/analysis/decision.ts referenceAtAge).
 */
export function referenceOf(
  run: RecordRun | undefined,
): { name: string; value: Interval; verdict?: Verdict } | null {
  const value = run?.verdict?.projected_full_run ?? run?.verdict?.value ?? null;
  return run && value ? { name: run.name, value, ...(run.verdict ? { verdict: run.verdict } : {}) } : null;
}

/**
 * What a reference job beside a round's candidates runs (src/lifecycle/reference.ts): the record's
 * current best, else its baseline, from its candidate file with the topology hash its run had. Null
 * when the record names neither or keeps no file or hash for it.
 */
export function referenceSourceOf(record: ExperimentRecord): ReferenceSource | null {
  const run = bestRun(record) ?? baselineRun(record);
  const file = run?.topology?.file;
  const hash = run?.topology?.hash?.slice(0, 8);
  return run && file && hash && TOPOLOGY_HASH8.test(hash)
    ? { name: run.name, path: file, topologyHash: hash }
    : null;
}
