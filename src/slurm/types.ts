// What the project knows about a Slurm job, whichever command reported it.

/** Job states as Slurm prints them in long form (squeue %T / -O State, sacct State, scontrol JobState). */
export const SLURM_JOB_STATES = [
  'BOOT_FAIL',
  'CANCELLED',
  'COMPLETED',
  'COMPLETING',
  'CONFIGURING',
  'DEADLINE',
  'FAILED',
  'NODE_FAIL',
  'OUT_OF_MEMORY',
  'PENDING',
  'PREEMPTED',
  'REQUEUED',
  'REQUEUE_FED',
  'REQUEUE_HOLD',
  'RESIZING',
  'RESV_DEL_HOLD',
  'REVOKED',
  'RUNNING',
  'SIGNALING',
  'SPECIAL_EXIT',
  'STAGE_OUT',
  'STOPPED',
  'SUSPENDED',
  'TIMEOUT',
] as const;
/**
 * `UNKNOWN` stands for a state this adapter does not know (a newer Slurm): shown as unknown, and
 * counted as live (it may hold a slot; never resubmitted, never judged).
 */
export type SlurmJobState = (typeof SLURM_JOB_STATES)[number] | 'UNKNOWN';

/**
 * What a job's state means to every path above src/slurm: one closed status, mapped here from
 * Slurm's state (and, for a hold, its reason), like Open OnDemand's STATE_MAP. Nothing outside
 * src/slurm compares a raw Slurm state (test/unit/build/structure.test.ts).
 *
 * - `queued`: waits for resources (PENDING, CONFIGURING, REQUEUED, a hold the user cannot lift).
 * - `held`: PENDING held by its own user (`sbatch --hold`, reason JobHeldUser): what submit releases.
 * - `running`: holds its allocation (RUNNING, COMPLETING, SIGNALING, STAGE_OUT, RESIZING).
 * - `suspended`: holds its allocation without running (SUSPENDED, STOPPED).
 * - `completed`, `cancelled`, `timeout` (TIMEOUT, DEADLINE), `failed` (FAILED, NODE_FAIL,
 *   BOOT_FAIL, OUT_OF_MEMORY, PREEMPTED, SPECIAL_EXIT, REVOKED): ended.
 * - `unknown`: a state word this adapter does not know (a newer Slurm): live, never judged.
 */
