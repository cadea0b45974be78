// THE experiment's settings with every schema default resolved, once (experimentSettings): every
// reader (the queue, the judge, the comment, suggest, the autopilot's policy, the demo) reads the
// resolved value instead of writing `?? 3` or `?? 0.02` itself. The defaults are the schema's own
// (`default` in topologies/schema/experiment.schema.json), so the schema is the one place they live.
import experimentSchema from '../../topologies/schema/experiment.schema.json' with { type: 'json' };
import type { Experiment } from '../types/generated/experiment.js';

type Props = typeof experimentSchema.properties;

function schemaDefault<K extends keyof Props>(key: K): Props[K] extends { default: infer D } ? D : never {
  const p = experimentSchema.properties[key] as { default?: unknown };
  if (p.default === undefined) throw new Error(`experiment.schema.json: ${String(key)} has no default`);
  return p.default as never;
}

/** The schema's defaults of the settings below (read from experiment.schema.json). */
export const EXPERIMENT_DEFAULTS = {
  maxParallel: schemaDefault('max_parallel') as number,
  minImprovement: schemaDefault('min_improvement') as number,
  decisionBoundary: schemaDefault('decision_boundary') as 'alpha-spending' | 'always-valid',
  maxDecisionMinutes: schemaDefault('max_decision_minutes') as number,
  stopWhenDecided: schemaDefault('stop_when_decided') as boolean,
  stopWhenStable: schemaDefault('stop_when_stable') as boolean,
  commentIntervalMinutes: schemaDefault('comment_interval_minutes') as number,
  rolloutsPerScene: (
    experimentSchema.properties.fixed_inputs.properties.rollouts_per_scene as { default: number }
  ).default,
} as const;

/** The settings every surface reads, resolved. */
export interface ExperimentSettings {
  maxParallel: number;
  minImprovement: number;
  decisionBoundary: 'alpha-spending' | 'always-valid';
  maxDecisionMinutes: number;
  stopWhenDecided: boolean;
  stopWhenStable: boolean;
  commentIntervalMinutes: number;
  /** Rollouts the run makes in all (scene_count × rollouts_per_scene), when the scenes are counted. */
  expectedRollouts: number | null;
  /** The job's wall time as written (`fixed_inputs.slurm.time`), when set. */
  slurmTime: string | null;
  /** GPUs a job holds when the experiment says it. */
  gpusPerNode: number | null;
}

/** A part of an experiment: `topo analyze`'s flags give only some keys. */
export type SettingsSource = Partial<
  Pick<
    Experiment,
    | 'max_parallel'
    | 'min_improvement'
    | 'decision_boundary'
    | 'max_decision_minutes'
    | 'stop_when_decided'
    | 'stop_when_stable'
    | 'comment_interval_minutes'
  >
> & {
  fixed_inputs?: Partial<Pick<Experiment['fixed_inputs'], 'scene_count' | 'rollouts_per_scene'>> & {
    slurm?: { time?: string; gpus_per_node?: number };
  };
};

/** Every schema default resolved, once. */
export function experimentSettings(x: SettingsSource | null | undefined): ExperimentSettings {
  const d = EXPERIMENT_DEFAULTS;
  const fi = x?.fixed_inputs;
  return {
    maxParallel: x?.max_parallel ?? d.maxParallel,
    minImprovement: x?.min_improvement ?? d.minImprovement,
    decisionBoundary: x?.decision_boundary ?? d.decisionBoundary,
    maxDecisionMinutes: x?.max_decision_minutes ?? d.maxDecisionMinutes,
    stopWhenDecided: x?.stop_when_decided ?? d.stopWhenDecided,
    stopWhenStable: x?.stop_when_stable ?? d.stopWhenStable,
    commentIntervalMinutes: x?.comment_interval_minutes ?? d.commentIntervalMinutes,
    expectedRollouts: fi?.scene_count ? fi.scene_count * (fi.rollouts_per_scene ?? d.rolloutsPerScene) : null,
    slurmTime: fi?.slurm?.time ?? null,
    gpusPerNode: fi?.slurm?.gpus_per_node ?? null,
  };
}
