// Runs the CLI bundle (bin/topo.js) in a child process, as a user types it: exit code, signal and the
// plain output (FORCE_COLOR=0). For what only a real process shows: exit codes on signals, the bundle.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './cluster.js';

export interface CliProcessRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface SpawnOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Called with the child once it runs (to signal it when something outside the output happened). */
  started?: (child: ChildProcess) => void;
}

/** `onStdout` sees the whole stdout so far after each chunk, with the child (to signal it, say). */
export function spawnTopo(
  args: string[],
  onStdout?: (text: string, child: ChildProcess) => void,
  options: SpawnOptions = {},
): Promise<CliProcessRun> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, 'bin/topo.js'), ...args], {
      cwd: options.cwd ?? repoRoot,
      env: { ...(options.env ?? process.env), FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    options.started?.(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      onStdout?.(stdout, child);
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolvePromise({ code, signal, stdout, stderr }));
  });
}
