// The SlurmClient over a transport: sbatch, one-call job listing, scancel, release, rename, tail.
import { withExportAllowlist } from './environment.js';
import {
  ControllerUnreachableError,
  SlurmCommandError,
  SlurmError,
  SlurmOutputError,
  UnsafeArgumentError,
} from './errors.js';
import { mergeJobListings } from './listing.js';
import {
  accountingEnabled,
  expandOutputPattern,
  type ParsedJobs,
  parseSacct,
  parseSbatchParsable,
  parseScontrolJobs,
  parseSqueue,
  SACCT_FORMAT,
  SQUEUE_FORMAT,
} from './parse.js';
import type { JobListing, SlurmClient, Transport } from './types.js';

export interface SlurmClientOptions {
  /**
   * Where ended jobs come from besides the controller. Live jobs always come from the controller
   * (`squeue --states=all`, which also holds ended jobs for MinJobAge). `auto` asks `scontrol show
   * config` once: with accounting, `sacct` adds the ended jobs the controller forgot (two commands per
   * listing); without (`squeue`), the controller alone (one command).
   */
  history?: 'auto' | 'sacct' | 'squeue';
  /** How far back sacct looks (hours). */
  sacctHours?: number;
  /** Where a listing line that could not be read is reported (default: stderr, the Actions log). */
  log?: (message: string) => void;
}

const JOB_ID = /^[0-9]+(_[0-9]+)?$/;
const NAME_PREFIX = /^[A-Za-z0-9_.-]{1,200}$/;
const JOB_NAME = /^[A-Za-z0-9_.-]{1,200}$/;
const PATH = /^\/[A-Za-z0-9._/@%+-]{0,1000}$/;
/** A login name as `id -un` prints it (POSIX portable names, and the `@`/`\\` of directory services). */
const USER = /^[A-Za-z0-9_.@\\$-][A-Za-z0-9_.@\\ $-]{0,127}$/;

function checked(value: string, pattern: RegExp, what: string): string {
  if (!pattern.test(value))
    throw new UnsafeArgumentError(`${what} ${JSON.stringify(value)} does not match ${pattern.source}`);
  return value;
}

/** The commands that ask slurmctld (the others run on the login node alone, or ask slurmdbd). */
const CONTROLLER_COMMANDS = new Set(['sbatch', 'squeue', 'scancel', 'scontrol', 'sinfo']);

/**
 * Whether slurmctld answers, asked with `scontrol ping`: Slurm's other commands retry a controller that
 * refuses the connection for about MessageTimeout (10 s by default) before they say so, the ping says it
 * at once. DOWN throws the outage; UP, or an answer it does not know, lets the command itself tell.
 */
async function pingController(transport: Transport): Promise<void> {
  const argv = ['scontrol', 'ping'];
  const r = await transport.run(argv, { idempotent: true });
  if (/ is UP\b/.test(r.stdout) || !ControllerUnreachableError.matches(r.stderr, r.stdout)) return;
  throw new ControllerUnreachableError(argv, r.code, r.stdout, r.stderr, transport.description);
}

/** One client's state: its transport and options, and what it asked once (kept until it fails). */
interface ClientContext {
  readonly transport: Transport;
  readonly options: SlurmClientOptions;
  readonly log: (message: string) => void;
  history: Promise<'sacct' | 'squeue'> | undefined;
  controller: Promise<void> | undefined;
  me: Promise<string> | undefined;
}

/**
 * The first controller command of a client, and the first after one found slurmctld down, pings it
 * first: a controller that is down fails in a fraction of a second (it took 9-14 s), one that answers
 * slowly is still waited for as long as Slurm waits.
 */
function controllerAnswers(ctx: ClientContext): Promise<void> {
  ctx.controller ??= pingController(ctx.transport);
  const controller = ctx.controller;
  controller.catch(() => (ctx.controller = undefined));
  return controller;
}

