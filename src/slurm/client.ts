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
  parseSacct,
  parseSbatchParsable,
  parseScontrolJobs,
  parseSqueue,
  SACCT_FORMAT,
  SQUEUE_FORMAT,
} from './parse.js';
import type { SlurmClient, SlurmJob, Transport } from './types.js';

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
}

const JOB_ID = /^[0-9]+(_[0-9]+)?$/;
const NAME_PREFIX = /^[A-Za-z0-9_.-]{1,200}$/;
const JOB_NAME = /^[A-Za-z0-9_.-]{1,200}$/;
const PATH = /^\/[A-Za-z0-9._/@%+-]{0,1000}$/;

function checked(value: string, pattern: RegExp, what: string): string {
  if (!pattern.test(value))
    throw new UnsafeArgumentError(`${what} ${JSON.stringify(value)} does not match ${pattern.source}`);
  return value;
}

export function createSlurmClient(transport: Transport, options: SlurmClientOptions = {}): SlurmClient {
  let history: Promise<'sacct' | 'squeue'> | undefined =
    options.history === 'sacct' || options.history === 'squeue'
      ? Promise.resolve(options.history)
      : undefined;

  async function run(
    argv: string[],
    idempotent: boolean,
    timeoutMs?: number,
    env?: Readonly<Record<string, string | undefined>>,
  ) {
    const result = await transport.run(argv, { idempotent, timeoutMs, ...(env ? { env } : {}) });
    if (result.code !== 0) {
      const unreachable = ControllerUnreachableError.matches(result.stderr, result.stdout);
      throw new (unreachable ? ControllerUnreachableError : SlurmCommandError)(
        argv,
        result.code,
        result.stdout,
        result.stderr,
        transport.description,
      );
    }
    return result;
  }

  async function accountingJobs(): Promise<SlurmJob[]> {
    const hours = options.sacctHours ?? 72;
    const argv = ['sacct', '--parsable2', '--noheader', '--allocations', `--starttime=now-${hours}hours`];
    return parseSacct((await run([...argv, `--format=${SACCT_FORMAT}`], true)).stdout);
  }

  function historySource(): Promise<'sacct' | 'squeue'> {
    history ??= run(['scontrol', 'show', 'config'], true).then((r) =>
      accountingEnabled(r.stdout) ? 'sacct' : 'squeue',
    );
    return history;
  }

  return {
    transport,

    async submit(argv, env) {
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
      const result = await run(exported, false, 60_000, env);
      return parseSbatchParsable(result.stdout);
    },

    async jobs(namePrefix) {
      checked(namePrefix, NAME_PREFIX, 'job name prefix');
      // Accounting first, then the controller: the newer listing decides what is live (listing.ts).
      const ended = (await historySource()) === 'sacct' ? await accountingJobs() : [];
      const r = await run(['squeue', '--states=all', '--noheader', `--Format=${SQUEUE_FORMAT}`], true);
      return mergeJobListings(parseSqueue(r.stdout), ended).filter((j) => j.name.startsWith(namePrefix));
    },

    async cancel(jobId) {
      await run(['scancel', checked(jobId, JOB_ID, 'job id')], true);
    },

    async release(jobId) {
      await run(['scontrol', 'release', checked(jobId, JOB_ID, 'job id')], true);
    },

    async rename(jobId, name) {
      await run(
        [
          'scontrol',
          'update',
          `JobId=${checked(jobId, JOB_ID, 'job id')}`,
          `JobName=${checked(name, JOB_NAME, 'job name')}`,
        ],
        true,
      );
    },

    async tail(job, lines) {
      if (!Number.isInteger(lines) || lines < 1 || lines > 10_000)
        throw new UnsafeArgumentError(`tail: ${lines} lines is not 1-10000`);
      let path: string | null;
      if (typeof job === 'string') {
        const r = await run(['scontrol', 'show', 'job', '--oneliner', checked(job, JOB_ID, 'job id')], true);
        const found = parseScontrolJobs(r.stdout);
        if (found.length !== 1 || !found[0])
          throw new SlurmOutputError('scontrol show job', `expected one job ${job}`, r.stdout);
        path = found[0].stdoutPath;
      } else {
        path = job.stdoutPath && expandOutputPattern(job.stdoutPath, job);
      }
      if (!path)
        throw new SlurmError(`job ${typeof job === 'string' ? job : job.id} has no known output file`);
      const r = await run(['tail', '-n', String(lines), '--', checked(path, PATH, 'output path')], true);
      const out = r.stdout.endsWith('\n') ? r.stdout.slice(0, -1) : r.stdout;
      return out === '' ? [] : out.split('\n');
    },

    async ensureDir(path) {
      await run(['mkdir', '-p', '--', checked(path, PATH, 'folder')], true);
    },

    close: () => transport.close(),
  };
}
