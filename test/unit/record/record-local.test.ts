// Recording without GitHub (`topo record`, `topo watch`; issue 41 item 2): the record workflow's
// apply, best rule and checks on the checkout's record. Pure: the CLI's reading of Slurm and
// Prometheus is in test/integration/cli/watch-record.test.ts.
import { describe, expect, it } from 'vitest';
import { recordFiles } from '../../../src/record/files.js';
import { createRecord, recordPaths } from '../../../src/record/model.js';
import { recordProblems } from '../../../src/record/validate.js';
import type { Candidate } from '../../../src/types/generated/candidate.js';
import type { CandidateObservation } from '../../../src/types/generated/metrics.js';
import {
  type LocalRecordInput,
  recordLocally,
  recordReferenceLocally,
} from '../../../src/usecases/record-local.js';
import { EXPERIMENT, observation } from '../../fixtures/record/scenario.js';

const JSON_PATH = recordPaths(EXPERIMENT.experiment_id).json;
const run = (name: string, obs: CandidateObservation | null) => ({
  runName: obs?.run_name ?? `topo-${EXPERIMENT.experiment_id}-${name}-0123abcd-0000aaaa`,
  jobId: '12',
  observation: obs,
});
const input = (name: string, obs: CandidateObservation | null, extra: Partial<LocalRecordInput> = {}) => ({
  experiment: EXPERIMENT,
  recordText: null,
  candidate: { name, parent: name === 'baseline' ? null : 'baseline', topology: {} } as Candidate,
  file: `topologies/${EXPERIMENT.experiment_id}/${name}.yaml`,
  hash: '0123abcd',
  change: {},
  run: run(name, obs),
  accept: true,
  at: '2026-12-06T12:00:00Z',
  ...extra,
});
const better = (runName: string) =>
  observation(runName, 4.0, {
    decision: {
      state: 'better',
      reference: { role: 'baseline', name: 'baseline', pr: null },
      relative_change: { value: -0.24, low: -0.3, high: -0.18 },
      decided_at_minutes: 20,
      min_improvement: 0.03,
      evidence: ['decided at run-minute 20'],
    },
  } as Partial<CandidateObservation>);

function recorded(result: ReturnType<typeof recordLocally>) {
  if ('refused' in result) throw new Error(result.refused);
  return result;
}

