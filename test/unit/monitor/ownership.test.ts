// The monitor's Slurm port gives a pass only the jobs Slurm's record says are the tool's (issue 40
// item 1, invariant 21), and names the others under a run's name as conflicts for the comment.
import { describe, expect, it } from 'vitest';
import { slurmMonitorPort } from '../../../src/monitor/adapters.js';
import { conflictNote } from '../../../src/monitor/judge.js';
import { FakeSlurm } from '../slurm/fake-slurm.js';

const exp = 'topology-opt-x-20260101';
const run = `topo-${exp}-a-0123abcd-0badc0de`;

describe('the monitor reads only its own runs', () => {
  it('a job under a run name that names no Request, or another, is a conflict, not a run', async () => {
    const slurm = new FakeSlurm();
    const ours = slurm.add(run, 'RUNNING');
    ours.comment = 'topo:0badc0de';
    const byHand = slurm.add(run, 'RUNNING');
    const other = slurm.add(run, 'COMPLETED');
    other.comment = 'topo:11111111';
    const before = slurm.add(`topo-${exp}-b-0123abcd-0000aaaa`, 'RUNNING'); // submitted before the rule: recorded
    const port = slurmMonitorPort(slurm);
    const jobs = await port.jobs(exp, new Set([before.id]));
    expect(jobs.map((j) => j.jobId)).toEqual([ours.id, before.id]);
    expect(jobs[0]?.requestId).toBe('0badc0de');
    expect(port.accounting?.(exp)).toBe('off'); // the fake has none: the dashboard's GPU-hours are a lower bound
    const conflicts = port.conflicts?.(exp) ?? [];
    expect(conflicts.map((j) => [j.jobId, j.requestId])).toEqual([
      [byHand.id, null],
      [other.id, '11111111'],
    ]);
    expect(conflictNote(conflicts[0] as (typeof conflicts)[0])).toMatch(
      new RegExp(
        `Slurm job ${byHand.id} carries this run's name, but its comment names no request: it is not this run`,
      ),
    );
    // no state at hand (topo status): an unmarked job is taken by its name, another Request's never
    expect((await port.jobs(exp)).map((j) => j.jobId)).toEqual([ours.id, byHand.id, before.id]);
  });
});
