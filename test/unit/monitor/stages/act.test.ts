// Stage `act` on a state decided in memory: the lifecycle's effects, the queue and the stops, each
// a port call in that order; what it did is written back to the candidates.
import { describe, expect, it } from 'vitest';
import { act } from '../../../../src/monitor/act.js';
import { decide } from '../../../../src/monitor/decide.js';
import {
  type CandidatePass,
  type ExperimentPass,
  jobNow,
  type PassState,
  viewNow,
} from '../../../../src/monitor/state.js';
import {
  analysisOf,
  callLog,
  EXPERIMENT_ID,
  experimentOf,
  observeWith,
  readState,
  recordingPorts,
  requestedCandidate,
  runningJob,
} from '../../../support/monitor-state.js';

async function decided(
  state: PassState,
  analyses: Parameters<typeof observeWith>[1] = {},
): Promise<PassState> {
  for (const e of state.experiments) observeWith(e, analyses);
  await decide(state);
  return state;
}

describe('stage act', () => {
  it('supersedes (cancel, then the Outcome), records a lost run, and cancels a job its Outcome ended', async () => {
    const moved = requestedCandidate('moved', 1, {
      currentHeadSha: 'b'.repeat(40),
      labels: ['topology:running'],
    });
    const forgotten = requestedCandidate('forgotten', 2, { run: { jobId: '7', submittedAt: 'x' } });
    const stopped = requestedCandidate('stopped', 3, {
      outcome: { kind: 'stopped', at: 'x', jobId: '13', evidence: [] },
    });
    const state = await decided(
      readState([
        {
          exp: experimentOf([moved, forgotten, stopped]),
          jobs: [runningJob(moved.runName, '11'), runningJob(stopped.runName, '13')],
        },
      ]),
    );
    const ports = recordingPorts();
    await act(state, ports);
    expect(callLog(ports.calls)).toEqual([
      'slurm.cancel 11',
      'lifecycle.recordOutcome #1',
      'lifecycle.recordOutcome #2',
      'slurm.cancel 13',
    ]);
    const outcomes = ports.calls.filter((c) => c.port === 'lifecycle.recordOutcome').map((c) => c.args[2]);
    expect(outcomes).toMatchObject([
      {
        kind: 'superseded',
        jobId: '11',
        evidence: [expect.stringMatching(/moved from aaaaaaa to bbbbbbb/), 'cancelled Slurm job 11'],
      },
      { kind: 'lost', jobId: '7' },
    ]);
    expect([...state.left]).toEqual([
      [1, ['topology:running']],
      [2, []],
    ]);
    expect(state.experiments[0]?.candidates.map((p) => p.acted?.left ?? false)).toEqual([true, true, false]);
  });

  it('serves the queue into the free slot: a refused Request leaves, the next one is submitted and judged as such', async () => {
    const refused = requestedCandidate('refused', 1);
    const next = requestedCandidate('next', 2);
    const after = requestedCandidate('after', 3);
    const state = await decided(
      readState([{ exp: experimentOf([refused, next, after], { max_parallel: 1 }) }]),
    );
    const ports = recordingPorts({
      submit: async (_e, c) => (c.candidate === 'refused' ? { refused: true as const } : { jobId: '42' }),
    });
    await act(state, ports);
    expect(callLog(ports.calls)).toEqual(['submit refused', 'submit next', 'lifecycle.recordRun #2']);
    const e = state.experiments[0] as ExperimentPass;
    const [r, n, a] = e.candidates as [CandidatePass, CandidatePass, CandidatePass];
    expect(r?.acted).toEqual({ left: true });
    expect(n?.acted).toEqual({ submitted: '42' });
    // act's result holds the job it submitted and the view judged again; read's and decide's stay as they were
    expect(jobNow(e, n)).toMatchObject({ jobId: '42', state: 'PENDING' });
    expect(viewNow(e, n)).toMatchObject({ state: 'submitted', jobId: '42', slurmState: 'PENDING' });
    expect(viewNow(e, n)?.observation.verdict.evidence).toEqual(['Slurm job 42 is PENDING']);
    expect(viewNow(e, a)?.state).toBe('queued');
  });

  it('stops a decided candidate and writes the GPU-minutes the stop saves into its decision', async () => {
    const slow = requestedCandidate('slow', 1);
    const baseline = { name: 'baseline', value: { value: 3.6, low: 3.55, high: 3.65 } };
    const state = await decided(
      readState([{ exp: experimentOf([slow], {}, { baseline }), jobs: [runningJob(slow.runName, '11')] }]),
      { slow: analysisOf(slow.runName, { projected_full_run: { value: 6, low: 5.9, high: 6.1 } }) },
    );
    const ports = recordingPorts();
    await act(state, ports);
    expect(callLog(ports.calls)).toEqual(['slurm.cancel 11']);
    expect(ports.calls[0]?.args).toEqual(['11', EXPERIMENT_ID]);
    const e = state.experiments[0] as ExperimentPass;
    const p = e.candidates[0] as CandidatePass;
    expect(p?.acted).toEqual({ cancelled: '11' });
    expect(viewNow(e, p)?.observation.decision?.gpu_minutes_saved).toBeGreaterThan(0);
  });
});