describe('recordLocally', () => {
  it('records the baseline, then a candidate decided better, which becomes the best, as the record workflow does', () => {
    const base = recorded(recordLocally(input('baseline', observation('topo-x-baseline-1', 5.2))));
    expect(base.kind).toBe('accepted');
    expect(base.record.current_best.topology).toBe('baseline');
    const text = base.files[JSON_PATH] as string;
    const cand = recorded(
      recordLocally(input('more-workers', better('topo-x-more-workers-1'), { recordText: text })),
    );
    expect(cand.record.current_best.topology).toBe('more-workers');
    expect(cand.record.runs.map((r) => [r.name, r.status])).toEqual([
      ['baseline', 'accepted'],
      ['more-workers', 'accepted'],
    ]);
    expect(recordProblems(cand.record)).toEqual([]);
    expect(cand.record.runs[1]?.pull_request).toBeNull();
  });

  it('records a failed run failed whatever was asked, and a rejection with its reason', () => {
    const failed = observation('topo-x-oom-1', 5, {
      failure: { kind: 'gpu-oom', message: 'Job 3 ran out of GPU memory.' },
    } as Partial<CandidateObservation>);
    expect(recorded(recordLocally(input('oom', failed))).kind).toBe('failed');
    const rejected = recorded(
      recordLocally(
        input('slow', observation('topo-x-slow-1', 6), { accept: false, reason: 'renderer-bound' }),
      ),
    );
    expect(rejected.kind).toBe('rejected');
    expect(rejected.record.runs[0]?.decision.reason).toBe('renderer-bound');
  });

  it('never rewrites an entry of a pull request or of another run; the same run again changes nothing', () => {
    const first = recorded(recordLocally(input('baseline', observation('topo-x-baseline-1', 5.2))));
    const text = first.files[JSON_PATH] as string;
    const again = recorded(
      recordLocally(
        input('baseline', observation('topo-x-baseline-1', 5.2), {
          recordText: text,
          at: '2026-12-07T09:00:00Z',
        }),
      ),
    );
    expect(again.unchanged).toBe(true);
    const other = recordLocally(
      input('baseline', observation('topo-x-baseline-2', 5.0), { recordText: text }),
    );
    expect(other).toEqual({
      refused: expect.stringContaining('is already in the record from run `topo-x-baseline-1`'),
    });
    const fromPull = createRecord(EXPERIMENT);
    fromPull.runs = [{ ...first.record.runs[0]!, pull_request: { number: 7 } }];
    const refused = recordLocally(
      input('baseline', observation('topo-x-baseline-1', 5.2), {
        recordText: recordFiles(fromPull)[JSON_PATH] as string,
      }),
    );
    expect(refused).toEqual({ refused: expect.stringContaining('from pull request #7') });
  });

  it('fills in the pending baseline topo init wrote', () => {
    const init = createRecord(EXPERIMENT);
    init.runs = [
      { name: 'baseline', status: 'pending', decision: { outcome: 'pending', reason: null, next: null } },
    ];
    const text = recordFiles(init)[JSON_PATH] as string;
    const r = recorded(
      recordLocally(input('baseline', observation('topo-x-baseline-1', 5.2), { recordText: text })),
    );
    expect(r.record.runs).toHaveLength(1);
    expect(r.record.runs[0]?.status).toBe('accepted');
  });
});

describe("recordReferenceLocally (topo watch records a round's reference job)", () => {
  const seen = (obs: CandidateObservation | null, held: number | null) => ({
    of: 'baseline',
    runName: 'topo-x-baseline-0123abcd-1111bbbb',
    jobId: '31',
    pullRequest: null,
    observation: obs,
    heldGpuMinutes: held,
    ended: 'stopped',
    candidates: ['more-workers', 'more-workers'],
    at: '2026-12-06T13:00:00Z',
  });
  it('keeps it among the reference runs with the GPU-minutes its comment says it used, once', () => {
    const stoppedObs = observation('topo-x-baseline-0123abcd-1111bbbb', 5.1, {
      decision: {
        state: 'reference',
        reference: { role: 'baseline', name: 'baseline', pr: null },
        decided_at_minutes: 30,
        min_improvement: 0.03,
        evidence: ['stopped: no open decision needs it'],
        gpu_minutes_used: 240,
      },
    } as Partial<CandidateObservation>);
    const first = recordReferenceLocally({
      experiment: EXPERIMENT,
      recordText: null,
      seen: seen(stoppedObs, 999),
    });
    expect(first.record.reference_runs).toEqual([
      expect.objectContaining({
        of: 'baseline',
        run_name: 'topo-x-baseline-0123abcd-1111bbbb',
        job_id: '31',
        gpu_minutes: 240,
        ended: 'stopped',
        candidates: ['more-workers'],
        recorded_at: '2026-12-06T13:00:00Z',
      }),
    ]);
    expect(recordProblems(first.record)).toEqual([]);
    // the runs the record holds are untouched: a reference job is never the best's own run
    expect(first.record.runs).toEqual([]);
    const text = first.files[JSON_PATH] as string;
    const again = recordReferenceLocally({
      experiment: EXPERIMENT,
      recordText: text,
      seen: { ...seen(stoppedObs, 999), at: '2026-12-06T14:00:00Z' },
    });
    expect(again.unchanged).toBe(true);
  });
  it("charges Slurm's allocation when its comment has no figure", () => {
    const r = recordReferenceLocally({ experiment: EXPERIMENT, recordText: null, seen: seen(null, 120.4) });
    expect(r.record.reference_runs?.[0]?.gpu_minutes).toBe(120);
  });
});
