// Arguments on their way to a command line. Locally they go as an argv array; over SSH the remote side
// runs them through the login shell, so each one is validated first and then single-quoted.
import { UnsafeArgumentError } from './errors.js';

/** Printable ASCII without control characters: no newline, NUL, escape sequences, or non-ASCII tricks. */
const SAFE_ARG = /^[\x20-\x7e]{0,4096}$/;
/** The program itself: a plain command name or an absolute path. */
const SAFE_PROGRAM = /^(\/[A-Za-z0-9._/-]+|[A-Za-z0-9._-]+)$/;

export function assertSafeArgv(argv: readonly string[]): void {
  if (argv.length === 0) throw new UnsafeArgumentError('refusing to run an empty command');
  const [program, ...args] = argv;
  if (program === undefined || !SAFE_PROGRAM.test(program)) {
    throw new UnsafeArgumentError(
      `refusing to run program ${JSON.stringify(program)}: not a plain command name or absolute path`,
    );
  }
  for (const arg of args) {
    if (typeof arg !== 'string' || !SAFE_ARG.test(arg)) {
      throw new UnsafeArgumentError(
        `refusing to pass argument ${JSON.stringify(arg)} to ${program}: only printable ASCII (no control characters), at most 4096 characters`,
      );
    }
  }
}

/** POSIX single-quoting: the remote shell sees exactly this string, with no expansion of any kind. */
export function quoteForRemoteShell(arg: string): string {
  // Bare only when no shell could expand it (zsh expands a leading `=`; `~` is never bare).
  if (/^[A-Za-z0-9_./-][A-Za-z0-9_@%+=:,./-]*$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The command line an SSH server hands to the login shell. */
export function remoteCommandLine(argv: readonly string[]): string {
  assertSafeArgv(argv);
  return argv.map(quoteForRemoteShell).join(' ');
}
