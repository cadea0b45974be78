// Stage `observe`: telemetry and analysis per run. For each experiment one query per quantity over
// the jobs that have run (the judge's one telemetry read, src/judge/telemetry.ts), then each judged
// candidate's run observed by the judge as of now or its end (src/judge/observe.ts), and the memory
// of its last pass read back from its comment (the verdict and the decision it wrote). Reads only.
import { observeRunOf, type RunToJudge } from '../judge/observe.js';
import { type ExperimentTelemetry, jobsWindow, readTelemetry, seriesOf } from '../judge/telemetry.js';
import { parseObservationBlock } from '../report/observation-block.js';
import { experimentSelector } from '../telemetry/queries.js';
import { readClock } from './clock.js';
import type { MonitorPorts } from './ports.js';
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
  const started = e.candidates.filter((p) => p.inPass).flatMap((p) => (p.job ? [p.job] : []));
  const window = jobsWindow(started, e.clock.evalTs, e.clock.scrape);
  if (!window) return undefined;
  return readTelemetry(e.exp.prometheus ?? ports.prometheus, experimentSelector(e.id), window, {
    timeScale: e.exp.timeScale,
    scrapeSeconds: e.clock.scrape,
  });
}

/** The run as the judge reads it: its job, its series and the experiment's clock. */
function runOf(e: ExperimentPass, { c, job }: CandidatePass, options: PassOptions): RunToJudge {
  const { S, evalTs, scrape, wallMinutes, expectedRollouts } = e.clock;
  return {
    runName: c.runName,
    job: job ?? null,
    series: seriesOf(e.telemetry, c.runName),
    missing: e.telemetry?.missing,
    clock: { nowTs: evalTs, timeScale: S, stepSeconds: scrape, wallMinutes, expectedRollouts },
    topology: c.topology,
    settings: e.exp.experiment.stabilisation,
    unavailable: !!e.unavailable,
    ...(options.telemetryDeadlineMinutes !== undefined
      ? { telemetryDeadlineMinutes: options.telemetryDeadlineMinutes }
      : {}),
  };
}

/** The run observed by the judge, and the comment its last pass wrote. */
async function observeCandidate(
  ports: MonitorPorts,
  e: ExperimentPass,
  p: CandidatePass,
  options: PassOptions,
): Promise<void> {
  const run = runOf(e, p, options);
  const { analysis, ended } = observeRunOf(run);
  // The comment is the durable memory of the last pass (its verdict, its decision).
  const current = await ports.github.readComment(p.c.pr, p.c.candidate);
  const previous = current ? parseObservationBlock(current) : undefined;
  p.observed = { run, analysis, current, previous, ended };
  keepLastLiveVerdict(p);
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