/** Runs one command; a non-zero exit throws, as an outage when slurmctld did not answer. */
async function run(
  ctx: ClientContext,
  argv: string[],
  idempotent: boolean,
  timeoutMs?: number,
  env?: Readonly<Record<string, string | undefined>>,
) {
  if (CONTROLLER_COMMANDS.has(argv[0] as string)) await controllerAnswers(ctx);
  const result = await ctx.transport.run(argv, { idempotent, timeoutMs, ...(env ? { env } : {}) });
  if (result.code !== 0) {
    const unreachable = ControllerUnreachableError.matches(result.stderr, result.stdout);
    if (unreachable) ctx.controller = undefined; // down since the ping: the next command asks again
    throw new (unreachable ? ControllerUnreachableError : SlurmCommandError)(
      argv,
      result.code,
      result.stdout,
      result.stderr,
      ctx.transport.description,
    );
  }
  return result;
}

/** The login account's own name (`id -un`, asked once): only its jobs are listed. */
function user(ctx: ClientContext): Promise<string> {
  ctx.me ??= run(ctx, ['id', '-un'], true).then((r) => checked(r.stdout.trim(), USER, 'login user name'));
  const me = ctx.me;
  me.catch(() => (ctx.me = undefined));
  return me;
}

/**
 * The ended jobs accounting keeps; when slurmdbd does not answer (sacct fails: "Problem talking to
 * the database"), none, and why: live jobs still come from the controller, so a slurmdbd outage
 * degrades a listing instead of failing it (issue 40). A lost connection still fails it.
 */
async function accountedJobs(
  ctx: ClientContext,
  account: string,
): Promise<ParsedJobs & { unreachable?: string }> {
  try {
    return await accountingJobs(ctx, account);
  } catch (error) {
    if (!(error instanceof SlurmCommandError)) throw error;
    const why = (error.stderr.trim().split('\n').at(-1) ?? '').slice(0, 300) || `exit code ${error.code}`;
    ctx.log(
      `accounting unreachable (sacct: ${why}): ended jobs the controller forgot are unknown for this listing`,
    );
    return { jobs: [], skipped: [], unreachable: why };
  }
}

async function accountingJobs(ctx: ClientContext, account: string): Promise<ParsedJobs> {
  const hours = ctx.options.sacctHours ?? 72;
  const argv = [
    'sacct',
    '--parsable2',
    '--noheader',
    '--allocations',
    '--duplicates',
    `--starttime=now-${hours}hours`,
  ];
  return parseSacct(
    (await run(ctx, [...argv, `--user=${account}`, `--format=${SACCT_FORMAT}`], true)).stdout,
  );
}

function historySource(ctx: ClientContext): Promise<'sacct' | 'squeue'> {
  ctx.history ??= run(ctx, ['scontrol', 'show', 'config'], true).then((r) =>
    accountingEnabled(r.stdout) ? 'sacct' : 'squeue',
  );
  return ctx.history;
}

/**
 * The login account's jobs under the prefix, from both sources. Lines that could not be read are
 * logged; those that may be this prefix's (named so, or unnamed) are kept in the listing.
 */
async function listing(ctx: ClientContext, namePrefix: string): Promise<JobListing> {
  checked(namePrefix, NAME_PREFIX, 'job name prefix');
  const [source, account] = await Promise.all([historySource(ctx), user(ctx)]);
  // Accounting first, then the controller: the newer listing decides what is live (listing.ts).
  const ended = source === 'sacct' ? await accountedJobs(ctx, account) : { jobs: [], skipped: [] };
  const r = await run(
    ctx,
    ['squeue', '--me', '--states=all', '--noheader', `--Format=${SQUEUE_FORMAT}`],
    true,
  );
  const live = parseSqueue(r.stdout);
  const skipped = [...ended.skipped, ...live.skipped];
  for (const s of skipped) ctx.log(`skipped a ${s.command} line (${s.problem}): ${JSON.stringify(s.line)}`);
  const jobs = mergeJobListings(live.jobs, ended.jobs).filter(
    (j) => j.name.startsWith(namePrefix) && (j.user === null || j.user === account),
  );
  return {
    jobs,
    accounting: source === 'squeue' ? 'off' : 'unreachable' in ended ? 'unreachable' : 'on',
    ...('unreachable' in ended ? { accountingProblem: ended.unreachable } : {}),
    skipped: skipped.filter((s) => s.name === null || s.name.startsWith(namePrefix)),
  };
}

