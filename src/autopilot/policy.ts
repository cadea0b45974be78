// The autopilot's policy: experiment.yaml's `autopilot` block on the default branch, with its
// defaults, what one run is expected to cost, and the rules that refuse an inconsistent policy at
// its line. Pure.

import { slurmTimeToMinutes } from '../analysis/observe.js';
import type { CampaignPolicy } from '../campaign/rounds.js';
import { SUBMIT_DEFAULTS, TIMELINE } from '../catalog/alpasim.js';
import { MONITOR_CHECK_NAME } from '../github/check-runs.js';
import { issueAt } from '../topology/files.js';
import type { Issue } from '../topology/issues.js';
import { EXPERIMENT_DEFAULTS, experimentSettings } from '../topology/settings.js';
import type { LoadedYaml } from '../topology/yaml.js';
import type { Cluster } from '../types/generated/clusters.js';
import type { Experiment } from '../types/generated/experiment.js';

export interface AutopilotPolicy {
  enabled: boolean;
  maxRounds: number;
  gpuHours: number;
  parallel: number;
  stopAfter: number;
  submit: 'auto' | 'approval';
  merge: 'manual' | 'auto';
  requiredChecks: string[];
  /** The experiment's min_improvement (its schema default when absent): the campaign loop's stop rule and reruns read it. */
  minImprovement?: number;
}

/** The check run that carries the monitor's decision: merge: auto never merges without it. */
export const DECISION_CHECK = MONITOR_CHECK_NAME;
/** A reference (a round's winner) is measured well enough to decide later rounds against (±1.5%). */
export const REFERENCE_PRECISION = 0.015;

/** The policy with its defaults, or null when the experiment has no `autopilot` block. */
export function policyOf(experiment: Experiment): AutopilotPolicy | null {
  const a = experiment.autopilot;
  if (!a) return null;
  return {
    enabled: a.enabled,
    maxRounds: a.max_rounds ?? 6,
    gpuHours: a.gpu_hours,
    parallel: a.parallel ?? experimentSettings(experiment).maxParallel,
    stopAfter: a.stop_after ?? 2,
    submit: a.submit ?? 'auto',
    merge: a.merge ?? 'manual',
    requiredChecks: a.required_checks ?? [],
    minImprovement: experimentSettings(experiment).minImprovement,
  };
}

/** The campaign loop's policy (src/campaign/rounds.ts) for this experiment: the autopilot's rounds are its rounds. */
export function campaignPolicy(policy: AutopilotPolicy): CampaignPolicy {
  return {
    parallel: policy.parallel,
    minImprovement: policy.minImprovement ?? EXPERIMENT_DEFAULTS.minImprovement,
    stopAfter: policy.stopAfter,
    maxRounds: policy.maxRounds,
    gpuHours: policy.gpuHours,
    referencePrecision: REFERENCE_PRECISION,
  };
}

export interface RunCost {
  gpus: number;
  /** Run-hours a run is expected to hold its GPUs. */
  hours: number;
  gpuHours: number;
  /** Where the hours come from, for messages. */
  basis: string;
}

/** GPUs a job of the experiment holds: the command's --gpus, else its gpus_per_node, else the cluster's. */
export function gpusPerRun(experiment: Experiment, cluster?: Pick<Cluster, 'gpus_per_node'>): number {
  const slurm = experiment.fixed_inputs.slurm;
  return slurm?.gpus ?? slurm?.gpus_per_node ?? cluster?.gpus_per_node ?? SUBMIT_DEFAULTS.gpusPerNode;
}

/**
 * What one run is expected to cost: its GPUs over its wall time or, when the monitor stops runs on
 * their decision (stop_when_decided, the default), over the start-up and the decision horizon
 * (max_decision_minutes), whichever is shorter.
 */
export function runCost(experiment: Experiment, cluster?: Pick<Cluster, 'gpus_per_node' | 'slurm'>): RunCost {
  const gpus = gpusPerRun(experiment, cluster);
  const time = experiment.fixed_inputs.slurm?.time ?? cluster?.slurm?.time ?? SUBMIT_DEFAULTS.time;
  const wall = slurmTimeToMinutes(time) ?? slurmTimeToMinutes(SUBMIT_DEFAULTS.time) ?? 239;
  const settings = experimentSettings(experiment);
  const horizonMinutes = settings.maxDecisionMinutes;
  const decided = settings.stopWhenDecided ? TIMELINE.startupMinutes + horizonMinutes : wall;
  const minutes = Math.min(wall, decided);
  const basis =
    minutes < wall
      ? `${TIMELINE.startupMinutes} min start-up + ${horizonMinutes} min to a decision (stop_when_decided)`
      : `its wall time ${time}`;
  return { gpus, hours: minutes / 60, gpuHours: (gpus * minutes) / 60, basis };
}

const round1 = (x: number) => Math.ceil(x * 10) / 10;

/**
 * Rules a schema cannot say: parallel within max_parallel, a budget that fits one run, merge: auto
 * only with the branch protection it relies on written down, a stop rule max_rounds can reach.
 */
export function autopilotIssues(
  loaded: LoadedYaml,
  experiment: Experiment,
  context: { cluster?: Cluster },
): Issue[] {
  const policy = policyOf(experiment);
  const a = experiment.autopilot;
  if (!policy || !a) return [];
  const issues: Issue[] = [];
  const at = (key: string, rule: string, message: string, severity: Issue['severity'] = 'error') =>
    issues.push(issueAt(loaded, rule, ['autopilot', key], message, false, severity));
  const maxParallel = experimentSettings(experiment).maxParallel;
  if (a.parallel !== undefined && a.parallel > maxParallel)
    at(
      'parallel',
      'autopilot-parallel',
      `parallel ${a.parallel} is above max_parallel ${maxParallel}: no more than max_parallel candidates of the experiment run at once, so a round would wait for its own slots; use at most ${maxParallel} (or raise max_parallel)`,
    );
  if (context.cluster) {
    const cost = runCost(experiment, context.cluster);
    if (a.gpu_hours < cost.gpuHours)
      at(
        'gpu_hours',
        'autopilot-budget',
        `gpu_hours ${a.gpu_hours} is below one run's expected cost, ${round1(cost.gpuHours)} GPU-hours (${cost.gpus} GPUs × ${round1(cost.hours)} h: ${cost.basis}): the autopilot could never start a run; use at least ${round1(cost.gpuHours)}, or about ${round1(cost.gpuHours * policy.parallel * 3)} for three rounds of ${policy.parallel}`,
      );
  }
  if (policy.merge === 'auto' && !policy.requiredChecks.includes(DECISION_CHECK))
    at(
      a.required_checks ? 'required_checks' : 'merge',
      'autopilot-merge',
      `merge: auto merges the concluded winner with no person in the loop, so it relies on branch protection: list the status checks your default branch requires in autopilot.required_checks, ${DECISION_CHECK} (the decision) among them, and require them in the branch protection rule (docs/autopilot.md, "merge: auto"); or use merge: manual`,
    );
  if (policy.stopAfter > policy.maxRounds)
    at(
      'stop_after',
      'autopilot-stop-rule',
      `stop_after ${policy.stopAfter} is above max_rounds ${policy.maxRounds}: the stop rule can never end the experiment before max_rounds does`,
      'warning',
    );
  return issues;
}
