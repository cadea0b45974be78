// Parsers for what Slurm prints. Every one is strict: a line it does not understand is an error that
// quotes the line, never a silently wrong state. Tested against output captured from the local cluster
// (test/fixtures/slurm/captured/) and the documented formats.
import { SlurmOutputError } from './errors.js';
import { isLive, SLURM_JOB_STATES, type SlurmJob, type SlurmJobState } from './types.js';

/** squeue -O fields, `|`-terminated; the name comes last so a `|` inside a name cannot shift the others. */
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
  'STDOUT',
  'Name',
] as const;
/** `:0` = no padding, no truncation; `|` = the field's suffix. */
export const SQUEUE_FORMAT = SQUEUE_FIELDS.map((f, i) =>
  i < SQUEUE_FIELDS.length - 1 ? `${f}:0|` : `${f}:0`,
).join(',');

/** sacct --parsable2 fields (`|`-separated); the name last for the same reason. */
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
  'JobName',
] as const;
export const SACCT_FORMAT = SACCT_FIELDS.join(',');

const JOB_ID = /^[0-9]+(_([0-9]+|\[[0-9,%-]+\]))?$/;
const TIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$/;
const DURATION = /^(([0-9]+-)?([0-9]+:)?[0-9]+:[0-9]+|UNLIMITED|INVALID|NOT_SET|Partition_Limit)$/;
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
  if (text === '' || text === 'N/A' || text === 'Unknown' || text === 'None' || text === '(null)')
    return null;
  if (!TIME.test(text))
    throw new SlurmOutputError(command, `time ${JSON.stringify(text)} is not YYYY-MM-DDTHH:MM:SS`, line);
  return text;
}

function duration(text: string, command: string, line: string): string | null {
  if (text === '' || text === 'N/A') return null;
  if (!DURATION.test(text))
    throw new SlurmOutputError(command, `duration ${JSON.stringify(text)} is not [D-]HH:MM:SS`, line);
  return text;
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

/** The allocation's GPUs and GPU-minutes (elapsed × GPUs): what a budget counts. */
function allocation(gpus: number | null, elapsed: string | null): Pick<SlurmJob, 'gpus' | 'gpuMinutes'> {
  const seconds = slurmDurationToSeconds(elapsed);
  return { gpus, gpuMinutes: gpus === null || seconds === null ? null : (gpus * seconds) / 60 };
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
  return isLive(s) ? { exitCode: null, signal: null } : exit;
}

/** Parses `squeue --noheader -O SQUEUE_FORMAT` output. */
export function parseSqueue(output: string): SlurmJob[] {
  return fieldLines(output, 'squeue', SQUEUE_FIELDS.length).map(({ parts, line }) => squeueJob(parts, line));
}

/** The non-empty lines of `|`-separated output, each with at least `fields` fields (the last may hold `|`). */
function fieldLines(
  output: string,
  command: string,
  fields: number,
): Array<{ parts: string[]; line: string }> {
  const lines: Array<{ parts: string[]; line: string }> = [];
  for (const line of output.split('\n')) {
    if (line.trim() === '') continue;
    const parts = line.split('|');
    if (parts.length < fields)
      throw new SlurmOutputError(command, `expected ${fields} |-separated fields, got ${parts.length}`, line);
    lines.push({ parts: [...parts.slice(0, fields - 1), parts.slice(fields - 1).join('|')], line });
  }
  return lines;
}

function squeueJob(parts: string[], line: string): SlurmJob {
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
    stdout,
    name,
  ] = parts;
  const s = state(st ?? '', command, line);
  const exitDecoded =
    exit === 'N/A' || exit === ''
      ? { exitCode: null, signal: null }
      : decodeWaitStatus(count(exit ?? '', 'exit status', command, line));
  const elapsed = duration(used ?? '', command, line);
  const gpus = gpusFromTres(tres ?? '') ?? gpusPerNode(perNode ?? '', nodeCount ?? '');
  const job: SlurmJob = {
    id: jobId(id ?? '', command, line),
    name: name ?? '',
    state: s,
    ...rawState(st ?? ''),
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
    stdoutPath: null,
    source: 'squeue',
  };
  job.stdoutPath = stdout === '' || stdout === 'N/A' ? null : expandOutputPattern(stdout ?? '', job);
  return job;
}

/** Parses `sacct --parsable2 --noheader --allocations --format=SACCT_FORMAT` output. */
export function parseSacct(output: string): SlurmJob[] {
  const command = 'sacct';
  return fieldLines(output, command, SACCT_FIELDS.length).map(({ parts, line }) => {
    const [id, st, why, exit, submit, start, end, limit, used, nodeList, tres, name] = parts;
    const s = state(st ?? '', command, line);
    const elapsed = duration(used ?? '', command, line);
    return {
      id: jobId(id ?? '', command, line),
      name: name ?? '',
      state: s,
      ...rawState(st ?? ''),
      reason: reason(why ?? ''),
      ...live(s, decodeExitPair(exit ?? '', command, line)),
      restarts: null,
      submitTime: time(submit ?? '', command, line),
      startTime: time(start ?? '', command, line),
      endTime: time(end ?? '', command, line),
      timeLimit: duration(limit ?? '', command, line),
      elapsed,
      ...allocation(gpusFromTres(tres ?? ''), elapsed),
      nodes: nodes(nodeList ?? ''),
      stdoutPath: null,
      source: 'sacct',
    } satisfies SlurmJob;
  });
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
      reason: reason(need('Reason')),
      ...live(s, decodeExitPair(need('ExitCode'), command, line)),
      restarts: count(need('Restarts'), 'restart count', command, line),
      submitTime: time(need('SubmitTime'), command, line),
      startTime: time(need('StartTime'), command, line),
      endTime: time(need('EndTime'), command, line),
      timeLimit: duration(need('TimeLimit'), command, line),
      elapsed: duration(need('RunTime'), command, line),
      ...allocation(
        gpusFromTres(f.get('TRES') ?? '') ?? gpusPerNode(f.get('TresPerNode') ?? '', f.get('NumNodes') ?? ''),
        duration(need('RunTime'), command, line),
      ),
      nodes: nodes(need('NodeList')),
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
