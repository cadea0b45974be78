// The environment of Slurm commands and the sbatch argv's --export: only the allowlist of the
// rendered submission (src/topology/job-environment.ts) crosses from the runner to a job.
import {
  BASE_EXPORTED_VARIABLES,
  SBATCH_EXPORT_FLAG,
  SUBMIT_SCRIPT_VARIABLES,
} from '../topology/job-environment.js';

/**
 * Variables of the runner's environment a Slurm COMMAND (sbatch, squeue, …) may see: the plain
 * account variables and SLURM_CONF (a cluster configured outside /etc/slurm). Everything else of the
 * action's environment (INPUT_*, GITHUB_*, ACTIONS_*, RUNNER_*, TOPO_SSH_KEY, tokens) stays out.
 */
export const COMMAND_INHERITED_VARIABLES = [...BASE_EXPORTED_VARIABLES, 'SLURM_CONF'] as const;

/** Slurm prints times in the zone of the command's TZ: always UTC, whatever the runner's zone. */
export const SLURM_TIME_ZONE = 'UTC';
/**
 * And in the format of SLURM_TIME_FORMAT: always `standard` (YYYY-MM-DDTHH:MM:SS), whatever a login
 * profile sets (`relative` prints "Tomorr 10:00", which no parser reads).
 */
export const SLURM_TIME_FORMAT = 'standard';

const SUBMIT_VARIABLE_SET = new Set<string>(SUBMIT_SCRIPT_VARIABLES);
const VALUE = /^[\x20-\x7e]{0,4096}$/;

/**
 * The environment a Slurm command starts with: the allowlisted variables of `from` (never the rest),
 * TZ=UTC, SLURM_TIME_FORMAT=standard, and `extra` (only submit.sh's variables, printable ASCII). Pure.
 */
export function plainCommandEnvironment(
  from: NodeJS.ProcessEnv,
  extra: Readonly<Record<string, string | undefined>> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of COMMAND_INHERITED_VARIABLES) {
    const value = from[key];
    if (value !== undefined && value !== '') env[key] = value;
  }
  env.TZ = SLURM_TIME_ZONE;
  env.SLURM_TIME_FORMAT = SLURM_TIME_FORMAT;
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) continue;
    if (!SUBMIT_VARIABLE_SET.has(key))
      throw new Error(
        `refusing to pass ${key} to a Slurm command: only ${SUBMIT_SCRIPT_VARIABLES.join(', ')} may be set per submission`,
      );
    if (!VALUE.test(value))
      throw new Error(`refusing to pass ${key}: its value is not printable ASCII of at most 4096 characters`);
    env[key] = value;
  }
  return env;
}

/**
 * The sbatch argv with exactly SBATCH_EXPORT_FLAG: added after `sbatch` when absent; any other
 * --export (ALL, NONE, a different list) is refused, never silently replaced.
 */
export function withExportAllowlist(argv: readonly string[]): string[] {
  const exports = argv.filter((a) => a === '--export' || a.startsWith('--export='));
  if (exports.some((a) => a !== SBATCH_EXPORT_FLAG))
    throw new Error(
      `refusing to submit: ${JSON.stringify(exports.find((a) => a !== SBATCH_EXPORT_FLAG))} would hand the runner's environment to the job; only ${SBATCH_EXPORT_FLAG} is allowed`,
    );
  if (exports.length > 0) return [...argv];
  return [argv[0] ?? 'sbatch', SBATCH_EXPORT_FLAG, ...argv.slice(1)];
}
