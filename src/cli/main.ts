// Entry of the `topo` command: dispatches to src/cli/commands/<name>.ts and turns errors into the
// shared exit codes.
import { renderHelp } from './args.js';
import type { CliIO, Command } from './command.js';
import { commands } from './commands/index.js';
import { ConfigError, EXIT, UnreachableError, UsageError } from './errors.js';
import { serviceFailure } from './services.js';

export async function main(argv: string[], io: CliIO): Promise<number> {
  const [name, ...rest] = argv;
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
    return reportError(command, error, io);
  }
}

/** --help or -h before any `--`; `topo sim run` passes its arguments through untouched. */
function wantsHelp(command: Command, rest: string[]): boolean {
  if (command.name === 'sim' && rest[0] === 'run') return false;
  const end = rest.indexOf('--');
  const head = end === -1 ? rest : rest.slice(0, end);
  return head.includes('--help') || head.includes('-h');
}

function reportError(command: Command, error: unknown, io: CliIO): number {
  const prefix = `topo ${command.name}`;
  if (error instanceof UsageError) {
    io.stderr(
      `${prefix}: ${error.message}\n\nusage: ${command.help.synopsis}\n(see topo ${command.name} --help)\n`,
    );
    return EXIT.usage;
  }
  if (error instanceof ConfigError) {
    io.stderr(`${prefix}: ${error.message}\n`);
    return EXIT.usage;
  }
  const unreachable = error instanceof UnreachableError ? error.message : serviceFailure(error);
  if (unreachable) {
    io.stderr(`${prefix}: ${unreachable}\n`);
    return EXIT.unreachable;
  }
  io.stderr(`${prefix}: ${error instanceof Error ? error.message : String(error)}\n`);
  return EXIT.findings;
}

export function helpText(list: readonly Command[]): string {
  const width = Math.max(...list.map((c) => c.name.length));
  const lines = list.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `topo: AlpaSim Slurm topology experiments as pull requests\n\nusage: topo <command> [options]\n\n${lines.join('\n')}\n\nRun \`topo <command> --help\` for a command's options, defaults and examples.\nExit codes: 0 ok; 1 findings or a failed run; 2 usage or configuration error; 3 a service unreachable.\n`;
}

/** Runs the CLI on this process's arguments and streams; used by bin/topo.js. */
export async function runCli(): Promise<void> {
  const code = await main(process.argv.slice(2), {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    cwd: process.cwd(),
    env: process.env,
    isTTY: Boolean(process.stdout.isTTY),
  });
  process.exitCode = code;
}
