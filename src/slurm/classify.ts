// Why a job ended badly: from its Slurm state, exit code and the tail of its log, into the kinds of
// the `Failure` type (src/types/generated/metrics.ts), each with a message for people and the evidence.
import type { Failure } from '../types/generated/metrics.js';
import { isLive, type SlurmJob, type SlurmJobState } from './types.js';

export type FailureKind = Failure['kind'];

/** Log lines that name a cause, most specific first. */
const LOG_SIGNS: Array<{ kind: FailureKind; pattern: RegExp }> = [
  {
    kind: 'gpu-oom',
    pattern:
      /CUDA out of memory|torch\.(cuda\.)?OutOfMemoryError|CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation/,
  },
  {
    kind: 'host-oom',
    pattern:
      /Exceeded job memory limit|exceeded memory limit|oom[-_]kill|Out of memory: Killed process|MemoryError|(^|\s)Killed(\s|$)/,
  },
  { kind: 'time-limit', pattern: /DUE TO TIME LIMIT/ },
  { kind: 'node-failure', pattern: /DUE TO NODE FAILURE/ },
  { kind: 'preempted', pattern: /DUE TO PREEMPTION/ },
];
const TRACEBACK = /^Traceback \(most recent call last\):/;
const EXCEPTION_LINE = /^[A-Za-z_][A-Za-z0-9_.]*(Error|Exception|Interrupt|Exit)(: .*)?$/;

function gpuFromLine(line: string): number | null {
  const m = /GPU (\d+)/.exec(line);
  return m?.[1] ? Number(m[1]) : null;
}

function exitText(job: SlurmJob): string | null {
  if (job.signal !== null) return `signal ${job.signal}`;
  return job.exitCode === null ? null : String(job.exitCode);
}

const MESSAGES: Record<FailureKind, string> = {
  'gpu-oom': 'ran out of GPU memory',
  'host-oom': 'ran out of host memory (over the job memory limit)',
  crash: 'crashed',
  'node-failure': 'lost its node (node failure)',
  'time-limit': 'hit its Slurm time limit',
  cancelled: 'was cancelled',
  preempted: 'was preempted by another job',
  'no-telemetry': 'produced no telemetry',
};

const FIXES: Partial<Record<FailureKind, string>> = {
  'gpu-oom':
    'reduce replicas or cached scenes on the GPU named in the evidence, or spread services over more GPUs',
  'host-oom': 'reduce workers or cache sizes, or ask for more memory (--mem)',
  crash: 'read the traceback in the evidence; fix the cause and submit again',
  'node-failure': 'not caused by the topology: submit again (/topo submit)',
  'time-limit': 'raise the Slurm time limit, or stop the run once metrics are stable',
  preempted: 'not caused by the topology: it is requeued or can be submitted again',
};

type Signs = ReadonlyMap<FailureKind, string[]>;

/** The first of `kinds` the log names, else `otherwise`. */
function firstSign(signs: Signs, kinds: readonly FailureKind[], otherwise: FailureKind): FailureKind {
  return kinds.find((k) => signs.has(k)) ?? otherwise;
}

/** What the log decides for FAILED, COMPLETED with a non-zero exit, and the rare others. */
function kindFromLog(signs: Signs, job: SlurmJob): FailureKind {
  if (signs.has('gpu-oom')) return 'gpu-oom';
  if (signs.has('host-oom') || (job.signal === 9 && job.reason === 'JobLaunchFailure')) return 'host-oom';
  return firstSign(signs, ['node-failure', 'time-limit'], 'crash');
}

/** Slurm state → failure kind, given the log's signs; a state not here lets the log decide. */
const STATE_RULES: Partial<Record<SlurmJobState, (signs: Signs) => FailureKind>> = {
  OUT_OF_MEMORY: (signs) => (signs.has('gpu-oom') ? 'gpu-oom' : 'host-oom'),
  NODE_FAIL: () => 'node-failure',
  BOOT_FAIL: () => 'node-failure',
  TIMEOUT: () => 'time-limit',
  DEADLINE: () => 'time-limit',
  PREEMPTED: () => 'preempted',
  REQUEUED: () => 'preempted',
  REQUEUE_HOLD: () => 'preempted',
  // Slurm's own cancellations (memory, time, node) also end as CANCELLED on some versions: the log says which.
  CANCELLED: (signs) =>
    firstSign(signs, ['host-oom', 'time-limit', 'node-failure', 'preempted'], 'cancelled'),
};

