// The shape of one `topo` subcommand (each lives in src/cli/commands/<name>.ts); the exit codes
// and errors every command shares are in errors.ts.
import type { CommandHelp } from './args.js';

export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** True when stdout is a terminal (live views) rather than a pipe or CI log. */
  isTTY: boolean;
  /**
   * From this call until `release()`, the first Ctrl-C (SIGINT, SIGTERM) aborts `signal`, so the
   * command can leave Slurm in order (a submit withdraws the job it holds, a watch stops looking);
   * a second one ends the process at once (exit 130). Absent in-process (tests): nothing to catch.
   */
  interrupts?: () => { signal: AbortSignal; release(): void };
}

export interface Command {
  name: string;
  summary: string;
  /** Options, defaults, environment and examples: parsed by src/cli/args.ts and shown by --help. */
  help: CommandHelp;
  /** Returns the exit code (EXIT). */
  run(args: string[], io: CliIO): Promise<number>;
}
