// The shape of one `topo` subcommand (each lives in src/cli/commands/<name>.ts) and the exit codes
// every command shares.
import type { CommandHelp } from './args.js';

export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** True when stdout is a terminal (live views) rather than a pipe or CI log. */
  isTTY: boolean;
}

/** The same situation exits with the same code in every command (docs/cli.md#exit-codes). */
export const EXIT = {
  ok: 0,
  /** Findings (validation errors, no data yet) or a run that failed. */
  findings: 1,
  /** Bad arguments, a missing file or experiment, a configuration that cannot be used. */
  usage: 2,
  /** Slurm, Prometheus or GitHub could not be reached. */
  unreachable: 3,
} as const;

export interface Command {
  name: string;
  summary: string;
  /** Options, defaults, environment and examples: parsed by src/cli/args.ts and shown by --help. */
  help: CommandHelp;
  /** Returns the exit code (EXIT). */
  run(args: string[], io: CliIO): Promise<number>;
}

/** Bad arguments: printed with the command's synopsis, exit 2. */
export class UsageError extends Error {}

/** A file, experiment or cluster that is missing or unusable: one line, exit 2. */
export class ConfigError extends Error {}

/** A service that cannot be reached: one line, exit 3. */
export class UnreachableError extends Error {}
