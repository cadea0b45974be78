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

/** One transport's settings, and its connection, shell and generation as they change. */
interface SshContext {
  readonly options: SshTransportOptions;
  readonly known: { type: string; blob: Buffer };
  readonly algorithms: readonly string[];
  /** user@host:port, in every message. */
  readonly where: string;
  readonly connectAttempts: number;
  readonly commandRetries: number;
  readonly backoff: number;
  /** `NAME=value` of options.env, checked. */
  readonly envPrefix: readonly string[];
  ssh: NodeSSH | undefined;
  connecting: Promise<NodeSSH> | undefined;
  shell: { client: NodeSSH; shell: Promise<RemoteShell | null> } | undefined;
  persistent: boolean;
  /**
   * Bumped by close(): a command that was in flight then (a listing's `id -un` beside a ping that found
   * slurmctld down) is not retried on a new connection, which nothing would close (the CLI hung).
   */
  generation: number;
}

function sshContext(options: SshTransportOptions): SshContext {
  const known = parseKnownHostKey(options.knownHostKey);
  const envPrefix = Object.entries(options.env ?? {}).map(([k, v]) => {
    if (!/^[A-Z_][A-Z0-9_]*$/.test(k))
      throw new SlurmError(`environment name ${JSON.stringify(k)} is not NAME`);
    return `${k}=${v}`;
  });
  return {
    options,
    known,
    algorithms: HOST_KEY_ALGORITHMS[known.type] ?? [known.type],
    where: `${options.user}@${options.host}:${options.port}`,
    connectAttempts: options.connectAttempts ?? 4,
    commandRetries: options.commandRetries ?? 2,
    backoff: options.backoffMs ?? 500,
    envPrefix,
    ssh: undefined,
    connecting: undefined,
    shell: undefined,
    persistent: options.persistentShell !== false,
    generation: 0,
  };
}

/** Forgets `client` as the connection, when it still is. */
function forget(ctx: SshContext, client: NodeSSH): void {
  if (ctx.ssh === client) ctx.ssh = undefined;
}

/** The connection's shell, started once; null (and one exec per command from then on) when it cannot start. */
function shellOf(ctx: SshContext, client: NodeSSH): Promise<RemoteShell | null> {
  if (ctx.shell?.client === client) {
    const current = ctx.shell;
    return current.shell.then((s) => {
      if (s === null || s.alive) return s;
      if (ctx.shell === current) ctx.shell = undefined; // it closed (a timeout): the next command starts another
      return shellOf(ctx, client);
    });
  }
  const started = openShell(ctx, client).catch(() => {
    // a forced command or no /bin/sh: every command as its own exec (a lost connection: retried)
    if (client.isConnected()) ctx.persistent = false;
    return null;
  });
  ctx.shell = { client, shell: started };
  return started;
}

function openShell(ctx: SshContext, client: NodeSSH): Promise<RemoteShell> {
  return new Promise<ShellChannel>((resolve, reject) => {
    const connection = client.connection;
    if (!connection) return reject(new Error('not connected'));
    connection.exec('exec /bin/sh', (error: Error | undefined, channel: ShellChannel) =>
      error ? reject(error) : resolve(channel),
    );
  }).then((channel) => startRemoteShell(channel, ctx.options.commandTimeoutMs ?? 30_000));
}

/** One connection attempt; a host key other than the configured one is refused, with both fingerprints. */
async function connectOnce(ctx: SshContext): Promise<NodeSSH> {
  const { options, known } = ctx;
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
      algorithms: { serverHostKey: ctx.algorithms as never },
      hostVerifier: (key: Buffer) => {
        seen = key;
        return key.equals(known.blob);
      },
    });
  } catch (error) {
    client.dispose();
    if (seen && !seen.equals(known.blob)) {
      throw new HostKeyMismatchError(
        `refusing ${ctx.where}: its host key ${fingerprint(seen)} is not the configured known_host_key ${fingerprint(known.blob)}. If the host was legitimately re-keyed, update known_host_key in the cluster definition; otherwise someone may be intercepting the connection.`,
      );
    }
    throw error;
  }
  client.connection?.on('close', () => forget(ctx, client));
  client.connection?.on('error', () => forget(ctx, client));
  return client;
}

/** Why connecting failed, after the last attempt's error. */
function connectFailure(ctx: SshContext, last: unknown): Error {
  if (last instanceof SlurmError) return last;
  const e = last as Error & { level?: string };
  if (e?.level === 'client-authentication') {
    return new KeyRefusedError(
      `SSH to ${ctx.where} refused the private key (key authentication only): ${e.message}; check that TOPO_SSH_KEY or TOPO_SSH_KEY_FILE is the key whose public half is in the login user's authorized_keys`,
    );
  }
  return new ConnectionLostError(
    `cannot connect to ${ctx.where} after ${ctx.connectAttempts} attempts: ${e?.message ?? String(last)}`,
  );
}

