// The one typed state a monitor pass carries from stage to stage. Each stage's work returns its
// typed result (ReadResult, ObserveResult, DecideResult, AutopilotResult, ActResult, PublishResult)
// and a store… function here, the only writer, puts it in the stage's own section of every
// candidate (`observed`, `decided`, `acted`, `published`) and of every experiment; a stage reads
// only what earlier stages left, and one run again overwrites its section (the watch loop's looks
// reuse one state). Pure data, small pure helpers and the store functions.
import type { RunAnalysis } from '../analysis/observe.js';
import type { PilotAction } from '../autopilot/core.js';
import type { Reference } from '../judge/decide.js';
import type { RunToJudge } from '../judge/observe.js';
import type { ReadExperiment } from '../judge/read.js';
import type { ReferenceMode } from '../judge/reference.js';
import type { Phase } from '../lifecycle/model.js';
import type { CandidateView } from '../report/pr-comment.js';
import type { ExperimentTelemetry } from '../telemetry/queries.js';
import type { MonitorCandidate, MonitorExperiment, MonitorJob, MonitorPorts } from './ports.js';

export interface PassOptions {
  /** Evaluations are aligned to this many seconds, so passes inside one tick write nothing new. */
  tickSeconds?: number;
  /** Samples newer than this are not read (Prometheus may still be ingesting them). */
  lagSeconds?: number;
  /** Run-minutes of RUNNING without any telemetry before the candidate fails with no-telemetry. */
  telemetryDeadlineMinutes?: number;
  /**
   * Write every comment whose content changed now, whatever comment_interval_minutes says (the
   * pass a person asked for: `/topo status`). Unchanged comments are still not written.
   */
  refresh?: boolean;
}

/** The experiment's clock for this pass (read stage). */
export interface PassClock {
  /** Time compression (1 for real AlpaSim). */
  S: number;
  /** Prometheus scrape interval, seconds. */
  scrape: number;
  /** The evaluation time (unix seconds), aligned to the tick. */
  evalTs: number;
  /** The job's wall time in job-minutes. */
  wallMinutes: number;
  expectedRollouts: number | null;
  /** Whose now `evalTs` comes from (./clock.ts): Prometheus's once a run is counted, else the runner's. */
  source?: 'prometheus' | 'runner';
  /** Why the runner's clock is not trusted this pass (off Prometheus's or Slurm's): nothing is judged. */
  skew?: string;
}

/** What the candidates of a pass are decided against (src/judge/decide.ts). */
export type { Reference };

/** What the lifecycle of a candidate's Request asks this pass to do besides judging it (decide). */
export type LifecycleIntent =
  | { kind: 'supersede'; jobId: string | null }
  | { kind: 'lost'; jobId: string }
  /** Consumed, but Slurm still runs the job its Outcome ended. */
  | { kind: 'cancel'; jobId: string };

/** One candidate through the pass. */
export interface CandidatePass {
  /** As read; `requested` as its Request's phase says (read). */
  c: MonitorCandidate;
  /** The job that stands for its run name (read; act sets the one it submits). */
  job?: MonitorJob;
  /**
   * Jobs under its run name that are not its Request's (read; src/lifecycle/jobs.ts isOwnedRun):
   * shown on its comment, never adopted, judged, cancelled or counted against a slot.
   */
  conflicts?: MonitorJob[];
  /** Its Request's lifecycle phase (read; none without a Request). */
  phase?: Phase;
  /** Judged this pass: not superseded, lost, or consumed without a job (read). */
  inPass: boolean;
  /**
   * Its run ran and ended, and Slurm forgot the job (read): not judged, but its final comment
   * (observe reads it) keeps it in its pull request's check and label (publish).
   */
  remembered?: boolean;
  observed?: {
    /** The run as the judge read it (src/judge/read.ts): its job, series, clock and memory. */
    run?: RunToJudge;
    analysis?: RunAnalysis;
    /** The sticky comment as it stands (its observation is the run's memory). */
    current?: string;
    ended: boolean;
  };
  decided?: {
    /** Its view (state machine, observation, comparisons, the Decision); null: not asked to run. */
    view: CandidateView | null;
    /** Why to stop its live job now (stop_when_decided, stop_when_stable), or null. */
    stop: string | null;
    lifecycle?: LifecycleIntent;
  };
  acted?: {
    /** The job id submitted this pass. */
    submitted?: string;
    /** The job id cancelled this pass on a stop. */
    cancelled?: string;
    /** Left the pass (superseded, lost, refused): not published; its pull request's label is recomputed. */
    left?: boolean;
  };
  published?: { changed: boolean };
}

