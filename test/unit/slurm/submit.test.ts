// submitCandidate / cancelCandidate over an in-memory Slurm: the decisions, not the I/O.
import { describe, expect, it } from 'vitest';
import { ConnectionLostError } from '../../../src/slurm/errors.js';
import {
  ABANDONED_HOLD_SECONDS,
  cancelCandidate,
  releaseAbandonedHolds,
  SubmitInterrupted,
  submitCandidate,
} from '../../../src/usecases/submit.js';
import { FakeSlurm } from './fake-slurm.js';

const exp = 'topology-opt-x-20260101';
const name = (c: string) => `topo-${exp}-${c}-0123abcd`;
const submission = (c: string, label?: string) => {
  const jobName = label ? `${name(c)}-${label}` : name(c);
  const argv = [
    'sbatch',
    '--parsable',
    `--job-name=${jobName}`,
    '--output=/runs/slurm_output/x_%j.log',
    '/co/submit.sh',
    'deploy=a',
  ];
  return { jobName, argv, shellLine: argv.join(' ') };
};
const request = (c: string, extra = {}) => ({
  experimentId: exp,
  cluster: 'local',
  submission: submission(c),
  ...extra,
});

describe('submitCandidate', () => {
  it('submits held, creates the output folder, then releases', async () => {
    const slurm = new FakeSlurm();
    const r = await submitCandidate({ slurm }, request('a'));
    expect(r).toMatchObject({
      status: 'submitted',
      jobId: '100',
      command: submission('a').shellLine,
      cluster: 'local',
    });
    expect(slurm.calls).toEqual(['jobs', 'mkdir', 'submit', 'jobs', 'release 100']);
  });

  it('returns an existing live or finished job instead of submitting', async () => {
    const slurm = new FakeSlurm();
    slurm.add(name('a'), 'RUNNING');
    slurm.add(name('b'), 'COMPLETED');
    expect(await submitCandidate({ slurm }, request('a'))).toMatchObject({
      status: 'existing',
      jobId: '100',
      state: 'RUNNING',
    });
    expect(await submitCandidate({ slurm }, request('b'))).toMatchObject({
      status: 'existing',
      jobId: '101',
      state: 'COMPLETED',
    });
    expect(slurm.calls.filter((c) => c === 'submit')).toEqual([]);
  });

  it('submits again after a finished job when asked to', async () => {
    const slurm = new FakeSlurm();
    slurm.add(name('a'), 'NODE_FAIL');
    expect(await submitCandidate({ slurm }, request('a', { resubmitFinished: true }))).toMatchObject({
      status: 'submitted',
      jobId: '101',
    });
  });

  it('releases a held job left by a runner that died before releasing it', async () => {
    const slurm = new FakeSlurm();
    slurm.add(name('a'), 'PENDING', 'JobHeldUser');
    expect(await submitCandidate({ slurm }, request('a'))).toMatchObject({
      status: 'existing',
      jobId: '100',
    });
    expect(slurm.calls).toContain('release 100');
  });

  it('keeps the older job when another runner submitted the same name at the same moment', async () => {
    const slurm = new FakeSlurm();
    // The other runner's sbatch landed first (lower id 99), ours (100) second.
    slurm.beforeSubmitReturns = () => {
      slurm.add(name('a'), 'PENDING', 'JobHeldUser', '99');
      slurm.beforeSubmitReturns = undefined;
    };
    const r = await submitCandidate({ slurm }, request('a'));
    expect(r).toMatchObject({ status: 'existing', jobId: '99' });
    expect(slurm.jobsById.get('100')).toMatchObject({ name: `retired-${name('a')}`, state: 'CANCELLED' });
    expect(slurm.calls).toEqual(expect.arrayContaining(['rename 100', 'cancel 100', 'release 99']));
  });

  it('looks the job up by name after a connection lost during sbatch (no second sbatch)', async () => {
    const slurm = new FakeSlurm();
    const real = slurm.submit.bind(slurm);
    slurm.submit = async (argv) => {
      await real(argv);
      throw new ConnectionLostError('lost');
    };
    expect(await submitCandidate({ slurm }, request('a'))).toMatchObject({
      status: 'submitted',
      jobId: '100',
    });
    expect(slurm.calls.filter((c) => c === 'submit')).toHaveLength(1);
    expect(slurm.calls).toContain('release 100');
  });

  it('submits again when the connection was lost before sbatch reached Slurm', async () => {
    const slurm = new FakeSlurm();
    const real = slurm.submit.bind(slurm);
    let first = true;
    slurm.submit = async (argv) => {
      if (first) {
        first = false;
        throw new ConnectionLostError('lost');
      }
      return real(argv);
    };
    expect(await submitCandidate({ slurm }, request('a'))).toMatchObject({
      status: 'submitted',
      jobId: '100',
    });
  });

  it('queues beyond max_parallel with the place in line; a dry run changes nothing', async () => {
    const slurm = new FakeSlurm();
    for (const c of ['a', 'b', 'c']) slurm.add(name(c), 'RUNNING');
    const ahead = [{ jobName: name('d') }];
    expect(await submitCandidate({ slurm }, request('e', { ahead }))).toMatchObject({
      status: 'queued',
      position: 2,
      live: 3,
      maxParallel: 3,
    });
    expect(await submitCandidate({ slurm }, request('e', { ahead, dryRun: true }))).toMatchObject({
      status: 'dry-run',
      wouldBe: 'queued',
      position: 2,
    });
    expect(await submitCandidate({ slurm }, request('e', { maxParallel: 4, dryRun: true }))).toMatchObject({
      status: 'dry-run',
      wouldBe: 'submitted',
    });
    expect(slurm.calls.filter((c) => c === 'submit')).toEqual([]);
  });

  it('withdraws its own job when a simultaneous submit of another candidate filled the last slot first', async () => {
    const slurm = new FakeSlurm();
    for (const c of ['a', 'b']) slurm.add(name(c), 'RUNNING');
    slurm.beforeSubmitReturns = () => {
      slurm.add(name('c'), 'PENDING', 'JobHeldUser', '99');
      slurm.beforeSubmitReturns = undefined;
    };
    const r = await submitCandidate({ slurm }, request('d'));
    expect(r).toMatchObject({ status: 'queued', position: 1 });
    expect(slurm.jobsById.get('102')).toMatchObject({ state: 'CANCELLED', name: `retired-${name('d')}` });
    expect(slurm.jobsById.get('99')?.state).toBe('PENDING');
  });

  it('cancels the held job it made when the listing after sbatch does not show it, and says so', async () => {
    // What sacct did with accounting: a held job (Eligible=Unknown) is not listed.
    const slurm = new FakeSlurm();
    const listed = slurm.jobs.bind(slurm);
    let listings = 0;
    slurm.jobs = async (prefix) => {
      const all = await listed(prefix);
      return ++listings === 1 ? all : all.filter((j) => j.reason !== 'JobHeldUser');
    };
    const error = await submitCandidate({ slurm }, request('a')).catch((e: Error) => e);
    expect((error as Error).message).toBe(
      `submitted ${name('a')} as job 100 but Slurm lists no live job of that name; ` +
        'the held job 100 this submit made was cancelled (it never ran); submit again',
    );
    expect(slurm.calls).toEqual(['jobs', 'mkdir', 'submit', 'jobs', 'cancel 100']);
    expect(slurm.jobsById.get('100')?.state).toBe('CANCELLED');
  });

  it('cancels the held job when a step after sbatch fails (the release), keeping the error', async () => {
    const slurm = new FakeSlurm();
    slurm.release = async () => {
      throw new ConnectionLostError('connection reset during scontrol release');
    };
    const error = await submitCandidate({ slurm }, request('a')).catch((e: Error) => e);
    expect(error).toBeInstanceOf(ConnectionLostError);
    expect((error as Error).message).toContain('the held job 100 this submit made was cancelled');
    expect(slurm.jobsById.get('100')?.state).toBe('CANCELLED');
  });

  it('says the held job is left, and how to cancel it, when the cancel fails too', async () => {
    const slurm = new FakeSlurm();
    slurm.jobs = async () => [];
    slurm.cancel = async () => {
      throw new Error('scancel: controller down');
    };
    const error = await submitCandidate({ slurm }, request('a')).catch((e: Error) => e);
    expect((error as Error).message).toContain(
      'cancelling the held job 100 this submit made failed too (scancel: controller down): it is left held; cancel it with `scancel 100`',
    );
  });

  it('the held job of a name is released by the next submit, whatever run label the interrupted one drew (issue 41)', async () => {
    // `topo submit` interrupted between sbatch --hold and the release left run …-0000aaaa held; the
    // next `topo submit` draws a new label (…-0000bbbb) and must release the held run, not stand on it.
    const slurm = new FakeSlurm();
    slurm.add(`${name('a')}-0000aaaa`, 'PENDING', 'JobHeldUser');
    const r = await submitCandidate(
      { slurm },
      { ...request('a'), submission: submission('a', '0000bbbb'), standsFor: name('a') },
    );
    expect(r).toMatchObject({ status: 'existing', jobId: '100', jobName: `${name('a')}-0000aaaa` });
    expect(slurm.calls).toEqual(['jobs', 'release 100']);
    expect(slurm.jobsById.get('100')?.reason).not.toBe('JobHeldUser');
  });

  it('retires younger held runs of the candidate (two interrupted submits) and keeps the oldest', async () => {
    const slurm = new FakeSlurm();
    slurm.add(`${name('a')}-0000aaaa`, 'RUNNING');
    slurm.add(`${name('a')}-0000cccc`, 'PENDING', 'JobHeldUser');
    const r = await submitCandidate(
      { slurm },
      { ...request('a'), submission: submission('a', '0000bbbb'), standsFor: name('a') },
    );
    expect(r).toMatchObject({ status: 'existing', jobId: '100', state: 'RUNNING' });
    expect(slurm.jobsById.get('101')).toMatchObject({
      state: 'CANCELLED',
      name: `retired-${name('a')}-0000cccc`,
    });
    expect(slurm.calls).not.toContain('submit');
  });

  it('an interrupted submit (Ctrl-C) cancels the held job it made and says so; before sbatch it submits nothing', async () => {
    const slurm = new FakeSlurm();
    const abort = new AbortController();
    slurm.beforeSubmitReturns = () => abort.abort();
    const error = await submitCandidate({ slurm, signal: abort.signal }, request('a')).catch((e: Error) => e);
    expect(error).toBeInstanceOf(SubmitInterrupted);
    expect((error as Error).message).toBe(
      `interrupted after sbatch of ${name('a')}; the held job 100 this submit made was cancelled (it never ran)`,
    );
    expect(slurm.jobsById.get('100')?.state).toBe('CANCELLED');
    expect(slurm.calls).not.toContain('release 100');

    // a terminal's Ctrl-C reaches sbatch as well: its id is lost, the job is found by its run name
    const killed = new FakeSlurm();
    const both = new AbortController();
    killed.beforeSubmitReturns = () => {
      both.abort();
      throw new Error('`sbatch --parsable …` could not run: killed by SIGINT');
    };
    await expect(submitCandidate({ slurm: killed, signal: both.signal }, request('c'))).rejects.toThrow(
      'the held job 100 this submit made was cancelled (it never ran)',
    );
    expect(killed.jobsById.get('100')?.state).toBe('CANCELLED');

    const early = new FakeSlurm();
    const aborted = new AbortController();
    aborted.abort();
    await expect(submitCandidate({ slurm: early, signal: aborted.signal }, request('b'))).rejects.toThrow(
      'interrupted before sbatch: nothing was submitted',
    );
    expect(early.calls).toEqual(['jobs']);
  });

  it('a pass releases the jobs its submits left held, and leaves a hold a submit is still working on (issue 41)', async () => {
    const slurm = new FakeSlurm();
    const now = Date.parse('2026-12-06T20:00:00Z') / 1000;
    const at = (secondsAgo: number) => new Date((now - secondsAgo) * 1000).toISOString().slice(0, 19);
    const old = slurm.add(`${name('a')}-0000aaaa`, 'PENDING', 'JobHeldUser');
    old.submitTime = at(ABANDONED_HOLD_SECONDS + 60);
    old.comment = 'topo:0000aaaa'; // what submission writes: only a job that names its Request is released
    const young = slurm.add(`${name('b')}-0000aaaa`, 'PENDING', 'JobHeldUser');
    young.submitTime = at(5);
    const foreign = slurm.add(`topo-${exp}-extra-20260101-c-0123abcd-0000aaaa`, 'PENDING', 'JobHeldUser');
    foreign.submitTime = at(3600);
    const listed = await slurm.jobs(`topo-${exp}-`);
    const after = await releaseAbandonedHolds({ slurm }, exp, listed, now);
    expect(slurm.calls.filter((c) => c.startsWith('release'))).toEqual([`release ${old.id}`]);
    expect(after.find((j) => j.id === old.id)?.reason).toBeNull();
    expect(after.find((j) => j.id === young.id)?.reason).toBe('JobHeldUser');
  });

  it('refuses a job name outside the experiment', async () => {
    await expect(
      submitCandidate(
        { slurm: new FakeSlurm() },
        { ...request('a'), experimentId: 'topology-opt-other-20260101' },
      ),
    ).rejects.toThrow(/does not start with/);
  });
});

