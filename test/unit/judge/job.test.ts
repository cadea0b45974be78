// One Slurm job model (issue 32 item 1): the monitor's port and the demo read Slurm jobs through
// src/judge/job.ts with one failure rule. Before, the demo called a COMPLETED job with a non-zero
// exit code a success (`job.state !== 'COMPLETED'`) where the monitor called it a crash, and read
// 60 log lines where the monitor read 200.
import { describe, expect, it } from 'vitest';
import { endedInFailure, experimentJobs, runJobOf } from '../../../src/judge/job.js';
import { candidateState, endedWithoutRunning } from '../../../src/judge/state.js';
import { type SlurmJob, statusOf } from '../../../src/slurm/types.js';

const job = (over: Partial<SlurmJob>): SlurmJob => ({
  id: '7',
  name: 'topo-topology-opt-vam-local-20260101-a-0123abcd-00000001',
  state: 'RUNNING',
  reason: null,
  exitCode: null,
  signal: null,
  restarts: 0,
  submitTime: '2026-01-01T00:00:00',
  startTime: '2026-01-01T00:01:00',
  endTime: null,
  timeLimit: '04:00:00',
  elapsed: null,
  nodes: null,
  user: 'root',
  comment: null,
  stdoutPath: null,
  source: 'squeue',
  gpus: null,
  gpuMinutes: null,
  heldSeconds: null,
  ...over,
  status: statusOf(over.state ?? 'RUNNING', over.reason ?? null),
});

function slurm(jobs: SlurmJob[] = [], log: string[] = []) {
  const tails: number[] = [];
  return {
    tails,
    client: {
      jobs: async () => jobs,
      tail: async (_j: string | SlurmJob, lines: number) => {
        tails.push(lines);
        return log;
      },
    },
  };
}

describe('the one job model', () => {
  it('calls a COMPLETED job with a non-zero exit code a failure, and reads its log to say which', async () => {
    const s = slurm([], ['Traceback (most recent call last):', 'RuntimeError: boom']);
    const j = await runJobOf(
      s.client,
      job({ state: 'COMPLETED', exitCode: 1, endTime: '2026-01-01T00:30:00' }),
    );
    expect(j.failure?.kind).toBe('crash');
    expect(s.tails).toEqual([200]);
    expect(j.startTs).toBe(Date.UTC(2026, 0, 1, 0, 1) / 1000);
    expect(j.endTs).toBe(Date.UTC(2026, 0, 1, 0, 30) / 1000);
  });

  it('reads no log for a live job or one that completed cleanly', async () => {
    const s = slurm();
    expect((await runJobOf(s.client, job({})))?.failure).toBeNull();
    const done = job({ state: 'COMPLETED', exitCode: 0, endTime: '2026-01-01T00:30:00' });
    expect(endedInFailure(done)).toBe(false);
    expect((await runJobOf(s.client, done)).failure).toBeNull();
    expect(s.tails).toEqual([]);
  });

  it("lists the experiment's own jobs only (never those of an id that extends it)", async () => {
    const mine = job({});
    const longer = job({
      id: '8',
      name: 'topo-topology-opt-vam-local-20260101-b-20260102-a-0123abcd-00000001',
    });
    const s = slurm([mine, longer]);
    const jobs = await experimentJobs(s.client, 'topology-opt-vam-local-20260101', [
      'topology-opt-vam-local-20260101-b-20260102',
    ]);
    expect(jobs.map((j) => j.jobId)).toEqual(['7']);
  });
});

describe('a job cancelled before it ran (issue 41)', () => {
  it('is stopped, not failed: held by an interrupted submit and cancelled, as the controller lists it', async () => {
    // the controller's listing of a job submitted --hold and cancelled: StartTime = EndTime, no nodes
    const held = job({
      state: 'CANCELLED',
      reason: 'JobHeldUser',
      startTime: '2026-12-06T20:14:52',
      endTime: '2026-12-06T20:14:52',
      elapsed: '0:00',
    });
    const { client } = slurm();
    expect(candidateState(await runJobOf(client, held), true, undefined, false)).toBe('stopped');
    // one that ran and was cancelled by nobody the judge knows stays failed
    const ran = job({ state: 'CANCELLED', endTime: '2026-01-01T00:09:00' });
    expect(candidateState(await runJobOf(client, ran), true, undefined, false)).toBe('failed');
  });

  it('ended without running: no run for topo watch to watch or record; a waiting or a run job is one', async () => {
    const { client } = slurm();
    const held = job({
      state: 'CANCELLED',
      startTime: '2026-12-06T20:14:52',
      endTime: '2026-12-06T20:14:52',
    });
    expect(endedWithoutRunning(await runJobOf(client, held))).toBe(true);
    const waiting = job({ state: 'PENDING', reason: 'JobHeldUser', startTime: null });
    expect(endedWithoutRunning(await runJobOf(client, waiting))).toBe(false);
    const ran = job({ state: 'CANCELLED', endTime: '2026-01-01T00:09:00' });
    expect(endedWithoutRunning(await runJobOf(client, ran))).toBe(false);
  });
});