/** The round's reference job in a pass (src/monitor/reference-job.ts planReferenceJob). */
export interface ReferenceJobPlan {
  mode: ReferenceMode;
  /** Why an experiment that says `beside` is decided against its recorded run (max_parallel 1). */
  note: string | null;
  /** The reference job the candidates are decided against this pass (null: the recorded run). */
  job: CandidatePass | null;
  /** Whether an open decision still needs the reference, and who or why not. */
  need: { needed: boolean; reason: string };
  /** Live reference jobs to stop, with why (not needed, a duplicate, a best that changed). */
  stops: Array<{ p: CandidatePass; reason: string }>;
  /** A reference Request to make: in this pull request at this head (its earliest open candidate's). */
  request: { pr: number; headSha: string } | null;
}

/** One experiment through the pass. */
export interface ExperimentPass {
  exp: MonitorExperiment;
  id: string;
  clock: PassClock;
  /** Every job of the experiment (read). */
  jobs: MonitorJob[];
  /**
   * What sacct said when the cluster's accounting did not answer this pass (slurmdbd down): live
   * jobs come from the controller, and a run whose ended job it forgot is unknown, not lost (read).
   */
  accountingUnreachable?: string;
  /** Where the listing read ended jobs from (src/slurm JobListing.accounting), when the port says. */
  accounting?: 'on' | 'off' | 'unreachable';
  candidates: CandidatePass[];
  /** What the judge read of the experiment's runs (observe: src/judge/read.ts). */
  read?: ReadExperiment;
  /** Experiment-wide metrics, one query per quantity (observe). */
  telemetry?: ExperimentTelemetry;
  /** An outage: with any quantity unreadable, nothing is judged, failed, stopped or recorded (observe). */
  unavailable: string | null;
  /** The reference and the leading candidate (decide). */
  reference: Reference | null;
  leader: Reference | null;
  /** The round's reference job: the one beside the candidates, whether it is needed, a Request to make (decide). */
  referenceJob?: ReferenceJobPlan;
  /** Candidates waiting for a slot, in the order they are served, and the slots free (decide). */
  queue: { order: CandidatePass[]; free: number };
  /** What the autopilot stage did (its plan's actions) or why it waits. */
  autopilot?: { actions: PilotAction[]; waiting: string | null };
  /**
   * What act carries out (ActPlan): decide makes it from its own sections, each policy stage after
   * it (the autopilot, a look's stops-only) returns the plan it leaves, and act reads the last.
   */
  plan?: ActPlan;
  /** What act did beyond each candidate's `acted` (act): see ActedExperiment. */
  acted?: ActedExperiment;
  /** Each judged candidate's view as publish wrote it (its comment's plan: a held note added) (publish). */
  published?: { readonly views: ReadonlyMap<CandidatePass, CandidateView> };
  /** The stage that failed for this experiment: its candidates are left as they were. */
  failed?: { stage: string; message: string; clusterUnreachable: boolean };
  /** Its errors, in the order they happened. */
  errors: string[];
}

/** What act carries out for an experiment: decide's plan, as each policy stage after decide returns it. */
export interface ActPlan {
  /** Candidates to submit while slots are free, in order, and the slots free. */
  readonly queue: { readonly order: readonly CandidatePass[]; readonly free: number };
  /** Live jobs to stop, with why. */
  readonly stops: ReadonlyMap<CandidatePass, string>;
  /** What each Request's lifecycle asks besides judging it. */
  readonly lifecycle: ReadonlyMap<CandidatePass, LifecycleIntent>;
  /** The round's reference Request to make, in this pull request at this head. */
  readonly request: { readonly pr: number; readonly headSha: string } | null;
  /** Runs whose Outcome a policy recorded this pass (the autopilot's stops): publish records none for them. */
  readonly recorded: ReadonlySet<CandidatePass>;
}

