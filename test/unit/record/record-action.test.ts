// The record action's report and pass, moved out of actions/record/main.ts unchanged: its outputs,
// job summary lines and warnings, the pull request it records, and what a failure tells the pull request.
import { describe, expect, it } from 'vitest';
import type { Octokit } from '../../../src/github/client.js';
import { RunStateError } from '../../../src/lifecycle/state-block.js';
import { RecordOutageError, type RecordResult } from '../../../src/usecases/record.js';
import { pullToRecord, recordFailureComment } from '../../../src/usecases/record-closed.js';
import { recordOutputs, recordSummary } from '../../../src/usecases/record-summary.js';

const commit = (committed: boolean, sha: string) => ({ committed, sha, attempts: 1, changed: [] });
const result: RecordResult = {
  recorded: [
    {
      experimentId: 'exp',
      candidate: 'wide',
      kind: 'accepted',
      runName: 'topo-exp-wide-0123abcd-89abcdef',
      cancelledJobs: ['41'],
      telemetryGaps: ['no series for gpu'],
      commit: commit(true, 'abcdef0123456789'),
    },
  ],
  notRecorded: [
    {
      experimentId: 'exp',
      candidate: 'narrow',
      file: 'topologies/exp/narrow.yaml',
      why: 'changed',
      refused: true,
    },
  ],
  closed: { requests: ['r1'], cancelledJobs: ['42'] },
  references: [
    {
      experimentId: 'exp',
      runName: 'topo-exp-best-0123abcd-00000000',
      gpuMinutes: null,
      commit: commit(false, 'f'),
    },
  ],
};

describe('the record action report', () => {
  it('sets the outputs in order, as JSON lists', () => {
    const outputs = recordOutputs(result);
    expect(Object.keys(outputs)).toEqual([
      'recorded',
      'not-recorded',
      'reference-runs',
      'closed-requests',
      'cancelled-jobs',
      'committed',
      'commit-sha',
    ]);
    expect(JSON.parse(outputs.recorded as string)).toEqual([
      {
        experiment_id: 'exp',
        candidate: 'wide',
        kind: 'accepted',
        run_name: 'topo-exp-wide-0123abcd-89abcdef',
        committed: true,
        commit_sha: 'abcdef0123456789',
        cancelled_jobs: ['41'],
        telemetry_gaps: ['no series for gpu'],
      },
    ]);
    expect(outputs['reference-runs']).toBe(
      '[{"experiment_id":"exp","run_name":"topo-exp-best-0123abcd-00000000","gpu_minutes":null,"committed":false}]',
    );
    expect(outputs['not-recorded']).toBe(
      '[{"experiment_id":"exp","candidate":"narrow","file":"topologies/exp/narrow.yaml","refused":true,"why":"changed"}]',
    );
    expect([
      outputs['closed-requests'],
      outputs['cancelled-jobs'],
      outputs.committed,
      outputs['commit-sha'],
    ]).toEqual(['["r1"]', '["42"]', 'true', 'abcdef0123456789']);
  });

  it('writes the job summary lines and the warnings', () => {
    expect(recordSummary(result)).toEqual({
      lines: [
        '- `wide` recorded as **accepted** in `experiments/exp.json` (commit abcdef0); gaps: no series for gpu',
        '- `narrow` (`topologies/exp/narrow.yaml`) not recorded: changed',
        '- reference job `topo-exp-best-0123abcd-00000000` recorded in `experiments/exp.json`: unknown GPU-minutes, charged to the experiment',
        "The pull request's 1 open run request(s) ended with it (Outcome `closed`); Slurm job(s) 42 cancelled. Reopening it needs a new `/topo submit`.",
      ],
      warnings: ['wide: no series for gpu', 'narrow: refused: changed'],
    });
    const skipped = {
      recorded: [],
      notRecorded: [],
      closed: { requests: [], cancelledJobs: [] },
      skipped: 'no file',
    };
    expect(recordSummary(skipped)).toEqual({ lines: ['Nothing recorded: no file.'], warnings: [] });
    expect(recordOutputs(skipped)).toMatchObject({ recorded: '[]', committed: 'false', 'commit-sha': '' });
  });
});

describe('the pull request the record action records', () => {
  const target = { owner: 'o', repo: 'r' };
  const closed = { number: 7, state: 'closed' };
  const octokit = { rest: { pulls: { get: async () => ({ data: closed }) } } } as unknown as Octokit;
  const event = (name: string, action: string, pr = '') => ({
    name,
    pr,
    payload: { action, pull_request: { ...closed, state: action === 'closed' ? 'closed' : 'open' } as never },
  });

  it('is the closed one of the event, or the pr input’s; another action of the event is ignored', async () => {
    await expect(pullToRecord(octokit, target, event('pull_request', 'closed'))).resolves.toMatchObject({
      pull: { number: 7 },
    });
    await expect(pullToRecord(octokit, target, event('workflow_dispatch', '', '7'))).resolves.toEqual({
      pull: closed,
    });
    await expect(pullToRecord(octokit, target, event('pull_request_target', 'labeled'))).resolves.toEqual({
      ignored: 'ignored: pull_request_target labeled (the record is written when a pull request closes)',
    });
  });

  it('refuses a malformed pr input, another event, and a pull request still open', async () => {
    await expect(pullToRecord(octokit, target, event('workflow_dispatch', '', '07'))).rejects.toThrow(
      'input pr must be a number, got "07"',
    );
    await expect(pullToRecord(octokit, target, event('push', ''))).rejects.toThrow(
      'the record action runs on pull_request closed (or with the pr input); got push',
    );
    const open = {
      ...event('pull_request', 'closed'),
      payload: { action: 'closed', pull_request: { number: 8, state: 'open' } as never },
    };
    await expect(pullToRecord(octokit, target, open)).rejects.toThrow(
      'pull request #8 is still open: nothing to record yet',
    );
  });

  it('tells the pull request how to record again: after an outage, a state rebuild, or a fix', () => {
    expect(recordFailureComment(new RecordOutageError('prometheus down'), 7)).toBe(
      [
        '**The experiment record was not written**: a service it needs could not be reached (an outage, not a result of this candidate):',
        '',
        '```text\nprometheus down\n```',
        '',
        'Once it is back, run the record workflow by hand (Actions → record → Run workflow) with pull request number `7`.',
      ].join('\n'),
    );
    expect(recordFailureComment(new RunStateError('bad block'), 7)).toContain(
      'Rebuild the state first (`/topo state rebuild`, by someone with write access), then run the record workflow',
    );
    const other = recordFailureComment(new Error('experiments/exp.json:3: not JSON'), 7);
    expect(other.split('\n')[0]).toBe(
      '**The experiment record could not be written** for this pull request:',
    );
    expect(other).toContain(
      'Fix what the message names on the default branch, then run the record workflow by hand',
    );
  });
});
