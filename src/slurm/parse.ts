// Parsers for what Slurm prints. Each field is read in every form Slurm prints it (times `NONE`,
// `Unknown`, `N/A`; limits `UNLIMITED`, `Partition_Limit`; any user, comment or name); a line that
// still cannot be read is skipped and reported with what was wrong (never a silently wrong state, and
// never the whole listing lost for one line: an odd job of anyone's must not stop the system).
// Tested against output captured from the local cluster (test/fixtures/slurm/captured/), the
// documented formats, and generated lines (test/unit/slurm/parse-fuzz.test.ts).
import { SlurmOutputError } from './errors.js';
import {
  isLive,
  type SkippedLine,
  SLURM_JOB_STATES,
  type SlurmJob,
  type SlurmJobState,
  statusOf,
} from './types.js';

/**
 * squeue -O fields, `|`-terminated. The fields a person writes (output file, comment, name) come
 * last, the name the very last: a `|` inside them never shifts the others (parseSqueue).
 */
export const SQUEUE_FIELDS = [
  'JobID',
  'State',
  'Reason',
  'exit_code',
  'RestartCnt',
  'SubmitTime',
  'StartTime',
  'EndTime',
  'TimeLimit',
  'TimeUsed',
  'NodeList',
  'NumNodes',
  'tres-alloc',
  'tres-per-node',
  'UserName',
  'STDOUT',
  'Comment',
  'Name',
] as const;
/** `:0` = no padding, no truncation; `|` = the field's suffix. */
export const SQUEUE_FORMAT = SQUEUE_FIELDS.map((f, i) =>
  i < SQUEUE_FIELDS.length - 1 ? `${f}:0|` : `${f}:0`,
).join(',');

/** sacct --parsable2 fields (`|`-separated); the comment and the name last for the same reason. */
export const SACCT_FIELDS = [
  'JobID',
  'State',
  'Reason',
  'ExitCode',
  'Submit',
  'Start',
  'End',
  'Timelimit',
  'Elapsed',
  'NodeList',
  'AllocTRES',
  'User',
  'Comment',
  'JobName',
] as const;
export const SACCT_FORMAT = SACCT_FIELDS.join(',');

/** What one listing command printed: the jobs it could read, and the lines it could not. */
export interface ParsedJobs {
  jobs: SlurmJob[];
  skipped: SkippedLine[];
}

// Job ids: plain, array elements (`12_3`, a pending array's `12_[1-5%2]`), heterogeneous components (`12+0`).
const JOB_ID = /^[0-9]+(_([0-9]+|\[[0-9,%-]+\])|\+[0-9]+)?$/;
const TIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$/;
/** What Slurm prints for a time that is not set: no start yet, no end (an unlimited job's is `NONE`). */
const NO_TIME = new Set(['', 'N/A', 'Unknown', 'None', 'NONE', '(null)', 'UNLIMITED', 'INVALID']);
const DURATION = /^(([0-9]+-)?([0-9]+:)?[0-9]+:[0-9]+|[0-9]+-[0-9]+(:[0-9]+)?)$/;
/** Limits and durations that are not a length of time (kept as printed; slurmDurationToSeconds reads null). */
const NO_DURATION = new Set([
  'UNLIMITED',
  'INVALID',
  'NOT_SET',
  'Partition_Limit',
  'NONE',
  'None',
  'infinite',
]);
const STATE_SET = new Set<string>(SLURM_JOB_STATES);

function state(text: string, command: string, line: string): SlurmJobState {
  // sacct prints "CANCELLED by 1000"; squeue and scontrol print the bare state.
  const word = text.split(' ')[0] ?? '';
  if (STATE_SET.has(word)) return word as SlurmJobState;
  // A state word of a newer Slurm: kept as UNKNOWN (live, shown as unknown); garbage is an error.
  if (/^[A-Z][A-Z_]{1,40}$/.test(word)) return 'UNKNOWN';
  throw new SlurmOutputError(command, `unknown job state ${JSON.stringify(text)}`, line);
}

function rawState(text: string): { rawState?: string } {
  const word = text.split(' ')[0] ?? '';
  return STATE_SET.has(word) ? {} : { rawState: word };
}

