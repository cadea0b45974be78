// The monitor action's job summary input from a pass: every experiment (even one without
// candidates), its slots, its candidates in queue order (request time, then the older PR).
import { describe, expect, it } from 'vitest';
import type { MonitorExperiment } from '../../../src/monitor/ports.js';
import type { CandidateReport } from '../../../src/monitor/report.js';
import { monitorSummaryInput } from '../../../src/monitor/summary.js';
import { renderMonitorSummary } from '../../../src/report/monitor-summary.js';
import type { CandidateView } from '../../../src/report/pr-comment.js';
import type { Experiment } from '../../../src/types/generated/experiment.js';

const experiment = (id: string, maxParallel?: number): Experiment => ({
  experiment_id: id,
  cluster: 'local',
  base_topology: '8gpu_64rollouts',
  fixed_inputs: { deploy: 'd', driver: 'v' },
  ...(maxParallel ? { max_parallel: maxParallel } : {}),
});

function outcome(experimentId: string, candidate: string, pr: number, state: CandidateView['state']) {
  const runName = `topo-${experimentId}-${candidate}-0123abcd-00000000`;
  const view: CandidateView = {
    experimentId,
    candidate,
    runName,
    state,
    jobId: state === 'queued' ? null : '7',
    slurmState: state === 'queued' ? null : 'RUNNING',
    timeline: [],
    observation: { run_name: runName, verdict: { state: 'warming', evidence: [] }, stable_metrics: {} },
  };
  return {
    experimentId,
    candidate,
    runName,
    pr,
    state,
    verdict: 'warming',
    changed: false,
    view,
  } as CandidateReport;
}

describe('monitorSummaryInput', () => {
  it('lists every experiment with its slots and its candidates by request time', () => {
    const a = outcome('exp-a', 'late', 3, 'queued');
    const b = outcome('exp-a', 'early', 9, 'queued');
    const c = outcome('exp-a', 'running', 5, 'warming');
    const experiments: MonitorExperiment[] = [
      {
        experiment: experiment('exp-a', 2),
        timeScale: 1,
        candidates: [
          {
            candidate: 'late',
            runName: a.runName,
            pr: 3,
            headSha: 'x',
            labels: [],
            requested: true,
            requestedAt: 300,
          },
          {
            candidate: 'early',
            runName: b.runName,
            pr: 9,
            headSha: 'x',
            labels: [],
            requested: true,
            requestedAt: 100,
          },
          {
            candidate: 'running',
            runName: c.runName,
            pr: 5,
            headSha: 'x',
            labels: [],
            requested: true,
            requestedAt: 50,
          },
        ],
      },
      { experiment: experiment('exp-b'), timeScale: 1, candidates: [] },
    ];
    const input = monitorSummaryInput(experiments, {
      candidates: [a, b, c],
      errors: ['exp-c: Slurm: down'],
      warnings: [],
    });
    expect(input.experiments.map((e) => [e.id, e.maxParallel, e.candidates.map((x) => x.pr)])).toEqual([
      ['exp-a', 2, [5, 9, 3]],
      ['exp-b', 3, []],
    ]);
    const text = renderMonitorSummary({ ...input, api: { reads: 4, writes: 0 } });
    expect(text).toContain('Slots: **1 of 2** in use · queue: `early` (#9), `late` (#3)');
    expect(text).toContain('### Experiment `exp-b`');
    expect(text).toContain('GitHub API this pass: 4 read(s), 0 write(s).');
    expect(text).toContain('- exp-c: Slurm: down');
  });
});
