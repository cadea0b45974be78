// Stage `observe`: each experiment's runs read by the judge's one read (src/judge/read.ts readRuns:
// one query per quantity over the jobs that have run, each judged candidate's job, topology,
// settings, clock and memory, its last comment) and observed as of now or their end. A run that
// ended and that Slurm forgot keeps its final comment (publish reads it). Reads only: `observeOn`
// returns ObserveResult, and state.ts storeObserved puts it in observe's sections.
import { observeRunOf, type RunToJudge } from '../judge/observe.js';
import { type ExperimentToRead, type ReadPorts, type RunToRead, readRuns } from '../judge/read.js';
import { parseObservationBlock } from '../report/observation-block.js';
import { readClock } from './clock.js';
import type { MonitorPorts } from './ports.js';
import {
  type CandidateObserved,
  type CandidatePass,
  type ExperimentPass,
  eachExperiment,
  type ObserveResult,
  type PassClock,
  type PassOptions,
  type PassState,
  storeObserved,
} from './state.js';

export async function observe(state: PassState, ports: MonitorPorts): Promise<void> {
  await eachExperiment(state, 'observe', async (e) =>
    storeObserved(e, await observeOn(ports, e, state.options)),
  );
}

/** Observes one experiment as read left it: its clock, the judge's read, each candidate's `observed`. */
export async function observeOn(
  ports: MonitorPorts,
  e: ExperimentPass,
  options: PassOptions,
): Promise<ObserveResult> {
  const clock = await readClock(e, ports, options);
  const judged = e.candidates.filter((x) => x.inPass);
  const read = await readRuns(readPorts(ports, e), experimentToRead(e, judged, options, clock), clock.evalTs);
  const candidates = new Map<CandidatePass, CandidateObserved>();
  // Every candidate is observed before any is judged: a live baseline is the others' reference.
  judged.forEach((p, i) => {
    const run = read.runs[i]?.run as RunToJudge;
    const { analysis, ended } = observeRunOf(run);
    candidates.set(p, { run, analysis, ended, current: read.comments.get(p.c.runName) });
  });
  // a run that ended and that Slurm forgot: its final comment keeps it in its pull request's check
  for (const p of e.candidates.filter((x) => x.remembered))
    candidates.set(p, { current: await ports.github.readComment(p.c.pr, p.c.candidate), ended: true });
  // a wrong runner clock is held like an outage: no verdict from it, and the pass reports it
  return { clock, read, candidates, errors: clock.skew ? [`${e.id}: ${clock.skew}`] : [] };
}

/** The experiment and its candidates in the pass, as the judge's read takes them. */
export function experimentToRead(
  e: ExperimentPass,
  candidates: readonly CandidatePass[],
  options: PassOptions,
  clock: PassClock = e.clock,
): ExperimentToRead {
  return {
    id: e.id,
    experiment: e.exp.experiment,
    baseline: e.exp.baseline ?? null,
    best: e.exp.best ?? null,
    betweenRun: e.exp.betweenRun ?? null,
    ...(e.exp.gpusPerNode !== undefined ? { gpusPerNode: e.exp.gpusPerNode } : {}),
    timeScale: clock.S,
    stepSeconds: clock.scrape,
    runs: candidates.map(runToRead),
    ...(options.telemetryDeadlineMinutes !== undefined
      ? { telemetryDeadlineMinutes: options.telemetryDeadlineMinutes }
      : {}),
    held: clock.skew ?? null,
  };
}

/** A candidate of the pass as a run to read: its job (none yet: null), its topology. */
export function runToRead({ c, job }: CandidatePass): RunToRead {
  return { runName: c.runName, candidate: c, job: job ?? null, topology: c.topology };
}

/** The memory of a candidate's last look: its comment (the durable memory of the last pass). */
function readPorts(ports: MonitorPorts, e: ExperimentPass): ReadPorts {
  return {
    prometheus: e.exp.prometheus ?? ports.prometheus,
    memory: async (r) => {
      const text = await ports.github.readComment(r.candidate.pr, r.candidate.candidate);
      return { observation: (text ? parseObservationBlock(text) : undefined) ?? null, text };
    },
  };
}