function jobId(text: string, command: string, line: string): string {
  if (!JOB_ID.test(text))
    throw new SlurmOutputError(command, `job id ${JSON.stringify(text)} is not a Slurm job id`, line);
  return text;
}

function time(text: string, command: string, line: string): string | null {
  if (NO_TIME.has(text)) return null;
  if (!TIME.test(text))
    throw new SlurmOutputError(command, `time ${JSON.stringify(text)} is not YYYY-MM-DDTHH:MM:SS`, line);
  return text;
}

/** A duration or limit as printed (null when not set; `UNLIMITED` and the like kept: they are not lengths). */
function duration(text: string, command: string, line: string): string | null {
  if (text === '' || text === 'N/A' || text === '(null)') return null;
  if (!DURATION.test(text) && !NO_DURATION.has(text))
    throw new SlurmOutputError(command, `duration ${JSON.stringify(text)} is not [D-]HH:MM:SS`, line);
  return text;
}

/** An elapsed time: null when Slurm does not give one (`INVALID` after a clock jump, `N/A`). */
function elapsedOf(text: string, command: string, line: string): string | null {
  const d = duration(text, command, line);
  return d !== null && NO_DURATION.has(d) ? null : d;
}

/** Free text a person wrote (user name, comment): null for Slurm's "not set". */
function text(value: string | undefined): string | null {
  return value === undefined || value === '' || value === '(null)' || value === 'N/A' ? null : value;
}

/**
 * Seconds of a Slurm duration in any form its commands print: `1:39` and `0:03` (squeue), `00:01:39`
 * (sacct, scontrol), `2-03:04:05`, `2-03` and `2-03:04` (days-hours[:minutes]), `01:39.123` (sacct's
 * CPU times). Null for UNLIMITED, INVALID, N/A, empty or unreadable text.
 */
export function slurmDurationToSeconds(text: string | null | undefined): number | null {
  const m =
    /^(?:([0-9]+)-([0-9]+)(?::([0-9]+))?(?::([0-9]+))?|(?:([0-9]+):)?([0-9]+):([0-9]+)(?:\.[0-9]+)?)$/.exec(
      text ?? '',
    );
  if (!m) return null;
  const n = (v: string | undefined) => Number(v ?? 0);
  if (m[1] !== undefined) return ((n(m[1]) * 24 + n(m[2])) * 60 + n(m[3])) * 60 + n(m[4]);
  return (n(m[5]) * 60 + n(m[6])) * 60 + n(m[7]);
}

/** GPUs in a TRES list (`cpu=16,mem=4G,node=1,gres/gpu=8`, or typed `gres/gpu:a100=8`); null when it names none. */
export function gpusFromTres(tres: string): number | null {
  const untyped = /(?:^|,)gres\/gpu=([0-9]+)(?:,|$)/.exec(tres);
  if (untyped) return Number(untyped[1]);
  const typed = [...tres.matchAll(/(?:^|,)gres\/gpu:[^=,]+=([0-9]+)/g)];
  return typed.length > 0 ? typed.reduce((sum, t) => sum + Number(t[1]), 0) : null;
}

/** GPUs asked per node (`gres:gpu:8`, `gres/gpu:a100:8`) times the node count; null when it names none. */
export function gpusPerNode(perNode: string, nodeCount: string): number | null {
  const m = /(?:^|,)gres[:/]gpu(?::[^:,]+)?:([0-9]+)(?:,|$)/.exec(perNode);
  const nodesNow = /^([0-9]+)/.exec(nodeCount);
  return m && nodesNow ? Number(m[1]) * Number(nodesNow[1]) : null;
}

/** The allocation's GPUs, seconds and GPU-minutes held (elapsed × GPUs): what a budget counts. */
function allocation(
  gpus: number | null,
  elapsed: string | null,
): Pick<SlurmJob, 'gpus' | 'gpuMinutes' | 'heldSeconds'> {
  const seconds = slurmDurationToSeconds(elapsed);
  return {
    gpus,
    gpuMinutes: gpus === null || seconds === null ? null : (gpus * seconds) / 60,
    heldSeconds: seconds,
  };
}

function reason(text: string): string | null {
  return text === '' || text === 'None' || text === '(null)' ? null : text;
}

