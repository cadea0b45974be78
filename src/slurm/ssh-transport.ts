// Transport over SSH to a login node (node-ssh). The host key must equal the configured known_host_key
// (refused otherwise), key authentication only, connect and command timeouts, and reconnection with
// backoff when the connection is lost. Only idempotent commands are re-run after a loss: for sbatch the
// caller looks the job up by its name instead (see src/usecases/submit.ts).
import { createHash } from 'node:crypto';
import { NodeSSH } from 'node-ssh';
import { plainCommandEnvironment } from './environment.js';
import {
  CommandTimeoutError,
  ConnectionLostError,
  HostKeyMismatchError,
  KeyRefusedError,
  SlurmError,
} from './errors.js';
import { assertSafeArgv, remoteCommandLine } from './shell.js';
import {
  type RemoteShell,
  type ShellChannel,
  ShellGone,
  ShellTimeout,
  startRemoteShell,
} from './ssh-shell.js';
import type { CommandResult, RunOptions, Transport } from './types.js';

export interface SshTransportOptions {
  host: string;
  port: number;
  user: string;
  /** "ssh-ed25519 AAAA..." as in known_hosts (type and base64). */
  knownHostKey: string;
  /** The private key (OpenSSH or PEM text). */
  privateKey: string;
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
  /** Connection attempts before giving up (each after a doubling pause). */
  connectAttempts?: number;
  /** Re-runs of an idempotent command after a lost connection. */
  commandRetries?: number;
  backoffMs?: number;
  /** Extra environment: passed as `env NAME=value` before the command (SSH SetEnv is often refused). */
  env?: Record<string, string>;
  /**
   * Commands through one long-lived /bin/sh per connection (./ssh-shell.ts; default), so the login
   * shell's start-up files run once, not on every command; false: one exec per command.
   */
  persistentShell?: boolean;
}

const HOST_KEY_ALGORITHMS: Record<string, string[]> = {
  'ssh-ed25519': ['ssh-ed25519'],
  'ssh-rsa': ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'],
  'ecdsa-sha2-nistp256': ['ecdsa-sha2-nistp256'],
  'ecdsa-sha2-nistp384': ['ecdsa-sha2-nistp384'],
  'ecdsa-sha2-nistp521': ['ecdsa-sha2-nistp521'],
};

/** OpenSSH's SHA256 fingerprint of a host key blob. */
export function fingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

export function parseKnownHostKey(text: string): {
  type: string;
  blob: Buffer;
} {
  const m =
    /^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp256|ecdsa-sha2-nistp384|ecdsa-sha2-nistp521) ([A-Za-z0-9+/=]+)$/.exec(
      text.trim(),
    );
  if (!m?.[1] || !m[2]) {
    throw new SlurmError(`known_host_key ${JSON.stringify(text)} is not "<type> <base64>" as in known_hosts`);
  }
  return { type: m[1], blob: Buffer.from(m[2], 'base64') };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Errors worth another connection attempt (the host may be back in a moment). */
function transient(error: unknown): boolean {
  const e = error as { code?: string; level?: string; message?: string };
  if (error instanceof HostKeyMismatchError) return false;
  if (e.level === 'client-authentication') return false;
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'EPIPE', 'ENETUNREACH'].includes(
      e.code ?? '',
    ) || /timed out|closed|ECONNRESET|Not connected|No response/i.test(e.message ?? '')
  );
}

