// The pull request's reply to /topo submit and /topo cancel.
import { describe, expect, it } from 'vitest';
import { renderCancelComment, renderSubmitComment } from '../../../src/usecases/submit-comment.js';

const base = {
  jobName: 'topo-e-a-0123abcd',
  cluster: 'ord',
  command: "sbatch --parsable --job-name=topo-e-a-0123abcd '--wrap=echo ```'",
};

describe('renderSubmitComment', () => {
  it('says job id, cluster, job name and the exact command in a fence that cannot be closed early', () => {
    const text = renderSubmitComment({ ...base, status: 'submitted', jobId: '4242' });
    expect(text).toContain('### Submitted: job `4242` on cluster `ord`');
    expect(text).toContain('Job name: `topo-e-a-0123abcd`');
    expect(text).toContain(`\`\`\`\`sh\n${base.command}\n\`\`\`\``);
  });
  it('an existing job is not submitted again', () => {
    expect(renderSubmitComment({ ...base, status: 'existing', jobId: '7', state: 'RUNNING' })).toMatch(
      /Already submitted: job `7` .*\(running\)[\s\S]*nothing new was submitted/,
    );
  });
  it('queued: place in line and why', () => {
    const text = renderSubmitComment({ ...base, status: 'queued', position: 2, live: 3, maxParallel: 3 });
    expect(text).toContain('### Queued: 2nd in line on cluster `ord`');
    expect(text).toContain('3 of 3 candidates of this experiment are running or pending (max_parallel 3)');
    expect(
      renderSubmitComment({ ...base, status: 'queued', position: 11, live: 3, maxParallel: 3 }),
    ).toContain('11th in line');
    expect(
      renderSubmitComment({ ...base, status: 'queued', position: 23, live: 3, maxParallel: 3 }),
    ).toContain('23rd in line');
  });
  it('dry run', () => {
    expect(renderSubmitComment({ ...base, status: 'dry-run', wouldBe: 'queued', position: 1 })).toContain(
      'would be queued (1st in line)',
    );
  });
});

describe('renderCancelComment', () => {
  it('names the cancelled job, or says why there was nothing to cancel', () => {
    expect(renderCancelComment({ jobName: base.jobName, cancelled: ['12'], job: null }, 'ord')).toContain(
      'Cancelled job `12` on cluster `ord`',
    );
    expect(renderCancelComment({ jobName: base.jobName, cancelled: [], job: null }, 'ord')).toContain(
      'Slurm knows no job of this name',
    );
  });
});
