// Stage `read`: one snapshot of what the pass works from. The default branch's experiments with
// their candidates (the pull requests' Requests, the record's references: ports.experiments), then
// every job of each experiment (one Slurm call each) and, for each Request, what its lifecycle
// says it needs (src/lifecycle/model.ts phaseOf). No decision and no write: `readOn` returns
// ReadResult, and state.ts storeRead (storeExperiments for the list) puts it in read's sections.
import { defaultRunEndMinutes } from '../analysis/detector.js';
import { slurmTimeToMinutes } from '../analysis/observe.js';
import { SCRAPE_INTERVAL_S, TIMELINE } from '../catalog/alpasim.js';
import { jobForRun, recordedJobIds } from '../lifecycle/jobs.js';
import { phaseOf } from '../lifecycle/model.js';
import { ranAndEnded } from '../report/state-label.js';
import { experimentSettings } from '../topology/settings.js';
import type { MonitorCandidate, MonitorExperiment, MonitorJob, MonitorPorts } from './ports.js';
import {
  type CandidatePass,
  ClusterUnreachable,
  type ExperimentPass,
  eachExperiment,
  type PassClock,
  type PassOptions,
  type PassState,
  type ReadResult,
  storeExperiments,
  storeRead,
} from './state.js';

export async function read(state: PassState, ports: MonitorPorts): Promise<void> {
  const experiments = await ports.experiments();
  storeExperiments(
    state,
    experiments.map((exp) => experimentPass(exp, clockOf(exp, state.options, ports.now()))),
  );
  await readJobs(state, ports);
}

/** Every job of each experiment and the candidates' jobs and phases (the Slurm half of `read`). */
export async function readJobs(state: PassState, ports: MonitorPorts): Promise<void> {
  await eachExperiment(state, 'read', async (e) => storeRead(e, await readOn(ports, e)));
}

/** The Slurm half of `read` for one experiment: its jobs, how accounting answered, its candidates. */
export async function readOn(ports: MonitorPorts, e: ExperimentPass): Promise<ReadResult> {
  // a job whose comment names no Request stands for a run only when a Run record names it (invariant 21)
  const recorded = recordedJobIds(e.exp.candidates.flatMap((c) => [c.run, c.outcome]));
  const jobs = await ports.slurm.jobs(e.id, recorded).catch((err: Error) => {
    throw new ClusterUnreachable(`Slurm: ${err.message}`);
  });
  const accounting = ports.slurm.accounting?.(e.id) ?? null;
  // a warning, not an error: the pass goes on from the controller's listing (passReport's warnings)
  const accountingUnreachable = ports.slurm.accountingProblem?.(e.id) ?? null;
  const jobByRun = jobsByRunName(jobs);
  const conflicts = ports.slurm.conflicts?.(e.id) ?? [];
  const candidates = e.exp.candidates.map((c) => {
    const p = candidatePass(c, jobByRun.get(c.runName));
    const theirs = conflicts.filter((j) => j.name === c.runName);
    return theirs.length ? { ...p, conflicts: theirs } : p;
  });
  return { jobs, accounting, accountingUnreachable, candidates };
}

export function experimentPass(exp: MonitorExperiment, clock: PassClock): ExperimentPass {
  return {
    exp,
    id: exp.experiment.experiment_id,
    clock,
    jobs: [],
    candidates: [],
    unavailable: null,
    reference: null,
    leader: null,
    queue: { order: [], free: 0 },
    errors: [],
  };
}

/** The experiment's clock: evaluations aligned to the tick, `lag` behind now. */
export function clockOf(exp: MonitorExperiment, options: PassOptions, now: number): PassClock {
  const scrape = exp.scrapeSeconds ?? SCRAPE_INTERVAL_S;
  const tick = options.tickSeconds ?? 60;
  const lag = options.lagSeconds ?? 2 * scrape;
  const fi = exp.experiment.fixed_inputs;
  return {
    S: exp.timeScale,
    scrape,
    evalTs: Math.floor((now - lag) / tick) * tick,
    wallMinutes:
      (fi.slurm?.time ? slurmTimeToMinutes(fi.slurm.time) : null) ??
      defaultRunEndMinutes() + TIMELINE.startupMinutes,
    expectedRollouts: experimentSettings(exp.experiment).expectedRollouts,
  };
}

/** The job that stands for each run name (src/lifecycle/jobs.ts jobForRun). */
export function jobsByRunName(jobs: readonly MonitorJob[]): Map<string, MonitorJob> {
  const byRun = new Map<string, MonitorJob>();
  for (const name of new Set(jobs.map((j) => j.name))) {
    const job = jobForRun(jobs, name, (j) => ({ id: j.jobId, name: j.name, status: j.status }));
    if (job) byRun.set(name, job);
  }
  return byRun;
}

/**
 * A candidate with its job and its Request's phase: a superseded or lost Request, and a consumed
 * one without a job, are not judged; a queued one is `requested`; a consumed one is judged (while
 * its job's comment is not final) but never submitted.
 */
export function candidatePass(c: MonitorCandidate, job: MonitorJob | undefined): CandidatePass {
  if (!c.request) return { c, job, inPass: true };
  const phase = phaseOf({
    request: c.request,
    run: c.run,
    outcome: c.outcome,
    job: job ? { id: job.jobId, status: job.status } : null,
    headSha: c.currentHeadSha ?? c.headSha,
  });
  if (phase.phase === 'supersede' || phase.phase === 'lost') return { c, job, phase, inPass: false };
  if (phase.phase !== 'done') return { c: { ...c, requested: true }, job, phase, inPass: true };
  const consumedWithoutJob = !job || ['superseded', 'cancelled', 'lost'].includes(phase.outcome.kind);
  const remembered = !job && ranAndEnded(phase.outcome.kind);
  return {
    c: { ...c, requested: false },
    job,
    phase,
    inPass: !consumedWithoutJob,
    ...(remembered ? { remembered } : {}),
  };
}