describe("a job under a run name that is not its Request's (issue 40 item 1)", () => {
  const label = '0badc0de';
  const marked = (c: string) => {
    const s = submission(c, label);
    const argv = [...s.argv.slice(0, 3), `--comment=topo:${label}`, ...s.argv.slice(3)];
    return { ...request(c), submission: { ...s, argv }, recorded: new Set<string>() };
  };

  it('is never returned as the run, and holds no slot: the Request is submitted beside it', async () => {
    const slurm = new FakeSlurm();
    const byHand = slurm.add(`${name('a')}-${label}`, 'RUNNING'); // same login, no comment
    const other = slurm.add(`${name('a')}-${label}`, 'RUNNING');
    other.comment = 'topo:11111111'; // another Request's identity
    slurm.add(`${name('b')}-${label}`, 'RUNNING'); // holds max_parallel 1 only if it were ours
    const r = await submitCandidate({ slurm }, { ...marked('a'), maxParallel: 1 });
    expect(r).toMatchObject({ status: 'submitted' });
    expect(r.status === 'submitted' && [byHand.id, other.id].includes(r.jobId)).toBe(false);
    expect(slurm.calls.filter((c) => c.startsWith('cancel'))).toEqual([]);
    expect(slurm.jobsById.get(byHand.id)?.status).toBe('running');
  });

  it('stands when the Run record names it (a job submitted before the identity was written)', async () => {
    const slurm = new FakeSlurm();
    const before = slurm.add(`${name('a')}-${label}`, 'RUNNING');
    const r = await submitCandidate({ slurm }, { ...marked('a'), recorded: new Set([before.id]) });
    expect(r).toMatchObject({ status: 'existing', jobId: before.id });
  });

  it('is never released by a pass as a hold its submit left', async () => {
    const slurm = new FakeSlurm();
    const held = slurm.add(`${name('a')}-${label}`, 'PENDING', 'JobHeldUser');
    held.submitTime = '2026-01-01T00:00:00';
    const now = Date.parse('2026-01-01T01:00:00Z') / 1000;
    await releaseAbandonedHolds({ slurm }, exp, [...slurm.jobsById.values()], now);
    expect(slurm.calls).toEqual([]);
  });
});

describe('cancelCandidate', () => {
  it('cancels every live job of the name and reports a finished one untouched', async () => {
    const slurm = new FakeSlurm();
    slurm.add(name('a'), 'RUNNING');
    slurm.add(name('b'), 'COMPLETED');
    expect(await cancelCandidate({ slurm }, { experimentId: exp, jobName: name('a') })).toMatchObject({
      cancelled: ['100'],
    });
    expect(await cancelCandidate({ slurm }, { experimentId: exp, jobName: name('b') })).toMatchObject({
      cancelled: [],
      job: { state: 'COMPLETED' },
    });
  });
});
