// The record's reference jobs (issue 38 item 1): each job of the current best run beside a round's
// candidates is recorded as a run of its own with the GPU-minutes it held, and the between-run term a
// recorded reference carries is estimated from the record's repeated runs of one topology.
import { describe, expect, it } from 'vitest';
import { bestRun } from '../../../src/record/model.js';
import {
  applyReferenceRun,
  BETWEEN_RUN_MIN_DF,
  betweenRunOf,
  type ReferenceRun,
  referenceGpuMinutes,
} from '../../../src/record/reference-runs.js';
import { renderRecordMarkdown } from '../../../src/record/render.js';
import { recordProblems } from '../../../src/record/validate.js';
import type { ExperimentRecord } from '../../../src/types/generated/record.js';
import { exampleRecord } from '../../fixtures/record/example.js';
import { repoRoot } from '../../support/run-action.js';

const record = (): ExperimentRecord => exampleRecord(repoRoot);

/** A reference job of the example's best, measured at `value` s/rollout with a ±`half` (relative) interval. */
function job(i: number, value: number | null, gpuMinutes: number | null = 40, half = 0.002): ReferenceRun {
  const best = bestRun(record());
  return {
    of: best?.name ?? 'none',
    run_name: `${best?.run_name}-0000000${i}`,
    job_id: String(100 + i),
    pull_request: 10 + i,
    gpu_minutes: gpuMinutes,
    ended: 'decided',
    candidates: [`c${i}`],
    verdict:
      value === null
        ? null
        : {
            state: 'stable',
            evidence: [],
            projected_full_run: { value, low: value * (1 - half), high: value * (1 + half) },
          },
  };
}

const bestValue = () => bestRun(record())?.verdict?.projected_full_run?.value as number;

const withJobs = (runs: ReferenceRun[], from = record()) => runs.reduce(applyReferenceRun, from);

describe('the record’s reference runs', () => {
  it('are keyed by run name: recorded twice is recorded once, in any order, and validate', () => {
    const [a, b] = [job(1, 4), job(2, 4.1)];
    const once = withJobs([a, b]);
    expect(withJobs([a, b, a, b])).toEqual(once);
    expect(
      withJobs([b, a])
        .reference_runs?.map((r) => r.run_name)
        .sort(),
    ).toEqual(once.reference_runs?.map((r) => r.run_name).sort());
    expect(recordProblems(once)).toEqual([]);
  });

  it('keep what an earlier entry held when a later one leaves it out', () => {
    const first = job(1, 4);
    const { verdict: _v, ...later } = { ...first, ended: 'closed' };
    const r = withJobs([first, later]);
    expect(r.reference_runs).toHaveLength(1);
    expect(r.reference_runs?.[0]).toMatchObject({ ended: 'closed', verdict: first.verdict });
  });

  it('are charged together to the experiment, a job of unknown cost counting nothing', () => {
    expect(referenceGpuMinutes(record())).toBe(0);
    expect(referenceGpuMinutes(withJobs([job(1, 4, 38.5), job(2, 4, null), job(3, 4, 41.5)]))).toBe(80);
  });

  it('show in the record’s Markdown with their cost and the candidates decided against them', () => {
    const md = renderRecordMarkdown(withJobs([job(1, 4, 38.5), job(2, 4, 41.5)]));
    expect(md).toContain('## Reference jobs');
    expect(md).toContain('80 GPU-minutes, charged to the experiment');
    expect(md).toMatch(/\| `[^`]+-00000001` \| `renderer-split` \| #11 \| `c1` \| 39 \| decided \|/);
    expect(renderRecordMarkdown(record())).not.toContain('## Reference jobs');
  });
});

describe('the between-run term of a recorded reference', () => {
  it('is not estimated (the decision states it as assumed) below its minimum degrees of freedom', () => {
    expect(betweenRunOf(record())).toBeNull();
    const v = bestValue();
    const runs = Array.from({ length: BETWEEN_RUN_MIN_DF - 1 }, (_, i) =>
      job(i + 1, v * (1 + 0.03 * (i + 1))),
    );
    expect(betweenRunOf(withJobs(runs))).toBeNull();
  });

  it('is the spread of one topology’s repeated runs beyond their own intervals, and says so', () => {
    const v = bestValue();
    // the best's recorded run and three reference jobs of it: log values about ±3% apart
    const runs = [0.97, 1.03, 1.0].map((f, i) => job(i + 1, v * f));
    const between = betweenRunOf(withJobs(runs));
    expect(between).not.toBeNull();
    expect(between?.logSd).toBeGreaterThan(0.015);
    expect(between?.logSd).toBeLessThan(0.04);
    expect(between?.text).toMatch(
      /^estimated from 4 runs of 1 topology in the record \(3 degrees of freedom\)/,
    );
  });

  it('is never negative when the runs’ own intervals explain their spread', () => {
    const v = bestValue();
    const runs = [0.999, 1.001, 1.0].map((f, i) => job(i + 1, v * f, 40, 0.05));
    expect(betweenRunOf(withJobs(runs))?.logSd).toBe(0);
  });

  it('reads no run without a value and no failed run', () => {
    const v = bestValue();
    const runs = [job(1, null), job(2, v * 1.5), job(3, null)];
    expect(betweenRunOf(withJobs(runs))).toBeNull();
    const failed = record();
    for (const r of failed.runs) r.status = 'failed';
    expect(
      betweenRunOf(
        withJobs(
          [1, 2, 3].map((i) => job(i, v)),
          failed,
        ),
      ),
    ).toBeNull();
  });
});
