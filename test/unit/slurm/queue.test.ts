// The max_parallel queue as a pure function of (requests in order, jobs in Slurm).
import { describe, expect, it } from 'vitest';
import { planQueue, representativeJob } from '../../../src/usecases/queue.js';
import { FakeSlurm } from './fake-slurm.js';

const req = (c: string) => ({ jobName: `topo-e-${c}-00000000` });

describe('planQueue', () => {
  it('fills free slots first come, first served, and numbers the rest', () => {
    const s = new FakeSlurm();
    s.add(req('a').jobName, 'RUNNING');
    const jobs = [...s.jobsById.values()];
    const plan = planQueue([req('a'), req('b'), req('c'), req('d'), req('e')], jobs, 3);
    expect(plan.existing.map((e) => e.request.jobName)).toEqual([req('a').jobName]);
    expect(plan.submitNow).toEqual([req('b'), req('c')]);
    expect(plan.queued).toEqual([
      { request: req('d'), position: 1 },
      { request: req('e'), position: 2 },
    ]);
    expect(plan.live).toBe(1);
  });

  it('finished jobs free their slot but still count as existing for their request', () => {
    const s = new FakeSlurm();
    s.add(req('a').jobName, 'COMPLETED');
    s.add(req('b').jobName, 'FAILED');
    s.add(req('x').jobName, 'PENDING'); // a live job without a request still holds a slot
    const plan = planQueue([req('a'), req('b'), req('c'), req('d'), req('e')], [...s.jobsById.values()], 3);
    expect(plan.existing).toHaveLength(2);
    expect(plan.submitNow).toEqual([req('c'), req('d')]);
    expect(plan.queued).toEqual([{ request: req('e'), position: 1 }]);
  });

  it('ignores retired duplicates and a repeated request', () => {
    const s = new FakeSlurm();
    s.add(`retired-${req('a').jobName}`, 'PENDING');
    const plan = planQueue([req('b'), req('b')], [...s.jobsById.values()], 1);
    expect(plan.submitNow).toEqual([req('b')]);
    expect(plan.queued).toEqual([]);
  });

  it('refuses a nonsense limit', () => {
    expect(() => planQueue([], [], 0)).toThrow(/max_parallel/);
  });
});

describe('representativeJob', () => {
  it('prefers the oldest live job, else the newest finished one', () => {
    const s = new FakeSlurm();
    const name = req('a').jobName;
    s.add(name, 'FAILED');
    const live1 = s.add(name, 'RUNNING');
    s.add(name, 'PENDING');
    expect(representativeJob([...s.jobsById.values()], name)?.id).toBe(live1.id);
    Object.assign(live1, { state: 'COMPLETED', status: 'completed' });
    for (const j of s.jobsById.values()) Object.assign(j, { state: 'FAILED', status: 'failed' });
    expect(representativeJob([...s.jobsById.values()], name)?.id).toBe('102');
    expect(representativeJob([], name)).toBeNull();
  });
});