export const JOB_STATUSES = [
  'queued',
  'held',
  'running',
  'suspended',
  'completed',
  'cancelled',
  'timeout',
  'failed',
  'unknown',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** THE state table, used by every path (submit, queue, monitor, record, CLI, autopilot). */
const STATE_MAP: Readonly<Record<SlurmJobState, JobStatus>> = {
  PENDING: 'queued',
  CONFIGURING: 'queued',
  REQUEUED: 'queued',
  REQUEUE_FED: 'queued',
  REQUEUE_HOLD: 'queued',
  RESV_DEL_HOLD: 'queued',
  RUNNING: 'running',
  COMPLETING: 'running',
  SIGNALING: 'running',
  STAGE_OUT: 'running',
  RESIZING: 'running',
  SUSPENDED: 'suspended',
  STOPPED: 'suspended',
  COMPLETED: 'completed',
  CANCELLED: 'cancelled',
  TIMEOUT: 'timeout',
  DEADLINE: 'timeout',
  FAILED: 'failed',
  NODE_FAIL: 'failed',
  BOOT_FAIL: 'failed',
  OUT_OF_MEMORY: 'failed',
  PREEMPTED: 'failed',
  SPECIAL_EXIT: 'failed',
  REVOKED: 'failed',
  UNKNOWN: 'unknown',
};

/** Holds a job's own user may lift (`scontrol release`): the one a submit makes with --hold. */
const USER_HOLDS = new Set(['JobHeldUser']);

/** The status of a job in `state` (as Slurm prints it, or parsed), waiting for `reason`. */
export function statusOf(state: SlurmJobState | string, reason: string | null = null): JobStatus {
  const status = STATE_MAP[state as SlurmJobState] ?? 'unknown';
  return status === 'queued' && state === 'PENDING' && USER_HOLDS.has(reason ?? '') ? 'held' : status;
}

const LIVE: ReadonlySet<JobStatus> = new Set(['queued', 'held', 'running', 'suspended', 'unknown']);

/** Whether the job still holds (or waits for) resources, so it occupies one of the experiment's slots. */
export function isLive(status: JobStatus): boolean {
  return LIVE.has(status);
}

/** Whether the job waits for its allocation (so a start Slurm prints for it is a forecast). */
export function isWaiting(status: JobStatus): boolean {
  return status === 'queued' || status === 'held';
}

/** What a job just accepted by sbatch is, before any listing shows it. */
export const SUBMITTED: { readonly state: SlurmJobState; readonly status: JobStatus } = {
  state: 'PENDING',
  status: 'queued',
};

/** How a status is shown where Slurm's own word is expected ("Slurm job 42: CANCELLED"). */
export function statusWord(status: JobStatus): string {
  return status === 'held' || status === 'queued' ? 'PENDING' : status.toUpperCase();
}

export interface SlurmJob {
  /** Job id as Slurm prints it ("123", or "123_4" for an array element). */
  id: string;
  name: string;
  state: SlurmJobState;
  /** The state text as Slurm printed it (differs from `state` when that is UNKNOWN). */
  rawState?: string;
  /** What the state means (statusOf): the one thing paths above src/slurm read of it. */
  status: JobStatus;
  /** Why the job is in its state (Resources, Priority, BeginTime, NonZeroExitCode, TimeLimit...); null for None. */
  reason: string | null;
  /** Exit code of the batch script; null when not known (still running, or killed by a signal). */
  exitCode: number | null;
  /** Signal that ended the batch script, if one did (9 = killed, 15 = terminated). */
  signal: number | null;
  /** How often the job was requeued; null when the source does not say (sacct, for a job the controller forgot). */
  restarts: number | null;
  /**
   * Times as Slurm prints them, in UTC: every command runs with TZ=UTC (src/slurm/environment.ts);
   * read them with slurmTimeToUnix. Null for Unknown/None/N/A.
   */
  submitTime: string | null;
  startTime: string | null;
  endTime: string | null;
  timeLimit: string | null;
  /** Durations as printed: squeue `1:39`, sacct/scontrol `00:01:39`; read them with slurmDurationToSeconds. */
  elapsed: string | null;
  /** GPUs allocated (TRES `gres/gpu`, else the per-node request × nodes); null when Slurm does not say. */
  gpus: number | null;
  /**
   * GPU-minutes held so far over every allocation of the job (elapsed × gpus; a requeued job's
   * earlier allocations included where accounting keeps them, `sacct -D`): what a budget counts;
   * null when Slurm says neither. Never a forecast: 0 for a job that never started.
   */
  gpuMinutes: number | null;
  /** Seconds held so far over every allocation (elapsed summed, as gpuMinutes); null when Slurm does not say. */
  heldSeconds: number | null;
  nodes: string | null;
  /**
   * Whose job it is, as Slurm records it (squeue UserName, sacct User, scontrol UserId): the one
   * owner a name can never stand for (docs/security.md); null when the source did not print it.
   */
  user: string | null;
  /** The job's comment (`sbatch --comment`); null when it has none or the source does not keep it. */
  comment: string | null;
  /** The job's output file, with %j, %x, %u, %A, %a, %N and %% expanded; null when the source does not say. */
  stdoutPath: string | null;
  /** Which command reported it. */
  source: 'squeue' | 'sacct' | 'scontrol';
}

/** A line of a listing that could not be read: skipped, reported with what was wrong. */
export interface SkippedLine {
  command: string;
  problem: string;
  line: string;
  /** The job's name (the line's last field) when the line has fields at all; null when not. */
  name: string | null;
}

/** One listing of the login account's jobs under a name prefix (SlurmClient.listing). */
export interface JobListing {
  jobs: SlurmJob[];
  /**
   * Where ended jobs the controller forgot come from: accounting (`on`), nowhere (`off`: the
   * controller keeps them for MinJobAge), or nowhere this time (`unreachable`: the cluster has
   * accounting but sacct failed, slurmdbd down: a run whose job is not listed is unknown, not lost).
   */
  accounting: 'on' | 'off' | 'unreachable';
  /** What sacct said when accounting was unreachable. */
  accountingProblem?: string;
  /**
   * Lines that could not be read and may be this prefix's jobs (named so, or unnamed): skipped and
   * logged, never fatal for the other lines; a run whose job may be among them is unknown, not lost.
   */
  skipped: SkippedLine[];
}

/** Result of one command on the login node. */
export interface CommandResult {
  stdout: string;
  stderr: string;
  code: number;
}

export interface RunOptions {
  timeoutMs?: number;
  /**
   * Whether the command may be run again after a lost connection (squeue, scontrol show, tail: yes;
   * sbatch: no — the caller looks the job up by name instead).
   */
  idempotent?: boolean;
  /**
   * Variables for this command on top of the plain environment (only submit.sh's variables: see
   * src/slurm/environment.ts plainCommandEnvironment). The action's own environment never crosses.
   */
  env?: Readonly<Record<string, string | undefined>>;
}

/** How commands reach the login node: a local child process or SSH. Commands are argv arrays. */
export interface Transport {
  readonly description: string;
  run(argv: readonly string[], options?: RunOptions): Promise<CommandResult>;
  close(): Promise<void>;
}

export interface SlurmClient {
  /**
   * `sbatch --parsable ...` → the job id. The argv must carry SBATCH_EXPORT_FLAG (added when absent,
   * refused when another --export is present); `env` = the Submission's submit.sh variables.
   */
  submit(argv: readonly string[], env?: Readonly<Record<string, string | undefined>>): Promise<string>;
  /**
   * The login account's own jobs whose name starts with the prefix (never another user's: `squeue
   * --me`, `sacct --user`): live ones (held included) from the controller, ended ones from the
   * controller or, with accounting, sacct; one entry per job id (listing.ts). With what the listing
   * could not see: lines it could not read, and whether accounting answered.
   */
  listing(namePrefix: string): Promise<JobListing>;
  /** `listing(namePrefix).jobs`: for the paths that act on jobs and report nothing of the listing. */
  jobs(namePrefix: string): Promise<SlurmJob[]>;
  cancel(jobId: string): Promise<void>;
  /** Releases a job submitted with --hold. */
  release(jobId: string): Promise<void>;
  /** Renames a pending job (used to retire a duplicate before cancelling it). */
  rename(jobId: string, name: string): Promise<void>;
  /** The last lines of the job's output file. */
  tail(job: string | SlurmJob, lines: number): Promise<string[]>;
  /** mkdir -p on the login node (the --output folder must exist before the job starts). */
  ensureDir(path: string): Promise<void>;
  close(): Promise<void>;
  readonly transport: Transport;
}
