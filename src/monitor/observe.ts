// Stage `observe`: telemetry and analysis per run. For each experiment one query per quantity over
// the jobs that have run (src/telemetry/queries.ts), then each judged candidate's run analysed as of
// now or its end (src/analysis/observe.ts observeRun), and the memory of its last pass read back
// from its comment (the verdict and the decision it wrote). Reads only.
import { observeRun, type RunAnalysis } from '../analysis/observe.js';
import type { LabeledSeries } from '../analysis/series.js';
import { TIMELINE } from '../catalog/alpasim.js';
import { parseObservationBlock } from '../report/observation-block.js';
import { isLive } from '../slurm/types.js';
import { type ExperimentTelemetry, experimentSelector, fetchTelemetry } from '../telemetry/queries.js';
import { readClock } from './clock.js';
import type { MonitorJob, MonitorPorts } from './ports.js';
import {
  type CandidatePass,
  type ExperimentPass,
  eachExperiment,
  type PassOptions,
  type PassState,
} from './state.js';

export async function observe(state: PassState, ports: MonitorPorts): Promise<void> {
  await eachExperiment(state, 'observe', async (e) => {
    await readClock(e, ports, state.options);
    e.telemetry = await experimentTelemetry(ports, e);
    const error = e.telemetry?.errors[0];
    e.unavailable = error ? `Prometheus: ${error.quantity}: ${error.message}` : null;
    // a wrong runner clock is held like an outage: no verdict from it, and the pass reports it
    if (e.clock.skew) {
      e.unavailable = e.clock.skew;
      e.errors.push(`${e.id}: ${e.clock.skew}`);
    }
    // Every candidate is observed before any is judged: a live baseline is the others' reference.
    for (const p of e.candidates.filter((x) => x.inPass)) await observeCandidate(ports, e, p, state.options);
    // a run that ended and that Slurm forgot: its final comment keeps it in its pull request's check
    for (const p of e.candidates.filter((x) => x.remembered))
      p.observed = { current: await ports.github.readComment(p.c.pr, p.c.candidate), ended: true };
  });
}

/** Metrics: one query per quantity for the whole experiment, over the jobs that have run. */
async function experimentTelemetry(
  ports: MonitorPorts,
  e: ExperimentPass,
): Promise<ExperimentTelemetry | undefined> {
  const started = e.candidates
    .filter((p) => p.inPass)
    .map((p) => p.job)
    .filter((j): j is MonitorJob => !!j?.startTs);
  if (!started.length) return undefined;
  const { scrape, evalTs } = e.clock;
  const start = Math.floor(Math.min(...started.map((j) => j.startTs as number)) / scrape) * scrape;
  return fetchTelemetry(
    e.exp.prometheus ?? ports.prometheus,
    experimentSelector(e.id),
    { start, end: Math.max(evalTs, start), stepSeconds: scrape },
    { timeScale: e.exp.timeScale, scrapeSeconds: scrape },
  );
}

/** The run's analysis as of now (or its end), and the comment its last pass wrote. */
async function observeCandidate(
  ports: MonitorPorts,
  e: ExperimentPass,
  p: CandidatePass,
  options: PassOptions,
): Promise<void> {
  const { job, c } = p;
  const ended = job !== undefined && !isLive(job.state);
  const analysis = job?.startTs ? analyse(e, p, job, job.startTs, options) : undefined;
  // The comment is the durable memory of the last pass (its verdict, its decision).
  const current = await ports.github.readComment(c.pr, c.candidate);
  const previous = current ? parseObservationBlock(current) : undefined;
  p.observed = { analysis, current, previous, ended };
  keepLastLiveVerdict(p);
}

/** The run's series from the experiment-wide telemetry (already grouped by run_name). */
function seriesOf(
  t: ExperimentTelemetry | undefined,
  runName: string,
): Partial<Record<string, LabeledSeries[]>> {
  return (t?.byRun.get(runName) ?? {}) as Partial<Record<string, LabeledSeries[]>>;
}

function analyse(
  e: ExperimentPass,
  { c }: CandidatePass,
  job: MonitorJob,
  startTs: number,
  options: PassOptions,
): RunAnalysis {
  const { S, evalTs, scrape, wallMinutes, expectedRollouts } = e.clock;
  const live = isLive(job.state);
  const nowTs = job.endTs && !live ? Math.min(evalTs, job.endTs) : evalTs;
  const analysis = observeRun({
    runName: c.runName,
    series: seriesOf(e.telemetry, c.runName),
    timeScale: S,
    nowTs,
    stepSeconds: scrape,
    jobStartTs: startTs,
    wallMinutes,
    expectedRollouts,
    topology: c.topology,
    settings: e.exp.experiment.stabilisation,
    missing: e.telemetry?.missing,
    ended: !live,
  });
  // no telemetry at all: starting for a while, then a failure of its own
  const minutesRunning = ((nowTs - startTs) * S) / 60;
  const deadline = options.telemetryDeadlineMinutes ?? 3 * TIMELINE.startupMinutes;
  if (!e.unavailable && analysis.startTs === null && (!live || minutesRunning >= deadline) && !job.failure)
    analysis.observation.failure = {
      kind: 'no-telemetry',
      message: `no metrics for run_name="${c.runName}" ${Math.round(minutesRunning)} run-minutes after the job started`,
    };
  return analysis;
}

const isStable = (v: string | undefined) => v === 'stable' || v === 'cyclic';

/** A run that ended keeps the verdict its last live pass reached (a window rule may flip at the cut). */
function keepLastLiveVerdict({ c, observed }: CandidatePass): void {
  const { analysis, ended, previous } = observed ?? { ended: false };
  if (
    !analysis ||
    !ended ||
    previous?.run_name !== c.runName ||
    !isStable(previous.verdict.state) ||
    isStable(analysis.observation.verdict.state)
  )
    return;
  const note = 'verdict of the last pass before the run ended';
  const evidence = previous.verdict.evidence.includes(note)
    ? previous.verdict.evidence
    : [...previous.verdict.evidence, note];
  analysis.observation.verdict = { ...previous.verdict, evidence };
}