/** Connection attempts with a doubling pause, while the error is transient and nothing closed the transport. */
async function connectWithRetries(ctx: SshContext, started: number): Promise<NodeSSH> {
  let last: unknown;
  for (let attempt = 1; attempt <= ctx.connectAttempts; attempt++) {
    try {
      const client = await connectOnce(ctx);
      if (ctx.generation !== started) {
        client.dispose(); // closed meanwhile: nothing would close this one
        throw new ConnectionLostError(`the connection to ${ctx.where} was closed while it was opened`);
      }
      ctx.ssh = client;
      return client;
    } catch (error) {
      last = error;
      if (!transient(error) || attempt === ctx.connectAttempts || ctx.generation !== started) break;
      await sleep(ctx.backoff * 2 ** (attempt - 1));
    }
  }
  throw connectFailure(ctx, last);
}

/** The open connection, or one opened now (one opening at a time). */
async function connect(ctx: SshContext): Promise<NodeSSH> {
  if (ctx.ssh?.isConnected()) return ctx.ssh;
  ctx.connecting ??= connectWithRetries(ctx, ctx.generation).finally(() => {
    ctx.connecting = undefined;
  });
  return ctx.connecting;
}

function timeoutMessage(ctx: SshContext, argv: readonly string[], timeout: number): string {
  return `\`${argv.join(' ')}\` did not finish within ${timeout} ms on ${ctx.where} (stopped)`;
}

async function runOnce(
  ctx: SshContext,
  argv: readonly string[],
  timeout: number,
  commandEnv: RunOptions['env'],
): Promise<CommandResult> {
  const client = await connect(ctx);
  assertSafeArgv(argv);
  // The remote side starts from the cluster account's own login environment (nothing of the
  // action's crosses SSH); TZ=UTC and the command's submit.sh variables are set explicitly.
  const perCommand = Object.entries(plainCommandEnvironment({}, commandEnv)).map(([k, v]) => `${k}=${v}`);
  const line = remoteCommandLine(['env', ...ctx.envPrefix, ...perCommand, ...argv]);
  const remote = ctx.persistent ? await shellOf(ctx, client) : null;
  if (remote) return runInShell(ctx, remote, client, argv, line, timeout);
  return runInExec(ctx, client, argv, line, timeout);
}

/** The command as its own exec channel, closed when it does not finish in time. */
async function runInExec(
  ctx: SshContext,
  client: NodeSSH,
  argv: readonly string[],
  line: string,
  timeout: number,
): Promise<CommandResult> {
  let channel: { close(): void } | undefined;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      channel?.close();
      reject(new CommandTimeoutError(timeoutMessage(ctx, argv, timeout)));
    }, timeout);
  });
  try {
    const onChannel = (c: { close(): void }) => {
      channel = c;
    };
    const result = await Promise.race([client.execCommand(line, { noTrim: true, onChannel }), timedOut]);
    if (result.code === null) {
      // No exit status: the channel closed under us (connection lost, or the remote side killed it).
      forget(ctx, client);
      client.dispose();
      throw new ConnectionLostError(
        `connection to ${ctx.where} was lost while running \`${argv.join(' ')}\`${result.signal ? ` (signal ${result.signal})` : ''}`,
      );
    }
    return { stdout: result.stdout, stderr: result.stderr, code: result.code };
  } catch (error) {
    if (error instanceof SlurmError) throw error;
    forget(ctx, client);
    client.dispose();
    throw new ConnectionLostError(
      `connection to ${ctx.where} failed while running \`${argv.join(' ')}\`: ${(error as Error).message}`,
    );
  } finally {
    clearTimeout(timer);
  }
}

async function runInShell(
  ctx: SshContext,
  remote: RemoteShell,
  client: NodeSSH,
  argv: readonly string[],
  line: string,
  timeout: number,
): Promise<CommandResult> {
  try {
    return await remote.run(line, timeout);
  } catch (error) {
    if (error instanceof ShellTimeout) throw new CommandTimeoutError(timeoutMessage(ctx, argv, timeout));
    if (!(error instanceof ShellGone)) throw error;
    if (!client.isConnected()) forget(ctx, client);
    throw new ConnectionLostError(`connection to ${ctx.where} was lost while running \`${argv.join(' ')}\``);
  }
}

/** Runs a command; an idempotent one again after a lost connection, unless the transport closed meanwhile. */
async function runWithRetries(
  ctx: SshContext,
  argv: readonly string[],
  runOptions: RunOptions,
): Promise<CommandResult> {
  const timeout = runOptions.timeoutMs ?? ctx.options.commandTimeoutMs ?? 30_000;
  const started = ctx.generation;
  for (let attempt = 0; ; attempt++) {
    try {
      return await runOnce(ctx, argv, timeout, runOptions.env);
    } catch (error) {
      const retry =
        error instanceof ConnectionLostError &&
        runOptions.idempotent === true &&
        attempt < ctx.commandRetries &&
        ctx.generation === started;
      if (!retry) throw error;
      await sleep(ctx.backoff * 2 ** attempt);
      if (ctx.generation !== started) throw error;
    }
  }
}

async function closeTransport(ctx: SshContext): Promise<void> {
  ctx.generation++;
  const open = ctx.shell;
  ctx.shell = undefined;
  await open?.shell.then((s) => s?.close());
  ctx.ssh?.dispose();
  ctx.ssh = undefined;
}

export function createSshTransport(options: SshTransportOptions): Transport {
  const ctx = sshContext(options);
  return {
    description: ctx.where,
    run: (argv: readonly string[], runOptions: RunOptions = {}) => runWithRetries(ctx, argv, runOptions),
    close: () => closeTransport(ctx),
  };
}
