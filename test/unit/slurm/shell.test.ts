// Validation and quoting of arguments on their way to a (remote) command line.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { UnsafeArgumentError } from '../../../src/slurm/errors.js';
import { assertSafeArgv, quoteForRemoteShell, remoteCommandLine } from '../../../src/slurm/shell.js';

describe('remote shell quoting', () => {
  const nasty = [
    "it's",
    '$(touch /tmp/pwned)',
    '`id`',
    'a b',
    '*',
    '~root',
    '=cmd',
    '--wrap=echo "$HOME"; exit 1',
    'x\'y"z',
    '',
    '%j',
  ];
  it('the remote shell sees every argument exactly as given', () => {
    const line = remoteCommandLine(['printf', '%s\\n', ...nasty]);
    const out = execFileSync('sh', ['-c', line], { encoding: 'utf8' });
    expect(out).toBe(`${nasty.join('\n')}\n`);
  });
  it('leaves plain words readable', () => {
    expect(quoteForRemoteShell('--job-name=topo-a-b-0123abcd')).toBe('--job-name=topo-a-b-0123abcd');
    expect(quoteForRemoteShell('=x')).toBe("'=x'");
  });
});

describe('argument validation', () => {
  it.each([
    ['newline', ['sbatch', 'a\nb']],
    ['NUL', ['sbatch', 'a\0b']],
    ['escape', ['sbatch', '\x1b[2J']],
    ['non-ASCII', ['sbatch', 'näme']],
    ['too long', ['sbatch', 'x'.repeat(5000)]],
    ['program with a space', ['sb atch']],
    ['program with a shell character', ['sbatch;id']],
    ['empty argv', []],
  ])('refuses %s', (_what, argv) => {
    expect(() => assertSafeArgv(argv)).toThrow(UnsafeArgumentError);
  });
});
