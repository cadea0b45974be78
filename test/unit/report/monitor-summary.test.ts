import { describe, expect, it } from 'vitest';
import { renderMonitorSummary } from '../../../src/report/monitor-summary.js';
import type { CandidateView } from '../../../src/report/pr-comment.js';

function view(
  candidate: string,
  state: CandidateView['state'],
  over: Partial<CandidateView> = {},
): CandidateView {
  return {
    experimentId: 'exp-1',
    candidate,
    runName: `topo-exp-1-${candidate}-0123abcd`,
    state,
    jobId: state === 'queued' ? null : '7',
    slurmState: state === 'queued' ? null : 'RUNNING',
    timeline: [],
    observation: { run_name: 'r', verdict: { state: 'warming', evidence: [] }, stable_metrics: {} },
    ...over,
  };
}

describe('the monitor job summary', () => {
  it('shows slots, queue, candidates, decisions and next steps per experiment', () => {
    const s = renderMonitorSummary({
      repositoryUrl: 'https://github.com/acme/sim',
      api: { reads: 3, writes: 1 },
      experiments: [
        {
          id: 'exp-1',
          maxParallel: 3,
          candidates: [
            { pr: 4, view: view('a', 'warming') },
            { pr: 5, view: view('b|c', 'stable') },
            { pr: 6, view: view('d', 'queued') },
          ],
        },
        { id: 'exp-2', maxParallel: 2, candidates: [] },
      ],
      errors: ['exp-3: clusters.yaml: no cluster "x"'],
    });
    expect(s).toContain('GitHub API this pass: 3 read(s), 1 write(s).');
    expect(s).toContain('Slots: **2 of 3** in use · queue: `d` (#6)');
    expect(s).toContain(
      '| `a` | [#4](https://github.com/acme/sim/pull/4) | warming | ⏳ measuring | Slurm job 7: RUNNING |',
    );
    expect(s).toContain('| `b\\|c` |');
    expect(s).toContain('Nothing to do: waiting for a free slot.');
    expect(s).toMatch(
      /### Experiment `exp-2`\n\nSlots: \*\*0 of 2\*\* in use · queue: empty\n\nNo live candidates\./,
    );
    expect(s).toContain('- exp-3: clusters.yaml: no cluster "x"');
  });
  it('says so when nothing is live', () => {
    expect(renderMonitorSummary({ experiments: [] })).toContain('No experiments with live candidates.');
  });
});
