// Errors of the Slurm adapter. Each says what happened and quotes what Slurm printed.

const QUOTE_LIMIT = 2000;

/** Quotes command output for an error message, shortened when long. */
export function quoteOutput(text: string): string {
  const t =
    text.length > QUOTE_LIMIT
      ? `${text.slice(0, QUOTE_LIMIT)}… (${text.length - QUOTE_LIMIT} more characters)`
      : text;
  return JSON.stringify(t);
}

export class SlurmError extends Error {
  override name = 'SlurmError';
}

/** A Slurm command exited non-zero. */
export class SlurmCommandError extends SlurmError {
  override name = 'SlurmCommandError';
  constructor(
    readonly argv: readonly string[],
    readonly code: number,
    readonly stdout: string,
    readonly stderr: string,
    readonly where: string,
  ) {
    super(
      `\`${argv.join(' ')}\` failed on ${where} with exit code ${code}: ${quoteOutput((stderr || stdout).trim())}`,
    );
  }
}

/**
 * What Slurm's commands print when slurmctld does not answer (22.05-24.x): squeue/sbatch/scancel
 * "Unable to contact slurm controller (connect failure)", `scontrol ping` "… is DOWN", and the
 * socket errors of a controller that went away mid-call.
 */
const CONTROLLER_DOWN =
  /Unable to contact slurm controller|Slurmctld\(primary\) at \S+ is DOWN|Socket timed out on send\/recv operation|Zero Bytes were transmitted or received/;

/** The command ran but slurmctld did not answer it: an outage (exit 3), never a finding. */
export class ControllerUnreachableError extends SlurmCommandError {
  override name = 'ControllerUnreachableError';
  static matches(stderr: string, stdout = ''): boolean {
    return CONTROLLER_DOWN.test(stderr) || CONTROLLER_DOWN.test(stdout);
  }
}

/** A Slurm command printed something this adapter does not understand: never guess a state from it. */
export class SlurmOutputError extends SlurmError {
  override name = 'SlurmOutputError';
  constructor(
    readonly command: string,
    readonly problem: string,
    readonly output: string,
  ) {
    super(`unexpected output from ${command}: ${problem}: ${quoteOutput(output)}`);
  }
}

/** The connection to the login node broke; whether the command ran is unknown. */
export class ConnectionLostError extends SlurmError {
  override name = 'ConnectionLostError';
}

/** The command did not finish in time (it was stopped). */
export class CommandTimeoutError extends SlurmError {
  override name = 'CommandTimeoutError';
}

/** The SSH host presented a different key than the configured known_host_key: refused. */
export class HostKeyMismatchError extends SlurmError {
  override name = 'HostKeyMismatchError';
}

/** The login node refused the private key (not one its authorized_keys holds for the user): refused. */
export class KeyRefusedError extends SlurmError {
  override name = 'KeyRefusedError';
}

/** The cluster cannot be reached as configured (no SSH key, an incomplete ssh entry): exit 2, not an outage. */
export class SlurmConfigError extends SlurmError {
  override name = 'SlurmConfigError';
}

/** A value refused before it reached a command line. */
export class UnsafeArgumentError extends SlurmError {
  override name = 'UnsafeArgumentError';
}
