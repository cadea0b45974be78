// The autopilot's read side: the policy and experiment from the default branch's files, the record,
// and one run's expected cost, then the core's plan (src/autopilot/core.ts). `topo autopilot
// status|plan` call it on a checkout; the monitor's autopilot stage adds the live runs and the
// dashboard's controls. I/O only through the FileSource.
import {
  type Controls,
  type PilotInput,
  type PilotPlan,
  type PilotRun,
  planStep,
} from '../autopilot/core.js';
import { type AutopilotPolicy, autopilotIssues, gpusPerRun, policyOf, runCost } from '../autopilot/policy.js';
import { mergeRuns, runsFromRecord, withReruns } from '../autopilot/runs.js';
import { recordPaths } from '../record/model.js';
import { parseRecord } from '../record/validate.js';
import { checkClusters, checkExperiment } from '../topology/files.js';
import { experimentSettings } from '../topology/settings.js';
import type { Cluster } from '../types/generated/clusters.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { ExperimentRecord } from '../types/generated/record.js';
import type { FileSource } from './validate.js';

/** A user's mistake in what the autopilot reads (exit 2 in the CLI), never an outage. */
export class AutopilotConfigError extends Error {
  override name = 'AutopilotConfigError';
}

export interface AutopilotContext {
  experiment: Experiment;
  policy: AutopilotPolicy;
  cluster?: Cluster;
  record?: ExperimentRecord;
  runGpuHours: number;
  recorded: PilotRun[];
  /** The policy's errors (validate's rules, file:line: rule: message): the autopilot does nothing while any stands. */
  refused: string[];
}

const EXPERIMENT_ID = /^[a-z0-9][a-z0-9_.-]{0,79}$/;

/** Reads what the plan needs from one commit (the default branch's, for the policy's sake). */
export async function readAutopilot(
  files: FileSource,
  experimentId: string,
  clustersFile = 'topologies/clusters.yaml',
): Promise<AutopilotContext> {
  if (!EXPERIMENT_ID.test(experimentId))
    throw new AutopilotConfigError(
      `"${experimentId}" is not an experiment id (lowercase letters, digits, . _ -)`,
    );
  const file = `topologies/${experimentId}/experiment.yaml`;
  const text = await files.read(file);
  if (text === undefined) throw new AutopilotConfigError(`${file} not found: no experiment ${experimentId}`);
  const checked = checkExperiment(text, file);
  if (!checked.value) {
    const i = checked.issues[0];
    throw new AutopilotConfigError(`${file}:${i?.line}: ${i?.keyPath}: ${i?.message}`);
  }
  const experiment = checked.value;
  const policy = policyOf(experiment);
  if (!policy)
    throw new AutopilotConfigError(
      `${file} has no autopilot block: add one (docs/autopilot.md, "The policy") to let the experiment run its own rounds`,
    );
  const clustersText = await files.read(clustersFile);
  const cluster = clustersText
    ? checkClusters(clustersText, clustersFile).value?.clusters[experiment.cluster]
    : undefined;
  // validate's rules, checked again here: a policy merged past a failing check is refused, not run
  const refused = autopilotIssues(checked.loaded, experiment, cluster ? { cluster } : {})
    .filter((i) => i.severity === 'error')
    .map((i) => `${file}:${i.line}: ${i.rule}: ${i.message}`);
  const recordFile = recordPaths(experimentId).json;
  const recordText = await files.read(recordFile);
  const record = recordText === undefined ? undefined : parseRecord(recordText, recordFile);
  return {
    experiment,
    policy,
    ...(cluster ? { cluster } : {}),
    ...(record ? { record } : {}),
    runGpuHours: runCost(experiment, cluster).gpuHours,
    refused,
    recorded: runsFromRecord(record, gpusPerRun(experiment, cluster), {
      minImprovement: experimentSettings(experiment).minImprovement,
      horizonMinutes: experimentSettings(experiment).maxDecisionMinutes,
    }),
  };
}

/**
 * The plan over the recorded runs and the live ones (none on a bare checkout). With `rounds` (the
 * bot's state: its candidates and their rounds), a recorded run is the bot's only when the bot opened
 * it, whatever its hypothesis says ("Autopilot round 9: …" written by a person is a person's).
 */
export function planFor(
  ctx: AutopilotContext,
  live: readonly PilotRun[] = [],
  controls: Controls = { paused: false, stopLive: false },
  concluded?: { reason: string },
  held: Readonly<Record<string, number>> = {},
  rounds?: Readonly<Record<string, number>>,
  /**
   * suggest's answer for a due round, the bot state's predicted bests, the live reference jobs
   * (PilotInput) and its reruns (PilotState.reruns: each held candidate's attempt, ./runs.ts withReruns).
   */
  {
    reruns = {},
    ...round
  }: Pick<PilotInput, 'suggestion' | 'predicted' | 'referenceJobs'> & {
    reruns?: Parameters<typeof withReruns>[1];
  } = {},
): { runs: PilotRun[]; plan: PilotPlan } {
  const recorded = rounds ? withRounds(ctx.recorded, rounds) : ctx.recorded;
  const runs = withHeld(withReruns(mergeRuns(recorded, live), reruns), held);
  const named = new Set(runs.map((r) => r.runName));
  const spentElsewhere = Object.entries(held).reduce((a, [name, h]) => a + (named.has(name) ? 0 : h), 0);
  const concludedByRecord = ctx.record?.report?.concluded_at
    ? { reason: 'the record holds its final report' }
    : undefined;
  const done = concluded ?? concludedByRecord;
  const plan = planStep({
    experimentId: ctx.experiment.experiment_id,
    policy: ctx.policy,
    runs,
    controls,
    runGpuHours: ctx.runGpuHours,
    spentElsewhere,
    ...(done ? { concluded: done } : {}),
    ...(ctx.refused?.length ? { refused: ctx.refused } : {}),
    ...round,
  });
  return { runs, plan };
}

/** Each run's GPU-hours at least what the bot's state kept of its run (Slurm may have forgotten the job). */
function withHeld(runs: PilotRun[], held: Readonly<Record<string, number>>): PilotRun[] {
  return runs.map((r) => {
    const kept = r.runName ? held[r.runName] : undefined;
    return kept !== undefined && kept > r.gpuHours ? { ...r, gpuHours: kept } : r;
  });
}

/** Recorded runs with the round the bot gave them; every other one (baseline aside) is a person's. */
function withRounds(runs: readonly PilotRun[], rounds: Readonly<Record<string, number>>): PilotRun[] {
  return runs.map((r) => {
    if (r.round === 0) return r;
    const round = rounds[r.name] ?? null;
    return { ...r, round, origin: round === null ? ('person' as const) : ('bot' as const) };
  });
}
