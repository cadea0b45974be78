// The long-lived remote shell's protocol (src/slurm/ssh-shell.ts): a command's output, stderr and exit
// code are read up to its end marks, commands queue, and a shell that closes or stalls says so. The
// real sshd runs it in test/integration/slurm (adapter, submit, cli: every SSH command goes through it).
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  markedLine,
  readMarked,
  type ShellChannel,
  ShellGone,
  ShellTimeout,
  startRemoteShell,
} from '../../../src/slurm/ssh-shell.js';

/** A channel that answers like /bin/sh: `answer(line)` gives [stdout, stderr, code] of each command. */
function fakeShell(answer: (line: string) => [string, string, number] | 'silent' | 'close') {
  const channel = new EventEmitter() as ShellChannel & { lines: string[] };
  channel.stderr = new EventEmitter();
  channel.lines = [];
  channel.close = () => channel.emit('close');
  channel.write = (data: string) => {
    channel.lines.push(data);
    const ready = /^printf '%s\\n' '([^']+)'\n$/.exec(data);
    setImmediate(() => {
      if (ready) return channel.emit('data', Buffer.from(`${ready[1]}\n`));
      const mark = /printf '\\n%s %d\\n' '([^']+)'/.exec(data)?.[1] as string;
      const a = answer(data.slice(0, data.indexOf(' </dev/null')));
      if (a === 'silent') return;
      if (a === 'close') return channel.emit('close');
      // split across chunks, as SSH delivers them
      const out = `${a[0]}\n${mark} ${a[2]}\n`;
      channel.emit('data', Buffer.from(out.slice(0, 3)));
      channel.emit('data', Buffer.from(out.slice(3)));
      channel.stderr.emit('data', Buffer.from(`${a[1]}\n${mark}\n`));
    });
    return true;
  };
  return channel;
}

describe('the remote shell', () => {
  it('reads each command up to its marks: stdout, stderr and the exit code, output without a final newline kept', async () => {
    const channel = fakeShell((line) =>
      line.endsWith('squeue') ? ['1 RUNNING\n2 PENDING\n', '', 0] : ['', 'sbatch: error: bad', 1],
    );
    const shell = await startRemoteShell(channel, 1000);
    await expect(shell.run('env TZ=UTC squeue', 1000)).resolves.toEqual({
      stdout: '1 RUNNING\n2 PENDING\n',
      stderr: '',
      code: 0,
    });
    await expect(shell.run('env TZ=UTC sbatch', 1000)).resolves.toEqual({
      stdout: '',
      stderr: 'sbatch: error: bad',
      code: 1,
    });
    expect(channel.lines[1]).toContain(' </dev/null; ');
  });

  it('runs concurrent commands one after another, each with its own result', async () => {
    const channel = fakeShell((line) => [line.split(' ').at(-1) as string, '', 0]);
    const shell = await startRemoteShell(channel, 1000);
    const results = await Promise.all(['a', 'b', 'c'].map((x) => shell.run(`env ${x}`, 1000)));
    expect(results.map((r) => r.stdout)).toEqual(['a', 'b', 'c']);
  });

  it('a shell that closes mid-command is ShellGone; one that stalls is ShellTimeout and closed', async () => {
    const gone = await startRemoteShell(
      fakeShell(() => 'close'),
      1000,
    );
    await expect(gone.run('env squeue', 1000)).rejects.toBeInstanceOf(ShellGone);
    expect(gone.alive).toBe(false);
    const stalled = await startRemoteShell(
      fakeShell(() => 'silent'),
      1000,
    );
    await expect(stalled.run('env squeue', 50)).rejects.toBeInstanceOf(ShellTimeout);
    expect(stalled.alive).toBe(false);
  });

  it('a shell that never answers its start (a forced command) is refused, so the transport execs each command', async () => {
    const channel = new EventEmitter() as ShellChannel;
    channel.stderr = new EventEmitter();
    channel.write = () => true;
    channel.close = () => channel.emit('close');
    await expect(startRemoteShell(channel, 50)).rejects.toBeInstanceOf(ShellTimeout);
  });

  it('output that merely contains the mark without its exit code is not the end', () => {
    const mark = 'abc:1';
    expect(readMarked(`x\n${mark}`, `\n${mark}\n`, mark)).toBeNull();
    expect(readMarked(`x\n${mark} 3\n`, `\n${mark}\n`, mark)).toEqual({
      stdout: 'x',
      stderr: '',
      code: 3,
    });
    expect(markedLine("env 'a b'", mark)).toMatch(/^env 'a b' <\/dev\/null; __topo_rc=\$\?;/);
  });
});