/** What decide leaves of one candidate (its `decided`). */
export type CandidateDecided = NonNullable<CandidatePass['decided']>;

/** The plan from decide's parts: its queue, each candidate's stop and lifecycle, the reference Request. */
export function planOf(
  candidates: readonly CandidatePass[],
  decided: (p: CandidatePass) => CandidateDecided | undefined,
  queue: ActPlan['queue'],
  request: ActPlan['request'],
): ActPlan {
  const stops = candidates.flatMap((p): Array<[CandidatePass, string]> => {
    const stop = decided(p)?.stop;
    return stop ? [[p, stop]] : [];
  });
  const lifecycle = candidates.flatMap((p): Array<[CandidatePass, LifecycleIntent]> => {
    const intent = decided(p)?.lifecycle;
    return intent ? [[p, intent]] : [];
  });
  return { queue, stops: new Map(stops), lifecycle: new Map(lifecycle), request, recorded: new Set() };
}

/** The plan decide leaves in its own sections: its queue, each candidate's stop and lifecycle, the reference Request. */
export function decidedPlan(e: ExperimentPass): ActPlan {
  return planOf(e.candidates, (p) => p.decided, e.queue, e.referenceJob?.request ?? null);
}

/**
 * Decide's result for one experiment: the reference and the leader, each candidate's `decided`
 * (view, stop, lifecycle intent), the round's reference job, the queue, and the plan from them.
 */
export interface DecideResult {
  readonly reference: Reference | null;
  readonly leader: Reference | null;
  readonly candidates: ReadonlyMap<CandidatePass, CandidateDecided>;
  readonly referenceJob: ReferenceJobPlan;
  readonly queue: ExperimentPass['queue'];
  readonly plan: ActPlan;
}

/** Puts decide's result in its sections: the experiment's and each candidate's `decided`. */
export function storeDecided(e: ExperimentPass, r: DecideResult): void {
  e.reference = r.reference;
  e.leader = r.leader;
  for (const p of e.candidates) p.decided = r.candidates.get(p);
  e.referenceJob = r.referenceJob;
  e.queue = r.queue;
  e.plan = r.plan; // what act carries out, unless a policy stage after decide returns another
}

/** The plan act carries out: the last policy stage's, else decide's. */
export function actPlan(e: ExperimentPass): ActPlan {
  return e.plan ?? decidedPlan(e);
}

/** Puts the experiments read this pass in the pass (read). */
export function storeExperiments(state: PassState, experiments: ExperimentPass[]): void {
  state.experiments = experiments;
}

/** Read's result for one experiment (the Slurm half): every job, how accounting answered, each candidate with its job and phase. */
export interface ReadResult {
  readonly jobs: MonitorJob[];
  /** Where the listing read ended jobs from, when the port says. */
  readonly accounting: 'on' | 'off' | 'unreachable' | null;
  /** What sacct said when accounting did not answer, else null. */
  readonly accountingUnreachable: string | null;
  readonly candidates: CandidatePass[];
}

/** Puts read's result in its sections of the experiment. */
export function storeRead(e: ExperimentPass, r: ReadResult): void {
  e.jobs = r.jobs;
  if (r.accounting) e.accounting = r.accounting;
  if (r.accountingUnreachable) e.accountingUnreachable = r.accountingUnreachable;
  else delete e.accountingUnreachable;
  e.candidates = r.candidates;
}

/** A look's reread starts the experiment over at `clock`: an outage of the last look is tried again. */
export function storeReread(e: ExperimentPass, clock: PassClock): void {
  e.failed = undefined;
  storeClock(e, clock);
}

/** A look starts with no errors: each experiment's and the pass's pull requests'. */
export function clearErrors(state: PassState): void {
  for (const e of state.experiments) e.errors = [];
  state.pullErrors = [];
}

