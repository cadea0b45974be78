// One judgement of an ended pair, whichever surface reads it (issue 39): a baseline and the faster
// `model` of test/integration/cli/team.ts, run to their end on the twin (60x) and recorded
// (test/fixtures/judge/ended-pair.json), replayed through the real Prometheus client. `topo status`
// judges them within their experiment; `topo analyze <model> --against <baseline>` from a directory
// without the experiment judges them from their samples alone. The twin's profiles make the model
// about 24% faster (status: better, -23.3% [-24.2%, -22.4%]). Before, analyze read the pair at a
// silently widened step of 2 s (its 360-minute look-back at step 1 is over Prometheus's 11,000
// points) and its reference only up to the candidate's end: faster-drift-not-ruled-out, -24.2% ±9.7%.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunJob } from '../../../src/judge/job.js';
import type { Experiment } from '../../../src/types/generated/experiment.js';
import { analyzeRun, judgeExperiment } from '../../../src/usecases/analyze-run.js';
import { type RecordedSeries, replayPrometheus } from '../../support/replay-prometheus.js';

const pair = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../fixtures/judge/ended-pair.json'), 'utf8'),
) as {
  timeScale: number;
  experiment: Experiment;
  jobs: RunJob[];
  names: { baseline: string; model: string };
  series: RecordedSeries;
};
const prometheus = replayPrometheus(pair.series, pair.timeScale);
const t = { prometheus, timeScale: pair.timeScale, stepSeconds: 1 };
// a while after both ended
const now = Math.max(...pair.jobs.map((j) => j.endTs ?? 0)) + 600;

async function statusDecision() {
  const { judgements } = await judgeExperiment(t, { experiment: pair.experiment, jobs: pair.jobs }, now);
  return judgements.find((j) => j.observation.run_name === pair.names.model)?.decision;
}

async function analyzeDecision(options: { minutes?: number } = {}) {
  const r = await analyzeRun({
    ...t,
    runName: pair.names.model,
    nowTs: now,
    minutes: options.minutes ?? 360,
    settings: {},
    against: pair.names.baseline,
  });
  return r.judgement.decision;
}

describe('an ended pair judged by status and by analyze --against alone', () => {
  it('status reads the model better than the baseline, as the twin runs it (about 24% faster)', async () => {
    const d = await statusDecision();
    expect(d?.state).toBe('better');
    expect(d?.relative_change?.value).toBeCloseTo(-0.233, 2);
  });

  it('analyze --against reaches the same decision state and interval', async () => {
    const [status, analyze] = [await statusDecision(), await analyzeDecision()];
    expect(analyze?.state).toBe(status?.state);
    expect(analyze?.relative_change).toEqual(status?.relative_change);
  });
});
