// Failure classification from Slurm state, exit code and the log, with the captured logs of the local cluster.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyFailure } from '../../../src/slurm/classify.js';
import { parseSacct, parseSqueue } from '../../../src/slurm/parse.js';
import type { SlurmJob } from '../../../src/slurm/types.js';

const dir = join(import.meta.dirname, '../../fixtures/slurm');
const lines = (p: string) => readFileSync(join(dir, p), 'utf8').split('\n');
const captured = new Map(
  parseSqueue(readFileSync(join(dir, 'captured/squeue-all-finished.txt'), 'utf8')).jobs.map((j) => [
    j.name.replace('topo-capture-', ''),
    j,
  ]),
);
const job = (name: string) => {
  const j = captured.get(name);
  if (!j) throw new Error(`no captured job ${name}`);
  return j;
};
const base: SlurmJob = {
  id: '7',
  name: 'topo-x-a-00000000',
  state: 'FAILED',
  status: 'failed',
  reason: 'NonZeroExitCode',
  exitCode: 1,
  signal: null,
  restarts: 0,
  submitTime: null,
  startTime: null,
  endTime: null,
  timeLimit: '04:00:00',
  elapsed: null,
  gpus: null,
  gpuMinutes: null,
  heldSeconds: null,
  nodes: 'node2',
  user: 'root',
  comment: null,
  stdoutPath: null,
  source: 'squeue',
};

describe('classifyFailure with captured jobs and logs', () => {
  it('no failure for a completed or live job', () => {
    expect(classifyFailure(job('completed'), [])).toBeNull();
    expect(
      classifyFailure({ ...base, state: 'RUNNING', status: 'running', exitCode: null }, [
        'Traceback (most recent call last):',
      ]),
    ).toBeNull();
  });

  it('gpu-oom from the CUDA line', () => {
    const f = classifyFailure(job('gpu-oom'), lines('captured/log-gpu-oom.txt'));
    expect(f).toMatchObject({ kind: 'gpu-oom', slurm_state: 'FAILED', exit_code: '1', gpu: 0 });
    expect(f?.evidence).toContain(
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity)',
    );
    expect(f?.message).toMatch(/ran out of GPU memory/);
    expect(f?.likely_fix).toBeTruthy();
  });

  it('host-oom from the memory-limit kill (no cgroups: FAILED, signal 9)', () => {
    const f = classifyFailure(job('host-oom'), lines('captured/log-host-oom.txt'));
    expect(f).toMatchObject({ kind: 'host-oom', exit_code: 'signal 9' });
    expect(f?.evidence?.some((l) => l.includes('Exceeded job memory limit'))).toBe(true);
    // Even without the log, the kill signature says host memory.
    expect(classifyFailure(job('host-oom'), [])?.kind).toBe('host-oom');
  });

  it('crash with the traceback as evidence and its last line in the message', () => {
    const f = classifyFailure(job('traceback'), lines('captured/log-traceback.txt'));
    expect(f?.kind).toBe('crash');
    expect(f?.message).toContain('ValueError: bad topology value');
    expect(f?.evidence).toEqual(
      expect.arrayContaining(['Traceback (most recent call last):', 'ValueError: bad topology value']),
    );
  });

  it('time-limit, node-failure and cancelled from the Slurm state', () => {
    expect(classifyFailure(job('timeout'), lines('captured/log-timeout.txt'))).toMatchObject({
      kind: 'time-limit',
      message: expect.stringContaining('1:00'),
    });
    expect(classifyFailure(job('node-fail'), lines('captured/log-node-fail.txt'))).toMatchObject({
      kind: 'node-failure',
      message: expect.stringContaining('node3'),
    });
    expect(classifyFailure(job('cancelled'), lines('captured/log-cancelled.txt'))?.kind).toBe('cancelled');
  });
});

describe('classifyFailure with documented states', () => {
  const { jobs } = parseSacct(readFileSync(join(dir, 'documented/sacct-parsable2.txt'), 'utf8'));
  const byState = (s: string) => jobs.find((j) => j.state === s) as SlurmJob;
  it('OUT_OF_MEMORY is host memory unless the log names CUDA', () => {
    expect(classifyFailure(byState('OUT_OF_MEMORY'), [])?.kind).toBe('host-oom');
    expect(
      classifyFailure(byState('OUT_OF_MEMORY'), ['RuntimeError: CUDA out of memory. GPU 5']),
    ).toMatchObject({ kind: 'gpu-oom', gpu: 5 });
  });
  it('PREEMPTED and REQUEUED are preempted', () => {
    expect(classifyFailure(byState('PREEMPTED'), [])?.kind).toBe('preempted');
    expect(classifyFailure({ ...base, state: 'REQUEUED' }, [])?.kind).toBe('preempted');
  });
  it('a CANCELLED job whose log says the time limit or memory is classified by the log', () => {
    expect(
      classifyFailure({ ...base, state: 'CANCELLED' }, [
        'slurmstepd: error: *** JOB 7 ON n1 CANCELLED AT 2026-01-01T00:00:00 DUE TO TIME LIMIT ***',
      ])?.kind,
    ).toBe('time-limit');
    expect(
      classifyFailure({ ...base, state: 'CANCELLED' }, ['slurmstepd: error: Exceeded job memory limit'])
        ?.kind,
    ).toBe('host-oom');
  });
  it('a process killed by the kernel ("Killed") is host-oom', () => {
    expect(
      classifyFailure({ ...base, exitCode: 137 }, ['/x/submit.sh: line 3:  4242 Killed   python -m alpasim'])
        ?.kind,
    ).toBe('host-oom');
  });
  it('a non-zero exit without any sign is a crash quoting the last lines', () => {
    const f = classifyFailure({ ...base, exitCode: 3 }, ['starting', 'something odd', '']);
    expect(f).toMatchObject({ kind: 'crash', exit_code: '3', message: 'Job 7 crashed with exit code 3.' });
    expect(f?.evidence).toContain('something odd');
  });
});
