// Runs the CLI in-process with captured output (what a user would see on stdout and stderr).
import type { CliIO } from '../../src/cli/command.js';
import { main } from '../../src/cli/main.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runTopo(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const io: CliIO = {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    cwd,
    env,
    isTTY: false,
  };
  const code = await main(args, io);
  return { code, stdout, stderr };
}
