// Entry of the `topo` command: dispatches to src/cli/commands/<name>.ts.
import { type CliIO, type Command, UsageError } from './command.js';
import { commands } from './commands/index.js';

export async function main(argv: string[], io: CliIO): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    io.stdout(helpText(commands));
    return name ? 0 : 2;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.stderr(`topo: unknown command "${name}"\n\n${helpText(commands)}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout(`${command.usage}\n`);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`topo ${name}: ${error.message}\n\nusage: ${command.usage}\n`);
      return 2;
    }
    io.stderr(`topo ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

export function helpText(list: readonly Command[]): string {
  const width = Math.max(...list.map((c) => c.name.length));
  const lines = list.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `topo: AlpaSim Slurm topology experiments as pull requests\n\nusage: topo <command> [options]\n\n${lines.join('\n')}\n\nRun \`topo <command> --help\` for a command's options.\n`;
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