/** `sbatch --parsable …` with the export allowlist; its job id. */
async function submit(
  ctx: ClientContext,
  argv: readonly string[],
  env?: Readonly<Record<string, string | undefined>>,
): ReturnType<SlurmClient['submit']> {
  if (argv[0] !== 'sbatch' || !argv.includes('--parsable')) {
    throw new UnsafeArgumentError(
      `submit expects an \`sbatch --parsable ...\` argv, got ${JSON.stringify(argv.slice(0, 3))}`,
    );
  }
  let exported: string[];
  try {
    exported = withExportAllowlist(argv);
  } catch (error) {
    throw new UnsafeArgumentError((error as Error).message);
  }
  const result = await run(ctx, exported, false, 60_000, env);
  return parseSbatchParsable(result.stdout);
}

/** A job's output file: asked of scontrol for a job id, expanded from a listed job's pattern. */
async function outputPath(ctx: ClientContext, job: TailedJob): Promise<string> {
  let path: string | null;
  if (typeof job === 'string') {
    const r = await run(ctx, ['scontrol', 'show', 'job', '--oneliner', checked(job, JOB_ID, 'job id')], true);
    const found = parseScontrolJobs(r.stdout);
    if (found.length !== 1 || !found[0])
      throw new SlurmOutputError('scontrol show job', `expected one job ${job}`, r.stdout);
    path = found[0].stdoutPath;
  } else {
    path = job.stdoutPath && expandOutputPattern(job.stdoutPath, job);
  }
  if (!path) throw new SlurmError(`job ${typeof job === 'string' ? job : job.id} has no known output file`);
  return path;
}

/** The last `lines` lines of a job's output file. */
async function tail(ctx: ClientContext, job: TailedJob, lines: number): Promise<string[]> {
  if (!Number.isInteger(lines) || lines < 1 || lines > 10_000)
    throw new UnsafeArgumentError(`tail: ${lines} lines is not 1-10000`);
  const path = await outputPath(ctx, job);
  const r = await run(ctx, ['tail', '-n', String(lines), '--', checked(path, PATH, 'output path')], true);
  const out = r.stdout.endsWith('\n') ? r.stdout.slice(0, -1) : r.stdout;
  return out === '' ? [] : out.split('\n');
}

type TailedJob = Parameters<SlurmClient['tail']>[0];

export function createSlurmClient(transport: Transport, options: SlurmClientOptions = {}): SlurmClient {
  const fixed = options.history === 'sacct' || options.history === 'squeue' ? options.history : null;
  const ctx: ClientContext = {
    transport,
    options,
    log: options.log ?? ((m: string) => process.stderr.write(`${m}\n`)),
    history: fixed ? Promise.resolve(fixed) : undefined,
    controller: undefined,
    me: undefined,
  };
  const checkedId = (jobId: string) => checked(jobId, JOB_ID, 'job id');
  return {
    transport,
    submit: (argv, env) => submit(ctx, argv, env),
    listing: (namePrefix) => listing(ctx, namePrefix),
    jobs: async (namePrefix) => (await listing(ctx, namePrefix)).jobs,
    cancel: async (jobId) => {
      await run(ctx, ['scancel', checkedId(jobId)], true);
    },
    release: async (jobId) => {
      await run(ctx, ['scontrol', 'release', checkedId(jobId)], true);
    },
    rename: async (jobId, name) => {
      const [id, jobName] = [checkedId(jobId), checked(name, JOB_NAME, 'job name')];
      await run(ctx, ['scontrol', 'update', `JobId=${id}`, `JobName=${jobName}`], true);
    },
    tail: (job, lines) => tail(ctx, job, lines),
    ensureDir: async (path) => {
      await run(ctx, ['mkdir', '-p', '--', checked(path, PATH, 'folder')], true);
    },
    close: () => transport.close(),
  };
}