export function createSshTransport(options: SshTransportOptions): Transport {
  const known = parseKnownHostKey(options.knownHostKey);
  const algorithms = HOST_KEY_ALGORITHMS[known.type] ?? [known.type];
  const where = `${options.user}@${options.host}:${options.port}`;
  const connectAttempts = options.connectAttempts ?? 4;
  const commandRetries = options.commandRetries ?? 2;
  const backoff = options.backoffMs ?? 500;
  const envPrefix = Object.entries(options.env ?? {}).map(([k, v]) => {
    if (!/^[A-Z_][A-Z0-9_]*$/.test(k))
      throw new SlurmError(`environment name ${JSON.stringify(k)} is not NAME`);
    return `${k}=${v}`;
  });

  let ssh: NodeSSH | undefined;
  let connecting: Promise<NodeSSH> | undefined;
  let shell: { client: NodeSSH; shell: Promise<RemoteShell | null> } | undefined;
  let persistent = options.persistentShell !== false;
  // Bumped by close(): a command that was in flight then (a listing's `id -un` beside a ping that found
  // slurmctld down) is not retried on a new connection, which nothing would close (the CLI hung).
  let generation = 0;

  /** The connection's shell, started once; null (and one exec per command from then on) when it cannot start. */
  function shellOf(client: NodeSSH): Promise<RemoteShell | null> {
    if (shell?.client === client) {
      const current = shell;
      return current.shell.then((s) => {
        if (s === null || s.alive) return s;
        if (shell === current) shell = undefined; // it closed (a timeout): the next command starts another
        return shellOf(client);
      });
    }
    const started = openShell(client).catch(() => {
      // a forced command or no /bin/sh: every command as its own exec (a lost connection: retried)
      if (client.isConnected()) persistent = false;
      return null;
    });
    shell = { client, shell: started };
    return started;
  }

  function openShell(client: NodeSSH): Promise<RemoteShell> {
    return new Promise<ShellChannel>((resolve, reject) => {
      const connection = client.connection;
      if (!connection) return reject(new Error('not connected'));
      connection.exec('exec /bin/sh', (error: Error | undefined, channel: ShellChannel) =>
        error ? reject(error) : resolve(channel),
      );
    }).then((channel) => startRemoteShell(channel, options.commandTimeoutMs ?? 30_000));
  }

  async function connectOnce(): Promise<NodeSSH> {
    let seen: Buffer | undefined;
    const client = new NodeSSH();
    try {
      await client.connect({
        host: options.host,
        port: options.port,
        username: options.user,
        privateKey: options.privateKey,
        readyTimeout: options.connectTimeoutMs ?? 10_000,
        keepaliveInterval: 5_000,
        keepaliveCountMax: 3,
        tryKeyboard: false,
        algorithms: { serverHostKey: algorithms as never },
        hostVerifier: (key: Buffer) => {
          seen = key;
          return key.equals(known.blob);
        },
      });
    } catch (error) {
      client.dispose();
      if (seen && !seen.equals(known.blob)) {
        throw new HostKeyMismatchError(
          `refusing ${where}: its host key ${fingerprint(seen)} is not the configured known_host_key ${fingerprint(known.blob)}. If the host was legitimately re-keyed, update known_host_key in the cluster definition; otherwise someone may be intercepting the connection.`,
        );
      }
      throw error;
    }
    client.connection?.on('close', () => {
      if (ssh === client) ssh = undefined;
    });
    client.connection?.on('error', () => {
      if (ssh === client) ssh = undefined;
    });
    return client;
  }

  async function connect(): Promise<NodeSSH> {
    if (ssh?.isConnected()) return ssh;
    const started = generation;
    connecting ??= (async () => {
      let last: unknown;
      for (let attempt = 1; attempt <= connectAttempts; attempt++) {
        try {
          const client = await connectOnce();
          if (generation !== started) {
            client.dispose(); // closed meanwhile: nothing would close this one
            throw new ConnectionLostError(`the connection to ${where} was closed while it was opened`);
          }
          ssh = client;
          return ssh;
        } catch (error) {
          last = error;
          if (!transient(error) || attempt === connectAttempts || generation !== started) break;
          await sleep(backoff * 2 ** (attempt - 1));
        }
      }
      if (last instanceof SlurmError) throw last;
      const e = last as Error & { level?: string };
      if (e?.level === 'client-authentication') {
        throw new KeyRefusedError(
          `SSH to ${where} refused the private key (key authentication only): ${e.message}; check that TOPO_SSH_KEY or TOPO_SSH_KEY_FILE is the key whose public half is in the login user's authorized_keys`,
        );
      }
      throw new ConnectionLostError(
        `cannot connect to ${where} after ${connectAttempts} attempts: ${e?.message ?? String(last)}`,
      );
    })().finally(() => {
      connecting = undefined;
    });
    return connecting;
  }

  async function runOnce(
    argv: readonly string[],
    timeout: number,
    commandEnv: RunOptions['env'],
  ): Promise<CommandResult> {
    const client = await connect();
    assertSafeArgv(argv);
    // The remote side starts from the cluster account's own login environment (nothing of the
    // action's crosses SSH); TZ=UTC and the command's submit.sh variables are set explicitly.
    const perCommand = Object.entries(plainCommandEnvironment({}, commandEnv)).map(([k, v]) => `${k}=${v}`);
    const line = remoteCommandLine(['env', ...envPrefix, ...perCommand, ...argv]);
    const remote = persistent ? await shellOf(client) : null;
    if (remote) return runInShell(remote, client, argv, line, timeout);
    let channel: { close(): void } | undefined;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        channel?.close();
        reject(
          new CommandTimeoutError(
            `\`${argv.join(' ')}\` did not finish within ${timeout} ms on ${where} (stopped)`,
          ),
        );
      }, timeout);
    });
    try {
      const result = await Promise.race([
        client.execCommand(line, {
          noTrim: true,
          onChannel: (c) => {
            channel = c;
          },
        }),
        timedOut,
      ]);
      if (result.code === null) {
        // No exit status: the channel closed under us (connection lost, or the remote side killed it).
        if (ssh === client) ssh = undefined;
        client.dispose();
        throw new ConnectionLostError(
          `connection to ${where} was lost while running \`${argv.join(' ')}\`${result.signal ? ` (signal ${result.signal})` : ''}`,
        );
      }
      return {
        stdout: result.stdout,
        stderr: result.stderr,
        code: result.code,
      };
    } catch (error) {
      if (error instanceof SlurmError) throw error;
      if (ssh === client) ssh = undefined;
      client.dispose();
      throw new ConnectionLostError(
        `connection to ${where} failed while running \`${argv.join(' ')}\`: ${(error as Error).message}`,
      );
    } finally {
      clearTimeout(timer);
    }
  }

  async function runInShell(
    remote: RemoteShell,
    client: NodeSSH,
    argv: readonly string[],
    line: string,
    timeout: number,
  ): Promise<CommandResult> {
    try {
      return await remote.run(line, timeout);
    } catch (error) {
      if (error instanceof ShellTimeout)
        throw new CommandTimeoutError(
          `\`${argv.join(' ')}\` did not finish within ${timeout} ms on ${where} (stopped)`,
        );
      if (!(error instanceof ShellGone)) throw error;
      if (!client.isConnected() && ssh === client) ssh = undefined;
      throw new ConnectionLostError(`connection to ${where} was lost while running \`${argv.join(' ')}\``);
    }
  }

  return {
    description: where,
    async run(argv: readonly string[], runOptions: RunOptions = {}): Promise<CommandResult> {
      const timeout = runOptions.timeoutMs ?? options.commandTimeoutMs ?? 30_000;
      const started = generation;
      for (let attempt = 0; ; attempt++) {
        try {
          return await runOnce(argv, timeout, runOptions.env);
        } catch (error) {
          const retry =
            error instanceof ConnectionLostError &&
            runOptions.idempotent === true &&
            attempt < commandRetries &&
            generation === started;
          if (!retry) throw error;
          await sleep(backoff * 2 ** attempt);
          if (generation !== started) throw error;
        }
      }
    },
    async close() {
      generation++;
      const open = shell;
      shell = undefined;
      await open?.shell.then((s) => s?.close());
      ssh?.dispose();
      ssh = undefined;
    },
  };
}