/** Adds errors of writing pull requests (a look's publish over a part of the pass) to the pass's. */
export function storePullErrors(state: PassState, errors: readonly string[]): void {
  state.pullErrors.push(...errors);
}

/** Puts the experiment's clock for this pass in read's section (read, a look's reread, observe's Prometheus now). */
export function storeClock(e: ExperimentPass, clock: PassClock): void {
  e.clock = clock;
}

/** What observe leaves of one candidate (its `observed`). */
export type CandidateObserved = NonNullable<CandidatePass['observed']>;

/**
 * Observe's result for one experiment: the clock it read the runs at (Prometheus's now), the
 * judge's read (its telemetry, whether the metrics are unavailable), each observed candidate's
 * `observed`, and its errors (a runner clock off).
 */
export interface ObserveResult {
  readonly clock: PassClock;
  readonly read: ReadExperiment;
  readonly candidates: ReadonlyMap<CandidatePass, CandidateObserved>;
  readonly errors: readonly string[];
}

/** Puts observe's result in its sections: the experiment's clock, read, telemetry, unavailable and errors, each candidate's `observed`. */
export function storeObserved(e: ExperimentPass, r: ObserveResult): void {
  storeClock(e, r.clock);
  e.read = r.read;
  e.telemetry = r.read.telemetry;
  e.unavailable = r.read.unavailable;
  e.errors.push(...r.errors);
  for (const [p, observed] of r.candidates) p.observed = observed;
}

/** The autopilot stage's result for an experiment: what it did or why it waits, the plan it leaves, its errors. */
export interface AutopilotResult {
  readonly autopilot: { actions: PilotAction[]; waiting: string | null };
  readonly plan: ActPlan;
  readonly errors: readonly string[];
}

/** Puts the autopilot's result in its sections: its own, the plan it leaves, its errors. */
export function storeAutopilot(e: ExperimentPass, r: AutopilotResult): void {
  e.autopilot = r.autopilot;
  e.plan = r.plan;
  e.errors.push(...r.errors);
}

/**
 * A stage between decide and act that only shapes what act carries out (a look's stops-only, a
 * test's hold): it reads the plan as it stands and returns the plan it leaves.
 */
export function policyStage(name: string, policy: (e: ExperimentPass, plan: ActPlan) => ActPlan): Stage {
  return {
    name,
    run: (state) =>
      eachExperiment(state, name, (e) => {
        e.plan = policy(e, actPlan(e));
      }),
  };
}

/**
 * Act's result for an experiment, beside each candidate's `acted`: the jobs it submitted, each
 * view it judged again (submitted; a stop's GPU-minutes and reason), and the reference Request it
 * made (a candidate of its own, first in its queue). The sections read and decide wrote stay as
 * they were: readers after act take `jobNow`, `viewNow` and `candidatesNow`.
 */
export interface ActedExperiment {
  readonly jobs: ReadonlyMap<CandidatePass, MonitorJob>;
  readonly views: ReadonlyMap<CandidatePass, CandidateView | null>;
  readonly added: readonly CandidatePass[];
}

/** What act did to one candidate (its `acted`). */
export type CandidateActed = NonNullable<CandidatePass['acted']>;

/** Act's result for one experiment: each candidate's `acted`, the experiment's part, the pull requests left. */
export interface ActResult extends ActedExperiment {
  readonly candidates: ReadonlyMap<CandidatePass, CandidateActed>;
  readonly left: ReadonlyMap<number, string[]>;
}

/** Publish's result: each candidate's `published` and view, the errors per pull request and per experiment. */
export interface PublishResult {
  readonly candidates: ReadonlyMap<
    CandidatePass,
    { readonly changed: boolean; readonly view?: CandidateView }
  >;
  readonly pullErrors: readonly string[];
  readonly errors: ReadonlyMap<ExperimentPass, readonly string[]>;
}

export interface PassState {
  options: PassOptions;
  experiments: ExperimentPass[];
  /** Pull requests a candidate left this pass (superseded, lost, refused): their labels, to recompute. */
  left: Map<number, string[]>;
  /** Errors of writing one pull request (publish). */
  pullErrors: string[];
}

