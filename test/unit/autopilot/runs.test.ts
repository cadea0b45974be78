// The record's runs as the autopilot counts them: the baseline as round 0, the bot's rounds from
// their hypothesis, people's candidates in none, decisions and GPU-hours.
import { describe, expect, it } from 'vitest';
import {
  mergeRuns,
  recordedGpuHours,
  roundHypothesis,
  roundOf,
  runsFromRecord,
} from '../../../src/autopilot/runs.js';
import { createRecord } from '../../../src/record/model.js';
import { parseRecord } from '../../../src/record/validate.js';
import type { ExperimentRecord, RecordRun } from '../../../src/types/generated/record.js';
import { EXPERIMENT } from '../../fixtures/record/scenario.js';

const run = (name: string, more: Partial<RecordRun>): RecordRun => ({
  name,
  status: 'rejected',
  decision: { outcome: 'reject' },
  verdict: {
    state: 'stable',
    minutes_of_data: 30,
    projected_full_run: { value: 10, low: 9.8, high: 10.2 },
  } as never,
  ...more,
});
const record = (runs: RecordRun[]) => ({ experiment_id: 'e', runs }) as unknown as ExperimentRecord;

describe('runs from the record', () => {
  it('round markers round-trip and never stack', () => {
    expect(roundOf(roundHypothesis(3, 'driver is the bottleneck'))).toBe(3);
    expect(roundHypothesis(4, roundHypothesis(3, 'x'))).toBe('Autopilot round 4: x');
    expect(roundOf('driver is the bottleneck')).toBeNull();
  });

  it("reads the baseline, the bot rounds and a person's candidate with their decisions and GPU-hours", () => {
    const runs = runsFromRecord(
      record([
        run('baseline', { status: 'accepted', decision: { outcome: 'accept' } }),
        run('a', {
          parent: 'baseline',
          hypothesis: roundHypothesis(1, 'x'),
          status: 'accepted',
          pull_request: { number: 5, merge_commit_sha: 'abc' },
        }),
        run('b', {
          parent: 'baseline',
          hypothesis: roundHypothesis(1, 'y'),
          monitor_decision: {
            state: 'worse',
            reference: { role: 'baseline', name: 'baseline', pr: null },
            min_improvement: 0.02,
            evidence: [],
          },
          pull_request: { number: 6 },
        }),
        run('mine', {
          parent: 'baseline',
          hypothesis: 'my idea',
          status: 'failed',
          pull_request: { number: 7 },
        }),
        run('live', { parent: 'a', hypothesis: roundHypothesis(2, 'z'), status: 'running' }),
      ]),
      8,
    );
    expect(runs.map((r) => [r.name, r.round, r.origin, r.pull, r.request, r.outcome])).toEqual([
      ['baseline', 0, 'person', 'none', 'ended', 'equivalent'],
      ['a', 1, 'bot', 'merged', 'ended', 'better'],
      ['b', 1, 'bot', 'closed', 'ended', 'worse'],
      ['mine', null, 'person', 'closed', 'ended', 'failed'],
      ['live', 2, 'bot', 'none', 'live', null],
    ]);
    expect(runs[0]?.seconds).toBe(10);
    expect(runs[3]?.seconds).toBeUndefined();
    expect(runs[1]?.gpuHours).toBe(4);
  });

  it('counts a run by its one decision, as the record, comment and check do (an older record: a comparison beside it)', () => {
    // old main kept both judgements of one run and the autopilot read the comparison: `equivalent`
    const text = JSON.stringify({
      ...createRecord(EXPERIMENT),
      runs: [
        { name: 'baseline', status: 'accepted', decision: { outcome: 'accept' } },
        {
          name: 'slow',
          parent: 'baseline',
          status: 'rejected',
          decision: { outcome: 'reject' },
          comparison: { against: 'baseline baseline', outcome: 'indistinguishable' },
          monitor_decision: {
            state: 'worse',
            against: 'baseline baseline',
            min_improvement: 0.02,
            evidence: [],
          },
        },
      ],
    });
    const runs = runsFromRecord(parseRecord(text, 'experiments/x.json'), 8);
    expect(runs.find((r) => r.name === 'slow')?.outcome).toBe('worse');
  });

  it("counts a recorded run's Slurm allocation (the monitor's gpu_minutes_used), not its minutes of data", () => {
    const held = run('held', {
      monitor_decision: { gpu_minutes_used: 1920 } as never,
      run_name: 'topo-e-held-1',
    });
    expect(recordedGpuHours(held, 8)).toBe(32);
    expect(runsFromRecord(record([held]), 8)[0]).toMatchObject({ gpuHours: 32, runName: 'topo-e-held-1' });
  });

  it('a live run replaces the recorded one of its name', () => {
    const recorded = runsFromRecord(record([run('baseline', {}), run('a', { parent: 'baseline' })]), 8);
    const merged = mergeRuns(recorded, [
      { name: 'a', round: 2, origin: 'bot', pull: 'open', request: 'live', outcome: null, gpuHours: 1 },
    ]);
    expect(merged.map((r) => [r.name, r.request])).toEqual([
      ['baseline', 'ended'],
      ['a', 'live'],
    ]);
  });
});
