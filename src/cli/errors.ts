// The exit codes every `topo` command shares and the errors that map to them (docs/cli.md#exit-codes).
// Below both args.ts (which throws UsageError) and command.ts (which names a command's shape).

/** The same situation exits with the same code in every command. */
export const EXIT = {
  ok: 0,
  /** Findings (validation errors, no data yet) or a run that failed. */
  findings: 1,
  /** Bad arguments, a missing file or experiment, a configuration that cannot be used. */
  usage: 2,
  /** Slurm's controller, the login node, Prometheus or GitHub could not be reached. */
  unreachable: 3,
  /** Refused for safety: the login node's SSH host key is not the pinned one. */
  refused: 4,
  /** Interrupted (Ctrl-C) after the command left Slurm in order (128 + SIGINT, as shells report it). */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Bad arguments: printed with the command's synopsis, exit 2. */
export class UsageError extends Error {}

/** A file, experiment or cluster that is missing or unusable: one line, exit 2. */
export class ConfigError extends Error {}

/** A service that cannot be reached: one line, exit 3. */
export class UnreachableError extends Error {}

/** Stopped by a Ctrl-C once the command had left Slurm in order: one line, exit 130. */
export class InterruptedError extends Error {}

/** A finding stated in one line (e.g. no series has that run name): exit 1. */
export class FindingError extends Error {
  /** The findings behind it (a candidate's validation errors), one line each; in the --json error too. */
  constructor(
    message: string,
    readonly issues: readonly string[] = [],
  ) {
    super(message);
  }
}

/** What `--json` prints on stdout when a command fails (schemas/cli/error.schema.json). */
export interface JsonError {
  schema_version: 1;
  command: string;
  error: {
    kind: 'usage' | 'configuration' | 'unreachable' | 'refused' | 'findings' | 'interrupted' | 'internal';
    exit_code: number;
    message: string;
    /** The findings behind a `findings` error (a candidate's validation errors), one line each. */
    issues?: string[];
  };
}
