// Services the CLI talks to (Prometheus, Slurm, GitHub): telling an outage from a bug or a user
// mistake, so a command says "cannot reach …" once and exits 3 instead of a page of warnings.
import { CommandTimeoutError, ConnectionLostError, ControllerUnreachableError } from '../slurm/errors.js';
import { type PrometheusClient, PrometheusError } from '../telemetry/prometheus.js';
import { UnreachableError } from './errors.js';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EAI_AGAIN',
]);

/** The one-line message when `error` means a service could not be reached, else undefined. */
export function serviceFailure(error: unknown): string | undefined {
  if (error instanceof PrometheusError && error.details.status === undefined && error.details.retryable)
    return error.message.replace(/ \(query: .*\)$/, '');
  if (error instanceof ConnectionLostError || error instanceof CommandTimeoutError) return error.message;
  if (error instanceof ControllerUnreachableError)
    return `cannot reach Slurm's controller (slurmctld) from ${error.where}: ${(error.stderr || error.stdout).trim().split('\n')[0]}`;
  const e = error as { code?: string; cause?: { code?: string }; status?: number; message?: string };
  const code = e?.code ?? e?.cause?.code;
  if (code && NETWORK_CODES.has(code)) return `cannot reach a service: ${e.message ?? code}`;
  return undefined;
}

/** One cheap query before a command's real ones: an unreachable Prometheus is one line and exit 3. */
export async function ensurePrometheus(prometheus: PrometheusClient): Promise<void> {
  try {
    await prometheus.instant('vector(1)');
  } catch (error) {
    const message = serviceFailure(error);
    if (message) throw new UnreachableError(`${message} (check the URL and that Prometheus is up)`);
    throw error;
  }
}
