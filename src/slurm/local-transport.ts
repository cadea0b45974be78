// Transport for a runner that sits on the login node: each command is a child process started from an
// argv array (no shell), with a timeout, from a PLAIN environment: the allowlisted variables of the
// runner account (PATH, HOME, USER, LANG, SLURM_CONF), TZ=UTC and the command's own submit.sh
// variables; never the action's environment (tokens, INPUT_*, GITHUB_*, TOPO_SSH_KEY).
import { execFile } from 'node:child_process';
import { plainCommandEnvironment } from './environment.js';
import { CommandTimeoutError, SlurmError } from './errors.js';
import { assertSafeArgv } from './shell.js';
import type { CommandResult, RunOptions, Transport } from './types.js';

export interface LocalTransportOptions {
  /** Default command timeout (ms). */
  timeoutMs?: number;
  /**
   * Where the plain variables are read (default process.env); only the allowlist of
   * src/slurm/environment.ts COMMAND_INHERITED_VARIABLES is taken from it.
   */
  inherit?: NodeJS.ProcessEnv;
  /** Overrides of allowlisted variables (e.g. SLURM_CONF of the local cluster). */
  env?: Record<string, string>;
}

export function createLocalTransport(options: LocalTransportOptions = {}): Transport {
  const defaultTimeout = options.timeoutMs ?? 30_000;
  const base = { ...(options.inherit ?? process.env), ...options.env };
  return {
    description: 'the local login node',
    run(argv: readonly string[], runOptions: RunOptions = {}): Promise<CommandResult> {
      assertSafeArgv(argv);
      const [file, ...args] = argv as [string, ...string[]];
      const timeout = runOptions.timeoutMs ?? defaultTimeout;
      const env = plainCommandEnvironment(base, runOptions.env);
      return new Promise((resolve, reject) => {
        execFile(
          file,
          args,
          { timeout, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 * 1024, encoding: 'utf8', env },
          (error, stdout, stderr) => {
            if (!error) return resolve({ stdout, stderr, code: 0 });
            const e = error as NodeJS.ErrnoException & { killed?: boolean; code?: number | string };
            if (e.killed) {
              return reject(
                new CommandTimeoutError(
                  `\`${argv.join(' ')}\` did not finish within ${timeout} ms (stopped)`,
                ),
              );
            }
            if (typeof e.code === 'number') return resolve({ stdout, stderr, code: e.code });
            if (e.code === 'ENOENT') {
              return reject(
                new SlurmError(`\`${file}\` is not installed or not on PATH on the local login node`),
              );
            }
            reject(new SlurmError(`\`${argv.join(' ')}\` could not run: ${e.message}`));
          },
        );
      });
    },
    async close() {},
  };
}
