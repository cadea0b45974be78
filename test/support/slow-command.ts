// A Slurm command made slow, first on PATH: to interrupt the CLI while it waits for Slurm.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SlowCommand {
  /** The folder to put first on PATH. */
  bin: string;
  /** A line per run of the command (with `after`: once the real command answered). */
  calls: string;
}

/**
 * A folder holding `command`: before the real one (default), a line in `calls` then `seconds` of
 * pause; with `after`, the real one first (Slurm has done it), then the line, the pause and its output.
 */
export function slowCommand(
  command: string,
  seconds: number,
  options: { after?: boolean } = {},
): SlowCommand {
  const bin = mkdtempSync(join(tmpdir(), `topo-slow-${command}-`));
  const real = execFileSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).trim();
  const calls = join(bin, 'calls');
  const script = options.after
    ? `#!/bin/sh\nout=$("${real}" "$@"); rc=$?\nprintf '%s\\n' "$out" >> "${calls}"\nsleep ${seconds}\nprintf '%s\\n' "$out"\nexit $rc\n`
    : `#!/bin/sh\necho "$*" >> "${calls}"\nsleep ${seconds}\nexec "${real}" "$@"\n`;
  writeFileSync(join(bin, command), script);
  chmodSync(join(bin, command), 0o755);
  return { bin, calls };
}

/** How many times the command ran so far. */
export const callCount = (s: SlowCommand): number =>
  existsSync(s.calls) ? readFileSync(s.calls, 'utf8').split('\n').length - 1 : 0;