function nodes(text: string): string | null {
  return text === '' || text === '(null)' || text === 'None assigned' ? null : text;
}

function count(text: string, what: string, command: string, line: string): number {
  if (!/^[0-9]+$/.test(text))
    throw new SlurmOutputError(command, `${what} ${JSON.stringify(text)} is not a count`, line);
  return Number(text);
}

/** squeue's exit_code is the raw wait status: exit code << 8, or the signal number in the low 7 bits. */
export function decodeWaitStatus(status: number): { exitCode: number | null; signal: number | null } {
  const signal = status & 0x7f;
  if (signal !== 0) return { exitCode: null, signal };
  return { exitCode: (status >> 8) & 0xff, signal: null };
}

/** sacct and scontrol print "<exit code>:<signal>". */
export function decodeExitPair(
  text: string,
  command: string,
  line: string,
): { exitCode: number | null; signal: number | null } {
  const m = /^([0-9]+):([0-9]+)$/.exec(text);
  if (!m)
    throw new SlurmOutputError(command, `exit code ${JSON.stringify(text)} is not <code>:<signal>`, line);
  const signal = Number(m[2]);
  if (signal !== 0) return { exitCode: null, signal };
  return { exitCode: Number(m[1]), signal: null };
}

/** Expands sbatch's filename pattern (%j, %J, %x, %A, %a, %N, %%); others are left as they are. */
export function expandOutputPattern(
  pattern: string,
  job: { id: string; name: string; nodes: string | null },
): string {
  const [arrayJob, arrayTask] = job.id.split('_');
  return pattern.replace(/%(\d*)([%jJxAaN])/g, (whole, pad: string, key: string) => {
    const width = pad === '' ? 0 : Number(pad);
    const padded = (v: string) => (width > 0 && /^[0-9]+$/.test(v) ? v.padStart(width, '0') : v);
    switch (key) {
      case '%':
        return '%';
      case 'j':
      case 'J':
        return padded(job.id);
      case 'A':
        return padded(arrayJob ?? job.id);
      case 'a':
        return arrayTask !== undefined ? padded(arrayTask) : whole;
      case 'x':
        return job.name;
      case 'N':
        return job.nodes ? firstHost(job.nodes) : whole;
      default:
        return whole;
    }
  });
}

