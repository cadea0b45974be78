// One long-lived /bin/sh on the login node, fed one command at a time. An SSH exec runs the account's
// login shell, and its start-up files (module systems, conda, pyenv) can take seconds on every command:
// 3.5 s on the test host, so a submit of eight commands took 27 s. The shell starts once per
// connection; each command then costs what the command costs. Each command's end is marked on both
// streams with a per-shell random token, its stdin is /dev/null (it never reads the commands after it),
// and it is the same single-quoted line the per-command exec ran (src/slurm/shell.ts).
import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { StringDecoder } from 'node:string_decoder';
import type { CommandResult } from './types.js';

/** The part of an ssh2 channel the shell uses. */
export interface ShellChannel extends EventEmitter {
  stderr: EventEmitter;
  write(data: string): boolean;
  close(): void;
}

export interface RemoteShell {
  /** Runs one command line (commands queue behind each other); rejects ShellGone or ShellTimeout. */
  run(line: string, timeoutMs: number): Promise<CommandResult>;
  readonly alive: boolean;
  close(): void;
}

/** The shell's channel closed before the command's end was read: whether it ran is unknown. */
export class ShellGone extends Error {}
/** The command did not end in time: the shell was closed with it. */
export class ShellTimeout extends Error {}

/** The line that runs `line` and marks its end on stdout (with its exit code) and on stderr. */
export function markedLine(line: string, mark: string): string {
  return `${line} </dev/null; __topo_rc=$?; printf '\\n%s %d\\n' '${mark}' "$__topo_rc"; printf '\\n%s\\n' '${mark}' >&2\n`;
}

/** The command's result once both streams carry its end mark, else null. */
export function readMarked(out: string, err: string, mark: string): CommandResult | null {
  const o = out.indexOf(`\n${mark} `);
  const e = err.indexOf(`\n${mark}\n`);
  if (o < 0 || e < 0) return null;
  const end = out.indexOf('\n', o + mark.length + 2);
  if (end < 0) return null;
  const code = Number(out.slice(o + mark.length + 2, end));
  return {
    stdout: out.slice(0, o),
    stderr: err.slice(0, e),
    code: Number.isInteger(code) ? code : 255,
  };
}

/** One shell's streams since its last command was written, and the command waiting on them. */
interface ShellState {
  readonly channel: ShellChannel;
  out: string;
  err: string;
  alive: boolean;
  /** Told whenever a stream grows (false) or the channel closes (true). */
  pending: ((gone: boolean) => void) | undefined;
}

/** Feeds the channel's streams into `state` and tells the waiting command of each change. */
function listen(state: ShellState): void {
  const decoders = {
    out: new StringDecoder('utf8'),
    err: new StringDecoder('utf8'),
  };
  state.channel.on('data', (chunk: Buffer) => {
    state.out += decoders.out.write(chunk);
    state.pending?.(false);
  });
  state.channel.stderr.on('data', (chunk: Buffer) => {
    state.err += decoders.err.write(chunk);
    state.pending?.(false);
  });
  state.channel.on('close', () => {
    state.alive = false;
    state.pending?.(true);
  });
}

function closeShell(state: ShellState): void {
  state.alive = false;
  state.channel.close();
}

/** Writes `text` and resolves with the result once `done` reads one from the streams. */
function exchange<T>(state: ShellState, text: string, timeoutMs: number, done: () => T | null): Promise<T> {
  state.out = '';
  state.err = '';
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      state.pending = undefined;
      closeShell(state);
      reject(new ShellTimeout(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const pending = (gone: boolean) => {
      const result = done();
      if (result === null && !gone) return;
      state.pending = undefined;
      clearTimeout(timer);
      if (result === null) reject(new ShellGone('the shell closed'));
      else resolve(result);
    };
    state.pending = pending;
    if (!state.alive) pending(true);
    else state.channel.write(text);
  });
}

/**
 * Starts the shell on `channel` (an exec of `exec /bin/sh`) and waits until it answers; rejects when it
 * does not within `readyTimeoutMs` (a forced command, a shell that is not there), and the caller then
 * runs each command as its own exec.
 */
export async function startRemoteShell(channel: ShellChannel, readyTimeoutMs: number): Promise<RemoteShell> {
  const token = randomBytes(12).toString('hex');
  const state: ShellState = { channel, out: '', err: '', alive: true, pending: undefined };
  listen(state);
  const ready = `${token}:ready`;
  await exchange(state, `printf '%s\\n' '${ready}'\n`, readyTimeoutMs, () =>
    state.out.includes(`${ready}\n`) ? true : null,
  );
  let seq = 0;
  let queue: Promise<unknown> = Promise.resolve();
  return {
    get alive() {
      return state.alive;
    },
    close: () => closeShell(state),
    run(line, timeoutMs) {
      const mark = `${token}:${++seq}`;
      const next = queue.then(() =>
        exchange(state, markedLine(line, mark), timeoutMs, () => readMarked(state.out, state.err, mark)),
      );
      queue = next.catch(() => {});
      return next;
    },
  };
}
