// The shape of one `topo` subcommand. Each lives in src/cli/commands/<name>.ts.
export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** True when stdout is a terminal (live views) rather than a pipe or CI log. */
  isTTY: boolean;
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  /** Returns the exit code: 0 ok, 1 failure (e.g. validation errors), 2 usage error. */
  run(args: string[], io: CliIO): Promise<number>;
}

/** A usage error: printed with the command's usage, exit code 2. */
export class UsageError extends Error {}