/** The first host of a Slurm hostlist: "node[1-2],gpu7" → "node1". */
export function firstHost(hostlist: string): string {
  const m = /^([^[,]*)(\[([0-9]+))?/.exec(hostlist);
  return `${m?.[1] ?? ''}${m?.[3] ?? ''}`;
}

function live(s: SlurmJobState, exit: { exitCode: number | null; signal: number | null }) {
  // A job that has not ended has no exit code yet, whatever the field says.
  return isLive(statusOf(s)) ? { exitCode: null, signal: null } : exit;
}

/**
 * Parses `squeue --noheader -O SQUEUE_FORMAT` output. The name is the last field; a `|` in the
 * output file or the comment goes to the comment (run names and the bot's comments never hold one).
 */
export function parseSqueue(output: string): ParsedJobs {
  return parseLines(output, 'squeue', SQUEUE_FIELDS, 2, squeueJob);
}

/**
 * Parses `sacct --parsable2 --noheader --allocations --duplicates --format=SACCT_FORMAT` output (same
 * rule for `|`): one row per allocation, so a requeued job's id may come more than once (listing.ts).
 */
export function parseSacct(output: string): ParsedJobs {
  return parseLines(output, 'sacct', SACCT_FIELDS, 1, sacctJob);
}

/**
 * The non-empty lines of `|`-separated output, each read by `read` from its fixed fields, its free
 * ones (the last of them takes any extra `|`) and its name (the last field). A line that cannot be
 * read is skipped with why.
 */
function parseLines(
  output: string,
  command: string,
  fields: readonly string[],
  freeFields: number,
  read: (fixed: string[], free: string[], name: string, line: string) => SlurmJob,
): ParsedJobs {
  const jobs: SlurmJob[] = [];
  const skipped: SkippedLine[] = [];
  const firstFree = fields.length - 1 - freeFields;
  for (const line of output.split('\n')) {
    if (line.trim() === '') continue;
    const parts = line.split('|');
    const name = parts.length > 1 ? (parts.at(-1) as string) : null;
    try {
      if (parts.length < fields.length)
        throw new SlurmOutputError(
          command,
          `expected ${fields.length} |-separated fields, got ${parts.length}`,
          line,
        );
      const free = parts.slice(firstFree, firstFree + freeFields - 1);
      free.push(parts.slice(firstFree + freeFields - 1, -1).join('|'));
      jobs.push(read(parts.slice(0, firstFree), free, name ?? '', line));
    } catch (error) {
      if (!(error instanceof SlurmOutputError)) throw error;
      skipped.push({ command, problem: error.problem, line, name });
    }
  }
  return { jobs, skipped };
}

function squeueJob(fixed: string[], free: string[], name: string, line: string): SlurmJob {
  const command = 'squeue';
  const [
    id,
    st,
    why,
    exit,
    restarts,
    submit,
    start,
    end,
    limit,
    used,
    nodeList,
    nodeCount,
    tres,
    perNode,
    user,
  ] = fixed;
  const [stdout, comment] = free;
  const s = state(st ?? '', command, line);
  const exitDecoded =
    exit === 'N/A' || exit === ''
      ? { exitCode: null, signal: null }
      : decodeWaitStatus(count(exit ?? '', 'exit status', command, line));
  const elapsed = elapsedOf(used ?? '', command, line);
  const gpus = gpusFromTres(tres ?? '') ?? gpusPerNode(perNode ?? '', nodeCount ?? '');
  const job: SlurmJob = {
    id: jobId(id ?? '', command, line),
    name,
    state: s,
    ...rawState(st ?? ''),
    status: statusOf(s, reason(why ?? '')),
    reason: reason(why ?? ''),
    ...live(s, exitDecoded),
    restarts: count(restarts ?? '', 'restart count', command, line),
    submitTime: time(submit ?? '', command, line),
    startTime: time(start ?? '', command, line),
    endTime: time(end ?? '', command, line),
    timeLimit: duration(limit ?? '', command, line),
    elapsed,
    ...allocation(gpus, elapsed),
    nodes: nodes(nodeList ?? ''),
    user: text(user),
    comment: text(comment),
    stdoutPath: null,
    source: 'squeue',
  };
  job.stdoutPath = text(stdout) === null ? null : expandOutputPattern(stdout ?? '', job);
  return job;
}

/**
 * Accounting's Reason is the last reason the job waited, kept after it started: a job submitted held
 * and released keeps `JobHeldUser` there (when it started before the scheduler gave another reason).
 * A hold released before the job was given nodes says nothing about the job since; only a job that
 * never had nodes (cancelled while held: sacct prints `None assigned`) ended in its hold.
 */
function accountedReason(why: string | null, allocated: string | null): string | null {
  return allocated !== null && (why === 'JobHeldUser' || why === 'JobHeldAdmin') ? null : why;
}

function sacctJob(fixed: string[], free: string[], name: string, line: string): SlurmJob {
  const command = 'sacct';
  const [id, st, why, exit, submit, start, end, limit, used, nodeList, tres, user] = fixed;
  const s = state(st ?? '', command, line);
  const elapsed = elapsedOf(used ?? '', command, line);
  return {
    id: jobId(id ?? '', command, line),
    name,
    state: s,
    ...rawState(st ?? ''),
    status: statusOf(s, accountedReason(reason(why ?? ''), nodes(nodeList ?? ''))),
    reason: accountedReason(reason(why ?? ''), nodes(nodeList ?? '')),
    ...live(s, exit === '' ? { exitCode: null, signal: null } : decodeExitPair(exit ?? '', command, line)),
    restarts: null,
    submitTime: time(submit ?? '', command, line),
    startTime: time(start ?? '', command, line),
    endTime: time(end ?? '', command, line),
    timeLimit: duration(limit ?? '', command, line),
    elapsed,
    ...allocation(gpusFromTres(tres ?? ''), elapsed),
    nodes: nodes(nodeList ?? ''),
    user: text(user),
    comment: text(free[0]),
    stdoutPath: null,
    source: 'sacct',
  };
}

/** Splits one `scontrol show job --oneliner` line into its Key=Value pairs (values may contain `=`). */
export function scontrolFields(line: string): Map<string, string> {
  const fields = new Map<string, string>();
  // A new field starts where a space is followed by Key= (keys: letters, digits, _ : / -).
  for (const part of line.trim().split(/ (?=[A-Za-z][A-Za-z0-9_:/-]*=)/)) {
    const eq = part.indexOf('=');
    if (eq <= 0)
      throw new SlurmOutputError('scontrol show job', `field ${JSON.stringify(part)} is not Key=Value`, line);
    fields.set(part.slice(0, eq), part.slice(eq + 1));
  }
  return fields;
}

/** Parses `scontrol show job --oneliner [id]` output (one job per line). */
export function parseScontrolJobs(output: string): SlurmJob[] {
  const command = 'scontrol show job';
  if (/^No jobs in the system\s*$/.test(output.trim())) return [];
  const jobs: SlurmJob[] = [];
  for (const line of output.split('\n')) {
    if (line.trim() === '') continue;
    const f = scontrolFields(line);
    const need = (key: string): string => {
      const v = f.get(key);
      if (v === undefined) throw new SlurmOutputError(command, `no ${key}= field`, line);
      return v;
    };
    const arrayJob = f.get('ArrayJobId');
    const arrayTask = f.get('ArrayTaskId');
    const id = arrayJob !== undefined && arrayTask !== undefined ? `${arrayJob}_${arrayTask}` : need('JobId');
    const s = state(need('JobState'), command, line);
    const stdout = f.get('StdOut');
    jobs.push({
      id: jobId(id, command, line),
      name: need('JobName'),
      state: s,
      ...rawState(need('JobState')),
      status: statusOf(s, reason(need('Reason'))),
      reason: reason(need('Reason')),
      ...live(s, decodeExitPair(need('ExitCode'), command, line)),
      restarts: count(need('Restarts'), 'restart count', command, line),
      submitTime: time(need('SubmitTime'), command, line),
      startTime: time(need('StartTime'), command, line),
      endTime: time(need('EndTime'), command, line),
      timeLimit: duration(need('TimeLimit'), command, line),
      elapsed: elapsedOf(need('RunTime'), command, line),
      ...allocation(
        gpusFromTres(f.get('TRES') ?? '') ?? gpusPerNode(f.get('TresPerNode') ?? '', f.get('NumNodes') ?? ''),
        elapsedOf(need('RunTime'), command, line),
      ),
      nodes: nodes(need('NodeList')),
      // UserId=alice(1000): the name before the uid.
      user: text(/^(.*)\([0-9]+\)$/.exec(need('UserId'))?.[1] ?? need('UserId')),
      comment: text(f.get('Comment')),
      stdoutPath: stdout === undefined || stdout === '' || stdout === '(null)' ? null : stdout,
      source: 'scontrol',
    });
  }
  return jobs;
}

/** Parses `sbatch --parsable` output: "<id>" or "<id>;<cluster>". */
export function parseSbatchParsable(stdout: string): string {
  const lines = stdout.split('\n').filter((l) => l.trim() !== '');
  const last = lines.at(-1)?.trim() ?? '';
  const m = /^([0-9]+)(;[A-Za-z0-9_.-]+)?$/.exec(last);
  if (lines.length !== 1 || !m?.[1]) {
    throw new SlurmOutputError('sbatch --parsable', 'expected one line "<job id>[;<cluster>]"', stdout);
  }
  return m[1];
}

/** `AccountingStorageType = accounting_storage/slurmdbd` from `scontrol show config`. */
export function accountingEnabled(showConfig: string): boolean {
  const m = /^AccountingStorageType\s*=\s*(\S+)/m.exec(showConfig);
  if (!m?.[1])
    throw new SlurmOutputError('scontrol show config', 'no AccountingStorageType line', showConfig);
  return m[1] !== 'accounting_storage/none';
}

/**
 * Unix seconds of a Slurm time. Slurm prints local time without a zone; our commands run with
 * TZ=UTC, so the text is read as UTC whatever the runner's own zone. Null for null or unreadable.
 */
export function slurmTimeToUnix(text: string | null | undefined): number | null {
  if (!text || !TIME.test(text)) return null;
  const ms = Date.parse(`${text}Z`);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : null;
}