/** The log lines that name a cause, by the first cause each names. */
function logSigns(log: readonly string[]): Map<FailureKind, string[]> {
  const signs = new Map<FailureKind, string[]>();
  for (const raw of log) {
    const line = raw.trimEnd();
    const sign = LOG_SIGNS.find(({ pattern }) => pattern.test(line));
    if (sign) signs.set(sign.kind, [...(signs.get(sign.kind) ?? []), line]);
  }
  return signs;
}

/** The state line, the lines naming `kind`, and for a crash (or a GPU OOM without one) the traceback. */
function evidenceFor(
  job: SlurmJob,
  kind: FailureKind,
  kindLines: readonly string[],
  log: readonly string[],
  traceback: readonly string[],
): string[] {
  const evidence: string[] = [
    `Slurm state ${job.state}${job.reason ? ` (reason ${job.reason})` : ''}, exit ${exitText(job) ?? 'unknown'}`,
  ];
  evidence.push(...kindLines.slice(0, 5));
  if (kind === 'crash' || (kind === 'gpu-oom' && kindLines.length === 0))
    evidence.push(...traceback.slice(-6));
  if (kind === 'crash' && traceback.length === 0) evidence.push(...lastLines(log, 3));
  return dedupe(evidence);
}

/**
 * The failure of a finished job, or null when it is running or completed normally. `log` is the tail of
 * the job's output file (may be empty when it cannot be read).
 */
export function classifyFailure(job: SlurmJob, log: readonly string[] = []): Failure | null {
  if (isLive(job.status) && job.state !== 'REQUEUED' && job.state !== 'REQUEUE_HOLD') return null;
  if (job.state === 'COMPLETED' && (job.exitCode ?? 0) === 0 && job.signal === null) return null;

  const signs = logSigns(log);
  const traceback = tracebackLines(log);
  const rule = STATE_RULES[job.state];
  const kind = rule ? rule(signs) : kindFromLog(signs, job);
  const kindLines = signs.get(kind) ?? [];
  const gpuLine = kind === 'gpu-oom' ? kindLines.find((l) => gpuFromLine(l) !== null) : undefined;
  const failure: Failure = {
    kind,
    message: message(job, kind, traceback),
    slurm_state: job.state,
    exit_code: exitText(job),
    evidence: evidenceFor(job, kind, kindLines, log, traceback),
  };
  if (kind === 'gpu-oom') failure.gpu = gpuLine ? gpuFromLine(gpuLine) : null;
  const fix = FIXES[kind];
  if (fix) failure.likely_fix = fix;
  return failure;
}

function message(job: SlurmJob, kind: FailureKind, traceback: readonly string[]): string {
  let text = `Job ${job.id} ${MESSAGES[kind]}`;
  if (kind === 'crash') {
    const last = traceback.at(-1);
    text += last
      ? `: ${last}`
      : job.exitCode !== null
        ? ` with exit code ${job.exitCode}`
        : job.signal !== null
          ? ` (signal ${job.signal})`
          : '';
  }
  if (kind === 'time-limit' && job.timeLimit) text += ` (${job.timeLimit})`;
  if (kind === 'node-failure' && job.nodes) text += ` (${job.nodes})`;
  return `${text}.`;
}

/** The last Python traceback in the log: its header, frames and the exception line. */
function tracebackLines(log: readonly string[]): string[] {
  let start = -1;
  for (let i = log.length - 1; i >= 0; i--) {
    if (TRACEBACK.test(log[i] ?? '')) {
      start = i;
      break;
    }
  }
  if (start < 0) return [];
  const out: string[] = [];
  for (let i = start; i < log.length; i++) {
    const line = (log[i] ?? '').trimEnd();
    out.push(line);
    if (i > start && EXCEPTION_LINE.test(line)) break;
  }
  return out;
}

function lastLines(log: readonly string[], n: number): string[] {
  return log
    .map((l) => l.trimEnd())
    .filter((l) => l !== '')
    .slice(-n);
}

function dedupe(lines: readonly string[]): string[] {
  return [...new Set(lines)];
}