/**
 * A stage: a module exports its `run`, one async function over the pass state (./pass.ts STAGES
 * names them). It reads what earlier stages left, computes its result, and has a store… function
 * of this module put it in its own section (test/unit/build/structure.test.ts: a stage module
 * writes nothing into the pass itself). An experiment it fails on is marked failed
 * (eachExperiment) and later stages leave it alone.
 */
export interface Stage {
  name: string;
  run(state: PassState, ports: MonitorPorts): Promise<void>;
}

export function newPassState(options: PassOptions = {}): PassState {
  return { options, experiments: [], left: new Map(), pullErrors: [] };
}

/** The experiment's cluster could not be listed: an outage, never a verdict. */
export class ClusterUnreachable extends Error {
  override name = 'ClusterUnreachable';
}

/**
 * Runs `step` for every experiment no earlier stage failed; an error fails that experiment alone
 * (its pull requests keep their check and label) and the pass goes on with the others.
 */
export async function eachExperiment(
  state: PassState,
  stage: string,
  step: (e: ExperimentPass) => Promise<void> | void,
): Promise<void> {
  for (const e of state.experiments) {
    if (e.failed) continue;
    try {
      await step(e);
    } catch (error) {
      const message = (error as Error).message;
      e.failed = { stage, message, clusterUnreachable: error instanceof ClusterUnreachable };
      e.errors.push(`${e.id}: ${message}`);
    }
  }
}

/** Pull requests with a candidate of an experiment that failed this pass: their check and label are kept. */
export function heldPulls(state: PassState): Set<number> {
  return new Set(state.experiments.flatMap((e) => (e.failed ? e.exp.candidates.map((c) => c.pr) : [])));
}

/** The candidates of the experiment after act: read's, and the reference Request act made. */
export function candidatesNow(e: ExperimentPass): CandidatePass[] {
  return e.acted?.added.length ? [...e.candidates, ...e.acted.added] : e.candidates;
}

/** The candidate's job after act: the one act submitted, else read's. */
export function jobNow(e: ExperimentPass, p: CandidatePass): MonitorJob | undefined {
  return e.acted?.jobs.get(p) ?? p.job;
}

/** The candidate's view as the pass stands: publish's, else act's, else decide's. */
export function viewNow(e: ExperimentPass, p: CandidatePass): CandidateView | null {
  const published = e.published?.views.get(p);
  if (published) return published;
  return e.acted?.views.has(p) ? (e.acted.views.get(p) ?? null) : (p.decided?.view ?? null);
}

/** A candidate the pass judges, with its view and job as the pass stands. */
export interface Judged {
  p: CandidatePass;
  view: CandidateView;
  job: MonitorJob | undefined;
}

/** The candidates the pass judges (in the pass, not left), with their view and job as the pass stands. */
export function judged(e: ExperimentPass): Judged[] {
  return candidatesNow(e).flatMap((p) => {
    const view = p.inPass && !p.acted?.left ? viewNow(e, p) : null;
    return view ? [{ p, view, job: jobNow(e, p) }] : [];
  });
}

/** Puts act's result in its sections: each candidate's `acted`, the experiment's `acted`, the pass's `left`. */
export function storeActed(state: PassState, e: ExperimentPass, r: ActResult): void {
  for (const p of e.candidates) p.acted = r.candidates.get(p) ?? {};
  for (const p of r.added) p.acted = r.candidates.get(p) ?? {};
  e.acted = { jobs: r.jobs, views: r.views, added: r.added };
  for (const [pr, labels] of r.left) state.left.set(pr, labels);
}

/** Puts publish's result in its sections: each candidate's `published`, each experiment's views and errors, the pass's pull errors. */
export function storePublished(state: PassState, r: PublishResult): void {
  for (const e of state.experiments) {
    const views = new Map<CandidatePass, CandidateView>();
    for (const p of candidatesNow(e)) {
      const x = r.candidates.get(p);
      if (!x) continue;
      p.published = { changed: x.changed };
      if (x.view) views.set(p, x.view);
    }
    e.published = { views };
    e.errors.push(...(r.errors.get(e) ?? []));
  }
  state.pullErrors.push(...r.pullErrors);
}
