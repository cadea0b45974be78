// Entry of the `topo` command: dispatches to src/cli/commands/<name>.ts and turns errors into the
// shared exit codes (and, under --json, into one JSON error document on stdout).
import { HostKeyMismatchError, KeyRefusedError, SlurmConfigError } from '../slurm/errors.js';
import { SubmitInterrupted } from '../usecases/submit.js';
import { renderHelp } from './args.js';
import type { CliIO, Command } from './command.js';
import { commands } from './commands/index.js';
import {
  ConfigError,
  EXIT,
  FindingError,
  InterruptedError,
  type JsonError,
  UnreachableError,
  UsageError,
} from './errors.js';
import { packageInfo } from './package-info.js';
import { serviceFailure } from './services.js';

export async function main(argv: string[], io: CliIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    const info = packageInfo();
    io.stdout(`topo ${info.version} (${info.name}, github.com/${info.repository})\n`);
    return EXIT.ok;
  }
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    const which = name === 'help' ? commands.find((c) => c.name === rest[0]) : undefined;
    io.stdout(which ? renderHelp(which.name, which.summary, which.help) : helpText(commands));
    // Bare `topo` is a usage error (scripts that forget the command notice); asking for help is not.
    return name ? EXIT.ok : EXIT.usage;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.stderr(`topo: unknown command "${name}"\n\n${helpText(commands)}`);
    return EXIT.usage;
  }
  if (wantsHelp(command, rest)) {
    io.stdout(renderHelp(command.name, command.summary, command.help));
    return EXIT.ok;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    return reportError(command, error, io, optionsOf(command, rest).includes('--json'));
  }
}

/** The arguments before any `--` (`topo sim run` passes its arguments through untouched). */
function optionsOf(command: Command, rest: string[]): string[] {
  if (command.name === 'sim' && rest[0] === 'run') return [];
  const end = rest.indexOf('--');
  return end === -1 ? rest : rest.slice(0, end);
}

function wantsHelp(command: Command, rest: string[]): boolean {
  const head = optionsOf(command, rest);
  return head.includes('--help') || head.includes('-h');
}

/** What an error means for the user: its kind, exit code and the one line to print. */
export function classifyError(error: unknown): JsonError['error'] {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof UsageError) return { kind: 'usage', exit_code: EXIT.usage, message };
  if (error instanceof ConfigError || error instanceof SlurmConfigError)
    return { kind: 'configuration', exit_code: EXIT.usage, message };
  if (error instanceof HostKeyMismatchError || error instanceof KeyRefusedError)
    return { kind: 'refused', exit_code: EXIT.refused, message };
  if (error instanceof InterruptedError || error instanceof SubmitInterrupted)
    return { kind: 'interrupted', exit_code: EXIT.interrupted, message };
  if (error instanceof FindingError)
    return {
      kind: 'findings',
      exit_code: EXIT.findings,
      message,
      ...(error.issues.length ? { issues: [...error.issues] } : {}),
    };
  const unreachable = error instanceof UnreachableError ? message : serviceFailure(error);
  if (unreachable) return { kind: 'unreachable', exit_code: EXIT.unreachable, message: unreachable };
  return { kind: 'internal', exit_code: EXIT.findings, message };
}

function reportError(command: Command, error: unknown, io: CliIO, json: boolean): number {
  const e = classifyError(error);
  const prefix = `topo ${command.name}`;
  if (json) {
    const doc: JsonError = { schema_version: 1, command: command.name, error: e };
    io.stdout(`${JSON.stringify(doc)}\n`);
  }
  io.stderr(
    e.kind === 'usage'
      ? `${prefix}: ${e.message}\n\nusage: ${command.help.synopsis}\n(see topo ${command.name} --help)\n`
      : `${prefix}: ${e.message}\n`,
  );
  return e.exit_code;
}

export function helpText(list: readonly Command[]): string {
  const width = Math.max(...list.map((c) => c.name.length));
  const lines = list.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `topo: AlpaSim Slurm topology experiments as pull requests\n\nusage: topo <command> [options]\n       topo --version\n\n${lines.join('\n')}\n\nRun \`topo <command> --help\` for a command's options, defaults and examples.\n${EXIT_CODES_TEXT}\n`;
}

export const EXIT_CODES_TEXT =
  'Exit codes: 0 ok; 1 findings or a failed run; 2 usage or configuration error; 3 a service unreachable; 4 refused (SSH host key not the pinned one); 130 interrupted (Ctrl-C), after leaving Slurm in order.';

/** Runs the CLI on this process's arguments and streams; used by bin/topo.js. */
export async function runCli(): Promise<void> {
  const code = await main(process.argv.slice(2), {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    cwd: process.cwd(),
    env: process.env,
    isTTY: Boolean(process.stdout.isTTY),
    interrupts: catchInterrupts,
  });
  process.exitCode = code;
}

/** CliIO.interrupts for this process: the first SIGINT/SIGTERM aborts, the second exits 130. */
function catchInterrupts(): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const onSignal = () => {
    if (controller.signal.aborted) process.exit(EXIT.interrupted);
    process.stderr.write('topo: interrupted: leaving Slurm in order (Ctrl-C again to quit at once)\n');
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    release() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
