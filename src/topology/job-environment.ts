// What crosses from the runner to a Slurm job: nothing but this allowlist, part of the rendered
// submission (render.ts puts SBATCH_EXPORT_FLAG in the sbatch argv; src/slurm enforces it). sbatch
// defaults to --export=ALL, which would hand the action's environment (tokens, the SSH key) to
// slurmctld's spool and the job's processes. submit.sh is a plain bash script that runs `uv` from
// PATH, so --export=NONE alone would break it: these are the variables it and the shell need.

/** Variables of the runner account's plain environment a job may see. */
export const BASE_EXPORTED_VARIABLES = ['PATH', 'HOME', 'USER', 'LANG'] as const;

/** Variables AlpaSim's submit.sh reads; set per submission by render, values pattern-checked. */
export const SUBMIT_SCRIPT_VARIABLES = [
  'LOGDIR',
  'DESCRIPTION',
  'SUBMITTER',
  'ALPASIM_MAX_REQUEUES',
] as const;

export type ExportedVariable =
  | (typeof BASE_EXPORTED_VARIABLES)[number]
  | (typeof SUBMIT_SCRIPT_VARIABLES)[number];

export const SBATCH_EXPORTED_VARIABLES: readonly ExportedVariable[] = [
  ...BASE_EXPORTED_VARIABLES,
  ...SUBMIT_SCRIPT_VARIABLES,
];

/** The sbatch flag that limits the job's environment to the allowlist. */
export const SBATCH_EXPORT_FLAG = `--export=${SBATCH_EXPORTED_VARIABLES.join(',')}`;
