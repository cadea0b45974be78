// The monitor's reconcile pass: stateless, idempotent. For every experiment: its live candidates
// (from pull requests), their Slurm jobs (one call), their metrics (one query per quantity),
// the candidate state machine and the sequential decision against the current best (else the
// baseline). Then for each pull request with a comment due: its check run (one per head commit,
// over all its candidates), its state label (from all its candidates) and each due candidate's
// sticky comment (one per candidate, written last: it is the pass's commit marker). An unchanged
// pull request costs no write; a running one whose numbers only moved is rewritten at most every
// comment_interval_minutes. Queued candidates are submitted when slots free; decided ones
// (stop_when_decided) and stable ones (stop_when_stable) are stopped. What a pass must remember
// of the last (the decision, the last live verdict, when it wrote) is read back from the comment.
import { createHash } from 'node:crypto';
import { compare } from '../analysis/comparison.js';
import {
  decideCandidate,
  type GpuMinutesInput,
  leadingCandidate,
  pruneByLeader,
  savingsText,
  shouldStopOnDecision,
  type VerdictLike,
  withGpuMinutes,
} from '../analysis/decision.js';
import { defaultRunEndMinutes } from '../analysis/detector.js';
import { explainFailure } from '../analysis/failure.js';
import { observeRun, type RunAnalysis, slurmTimeToMinutes } from '../analysis/observe.js';
import type { LabeledSeries } from '../analysis/series.js';
import { SCRAPE_INTERVAL_S, TIMELINE } from '../catalog/alpasim.js';
import { upsertCheckRun } from '../github/check-runs.js';
import type { Octokit } from '../github/client.js';
import { setStateLabel } from '../github/labels.js';
import { inlineText } from '../github/user-text.js';
import { jobForRun } from '../lifecycle/jobs.js';
import { type Outcome, type Phase, phaseOf, type RunRecord, type RunRequest } from '../lifecycle/model.js';
import { pullRequestCheckRun } from '../report/check-conclusion.js';
import {
  parseCommentStamp,
  renderCommentStamp,
  shouldWriteCheck,
  shouldWriteComment,
} from '../report/comment-throttle.js';
import { parseObservationBlock } from '../report/observation-block.js';
import {
  type CandidateState,
  type CandidateView,
  monitorCheck,
  renderMonitorComment,
  type TimelineEntry,
  viewStanding,
} from '../report/pr-comment.js';
import { DEFAULT_MIN_IMPROVEMENT, describeReference } from '../report/standing.js';
import { classifyFailure } from '../slurm/classify.js';
import { slurmTimeToUnix } from '../slurm/parse.js';
import { isLive, type SlurmClient } from '../slurm/types.js';
import type { PrometheusClient } from '../telemetry/prometheus.js';
import { type ExperimentTelemetry, experimentSelector, fetchTelemetry } from '../telemetry/queries.js';
import { gpuMap } from '../topology/capacity.js';
import type { Experiment } from '../types/generated/experiment.js';
import type {
  CandidateObservation,
  Comparison,
  Decision,
  Failure,
  Interval,
} from '../types/generated/metrics.js';
import type { Topology } from '../types/generated/topology.js';
import { readMonitorComment, writeMonitorComment } from './monitor-comment.js';
import { ownJobs } from './queue.js';

export type LabelState = 'queued' | 'running' | 'stable' | 'failed';

export interface MonitorCandidate {
  candidate: string;
  runName: string;
  pr: number;
  headSha: string;
  labels: string[];
  topology?: Topology;
  /** The user asked for it to run (submit command or queued label): queued while it has no job. */
  requested: boolean;
  /** When it was asked to run (ms since the epoch), for first come, first served; unknown sorts last. */
  requestedAt?: number;
  /**
   * The bot-owned Request this candidate runs for (src/lifecycle). With it, the lifecycle decides:
   * `requested` is ignored, a push supersedes, a forgotten job is `lost` (never resubmitted).
   */
  request?: RunRequest;
  run?: RunRecord;
  outcome?: Outcome;
  /** The pull request's current head (differs from request.headSha after a push). */
  currentHeadSha?: string;
}

export interface MonitorExperiment {
  experiment: Experiment;
  /** 1 for real AlpaSim; the twin's compression factor. */
  timeScale: number;
  /** Prometheus scrape interval of the cluster, seconds (5 in production, 1 locally). */
  scrapeSeconds?: number;
  grafanaUrl?: string | null;
  /** The experiment cluster's Prometheus; the ports' default when absent. */
  prometheus?: PrometheusClient;
  baseline?: { name: string; value: Interval } | null;
  best?: { name: string; value: Interval } | null;
  /** GPUs a job of the experiment holds (the cluster's gpus_per_node); else the experiment's, the topology's. */
  gpusPerNode?: number;
  /** URL of the experiment's committed record chart (experiments/<id>.svg), linked from the comments. */
  recordChartUrl?: string | null;
  candidates: MonitorCandidate[];
}

/** A Slurm job as the monitor needs it (times in unix seconds). */
export interface MonitorJob {
  jobId: string;
  name: string;
  /** Slurm state: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, PREEMPTED, … */
  state: string;
  submitTs?: number | null;
  startTs?: number | null;
  endTs?: number | null;
  /** The Slurm adapter's classification when the job failed. */
  failure?: Failure | null;
}

export interface MonitorCheck {
  title: string;
  summary: string;
  conclusion?: 'success' | 'failure' | 'neutral';
}

export interface MonitorPorts {
  experiments(): Promise<MonitorExperiment[]>;
  slurm: {
    /** Every job of the experiment (live and recent), one call. */
    jobs(experimentId: string): Promise<MonitorJob[]>;
    cancel(jobId: string, experimentId: string): Promise<void>;
  };
  /**
   * Submits a queued candidate (idempotent by job name: the Slurm engineer's queue function).
   * `refused`: its Request no longer passes at its turn (the ports wrote the refusal): this pass
   * leaves the candidate out. Undefined: not submitted now (no slot, an error), tried next pass.
   */
  submit(
    experiment: MonitorExperiment,
    candidate: MonitorCandidate,
  ): Promise<{ jobId: string } | { refused: true } | undefined>;
  prometheus: PrometheusClient;
  github: {
    /** Candidate `candidate`'s sticky comment (src/usecases/monitor-comment.ts): one per candidate. */
    readComment(pr: number, candidate: string): Promise<string | undefined>;
    writeComment(pr: number, candidate: string, body: string): Promise<void>;
    /** The pull request's check run on `headSha`, over all its candidates at that commit. */
    writeCheck(pr: number, headSha: string, check: MonitorCheck): Promise<void>;
    /** The pull request's state label, from all its candidates. */
    setLabel(pr: number, state: LabelState | null, current: string[]): Promise<boolean>;
  };
  /** Where Runs and Outcomes are remembered (the pull request's bot-owned run state). */
  lifecycle?: {
    recordRun(pr: number, requestId: string, run: RunRecord): Promise<void>;
    recordOutcome(pr: number, requestId: string, outcome: Outcome): Promise<void>;
  };
  /** Unix seconds. */
  now(): number;
}

export interface ReconcileOptions {
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

export interface CandidateOutcome {
  experimentId: string;
  candidate: string;
  runName: string;
  pr: number;
  state: CandidateState;
  verdict: CandidateObservation['verdict']['state'];
  changed: boolean;
  submitted?: string;
  cancelled?: string;
  view: CandidateView;
}

export interface ReconcileReport {
  candidates: CandidateOutcome[];
  errors: string[];
}

/** The one live-state table (src/slurm/types.ts). */
const LIVE = { has: (state: string) => isLive(state) };
const HASH_MARK = 'topo:monitor-hash:';
const UNAVAILABLE_MARK = 'topo:unavailable-since:';
const FINAL_MARK = 'final-job:';
/** The experiment schema's default of comment_interval_minutes. */
const DEFAULT_COMMENT_INTERVAL_MINUTES = 15;

const isStable = (v: string | undefined) => v === 'stable' || v === 'cyclic';
const iso = (ts: number | null | undefined) =>
  ts ? `${new Date(ts * 1000).toISOString().slice(0, 19)}Z` : null;

/** The candidate state machine of the architecture doc, computed (never stored). */
export function candidateState(
  job: MonitorJob | undefined,
  requested: boolean,
  analysis: RunAnalysis | undefined,
  stoppedByUs: boolean,
): CandidateState | null {
  if (!job) return requested ? 'queued' : null;
  const v = analysis?.observation.verdict.state;
  const stable = v === 'stable' || v === 'cyclic';
  if (job.state === 'PENDING' || job.state === 'REQUEUED' || job.state === 'CONFIGURING') return 'submitted';
  if (LIVE.has(job.state)) {
    if (!analysis || v === 'no-data') return 'starting';
    if (v === 'warming') return 'warming';
    if (stable) return 'stable';
    return 'stabilising';
  }
  if (job.state === 'COMPLETED')
    return stable || analysis?.observation.verdict.value ? 'finished' : analysis ? 'finished' : 'failed';
  if (job.state === 'CANCELLED' && (stable || stoppedByUs)) return 'stopped';
  if (job.state === 'TIMEOUT' && stable) return 'finished';
  return 'failed';
}

function labelFor(state: CandidateState | null, hasValue: boolean): LabelState | null {
  switch (state) {
    case null:
      return null;
    case 'queued':
      return 'queued';
    case 'submitted':
    case 'starting':
    case 'warming':
    case 'stabilising':
      return 'running';
    case 'stable':
      return 'stable';
    case 'finished':
    case 'stopped':
      return hasValue ? 'stable' : null;
    case 'failed':
      return 'failed';
  }
}

function contentHash(body: string): string {
  return createHash('sha256').update(body).digest('hex').slice(0, 16);
}

/** The run's series from the experiment-wide telemetry (already grouped by run_name). */
function seriesOf(
  t: ExperimentTelemetry | undefined,
  runName: string,
): Partial<Record<string, LabeledSeries[]>> {
  return (t?.byRun.get(runName) ?? {}) as Partial<Record<string, LabeledSeries[]>>;
}

/** One reconcile pass over every experiment. */
export async function reconcile(
  ports: MonitorPorts,
  options: ReconcileOptions = {},
): Promise<ReconcileReport> {
  const report: ReconcileReport = { candidates: [], errors: [] };
  const experiments = await ports.experiments();
  const pulls: Pulls = { held: new Set(), left: new Map() };
  const planned: Planned[] = [];
  for (const exp of experiments) {
    try {
      planned.push(...(await reconcileExperiment(ports, exp, options, pulls)));
    } catch (e) {
      report.errors.push(`${exp.experiment.experiment_id}: ${(e as Error).message}`);
      // a pull request with a candidate of this experiment keeps its check and label (they would miss it)
      for (const c of exp.candidates) pulls.held.add(c.pr);
      if (e instanceof ClusterUnreachable) await noteClusterUnreachable(ports, exp, e.message, report);
    }
  }
  const byPull = new Map<number, Planned[]>();
  for (const p of planned) byPull.set(p.o.c.pr, [...(byPull.get(p.o.c.pr) ?? []), p]);
  for (const pr of pulls.left.keys()) if (!byPull.has(pr)) byPull.set(pr, []);
  for (const [pr, plans] of byPull) {
    try {
      report.candidates.push(...(await writePull(ports, pr, plans, pulls)));
    } catch (e) {
      report.errors.push(`#${pr}: ${(e as Error).message}`);
      report.candidates.push(...plans.map((p) => outcomeOf(p.pass, p.o.c, p.view, false, p.cancelled)));
    }
  }
  return report;
}

/** What the pass knows of pull requests beyond their judged candidates. */
interface Pulls {
  /** Pull requests with a candidate whose experiment failed this pass: check and label are kept. */
  held: Set<number>;
  /** Pull requests a candidate left this pass (superseded, lost, refused): their labels, to recompute. */
  left: Map<number, string[]>;
}

/** The experiment's cluster could not be listed: an outage, never a verdict. */
class ClusterUnreachable extends Error {
  override name = 'ClusterUnreachable';
}

/** Says so on top of each requested candidate's last judged comment; the next pass retries. */
async function noteClusterUnreachable(
  ports: MonitorPorts,
  exp: MonitorExperiment,
  reason: string,
  report: ReconcileReport,
): Promise<void> {
  for (const c of exp.candidates) {
    if (!c.request || c.outcome) continue;
    try {
      const current = await ports.github.readComment(c.pr, c.candidate);
      const since = unavailableSince(current) ?? iso(ports.now()) ?? '';
      const noted = withUnavailableNotice(current, since, reason, 'Cluster unreachable');
      if (noted !== undefined && noted !== current) await ports.github.writeComment(c.pr, c.candidate, noted);
    } catch (e) {
      report.errors.push(`#${c.pr}: ${(e as Error).message}`);
    }
  }
}

/** What one experiment's pass shares between its steps. */
interface Pass {
  ports: MonitorPorts;
  exp: MonitorExperiment;
  options: ReconcileOptions;
  id: string;
  /** Time compression (1 for real AlpaSim). */
  S: number;
  scrape: number;
  /** The evaluation time (unix seconds), aligned to the tick. */
  evalTs: number;
  /** The job's wall time in job-minutes. */
  wallMinutes: number;
  expectedRollouts: number | null;
  telemetry?: ExperimentTelemetry;
  /** An outage: with any quantity unreadable, nothing is judged, failed, stopped or recorded. */
  unavailable: string | null;
  submitted: Map<string, string>;
}

/** One candidate as observed this pass, before it is judged. */
interface Observed {
  c: MonitorCandidate;
  job?: MonitorJob;
  analysis?: RunAnalysis;
  /** The sticky comment as it stands, and the observation its last pass wrote. */
  current?: string;
  previous?: CandidateObservation;
  ended: boolean;
}

async function reconcileExperiment(
  ports: MonitorPorts,
  exp: MonitorExperiment,
  options: ReconcileOptions,
  pulls: Pulls,
): Promise<Planned[]> {
  const id = exp.experiment.experiment_id;
  const scrape = exp.scrapeSeconds ?? SCRAPE_INTERVAL_S;
  const tick = options.tickSeconds ?? 60;
  const lag = options.lagSeconds ?? 2 * scrape;
  const evalTs = Math.floor((ports.now() - lag) / tick) * tick;
  const { allJobs, jobByRun } = await listJobs(ports, id);
  // The lifecycle decides what each Request needs (src/lifecycle/model.ts phaseOf).
  const candidates: MonitorCandidate[] = [];
  for (const c of exp.candidates) {
    const kept = await applyLifecycle(ports, id, c, jobByRun.get(c.runName));
    if (kept) candidates.push(kept);
    else if (c.request && !c.outcome) pulls.left.set(c.pr, c.labels); // superseded or lost now
  }
  const { submitted, refused } = await submitQueued(ports, exp, candidates, jobByRun, allJobs);
  for (const c of refused) pulls.left.set(c.pr, c.labels);
  const running = candidates.filter((c) => !refused.has(c));
  const telemetry = await experimentTelemetry(ports, exp, running, jobByRun, evalTs, scrape);
  const pass = passOf({ ports, exp, options, id, scrape, evalTs, telemetry, submitted });
  // Every candidate is observed before any is judged: a live baseline is the others' reference.
  const observed: Observed[] = [];
  for (const c of running) observed.push(await observeCandidate(pass, c, jobByRun.get(c.runName)));
  const reference = referenceOf(exp, observed);
  const leader = leaderOf(exp, observed, reference);
  const planned: Planned[] = [];
  for (const o of observed) {
    const view = judgeCandidate(pass, o, reference, leader);
    if (!view) continue; // not asked to run: the validate workflow owns its comment
    const cancelled = await stopCandidate(pass, o, view);
    planned.push(planCandidate(pass, o, view, cancelled));
  }
  return planned;
}

function passOf(p: Omit<Pass, 'S' | 'wallMinutes' | 'expectedRollouts' | 'unavailable'>): Pass {
  const fi = p.exp.experiment.fixed_inputs;
  const error = p.telemetry?.errors[0];
  return {
    ...p,
    S: p.exp.timeScale,
    wallMinutes:
      (fi.slurm?.time ? slurmTimeToMinutes(fi.slurm.time) : null) ??
      defaultRunEndMinutes() + TIMELINE.startupMinutes,
    expectedRollouts: fi.scene_count ? fi.scene_count * (fi.rollouts_per_scene ?? 1) : null,
    unavailable: error ? `Prometheus: ${error.quantity}: ${error.message}` : null,
  };
}

/** Every job of the experiment (one Slurm call) and the one that stands for each run name. */
async function listJobs(
  ports: MonitorPorts,
  id: string,
): Promise<{ allJobs: MonitorJob[]; jobByRun: Map<string, MonitorJob> }> {
  const allJobs = await ports.slurm.jobs(id).catch((e: Error) => {
    throw new ClusterUnreachable(`Slurm: ${e.message}`);
  });
  const jobByRun = new Map<string, MonitorJob>();
  for (const name of new Set(allJobs.map((j) => j.name))) {
    const job = jobForRun(allJobs, name, (j) => ({ id: j.jobId, name: j.name, state: j.state }));
    if (job) jobByRun.set(name, job);
  }
  return { allJobs, jobByRun };
}

/**
 * Submits queued candidates while slots are free: strictly by request time (then the older pull
 * request). Returns the job ids submitted and the candidates whose Request the ports refused.
 */
async function submitQueued(
  ports: MonitorPorts,
  exp: MonitorExperiment,
  candidates: readonly MonitorCandidate[],
  jobByRun: Map<string, MonitorJob>,
  allJobs: readonly MonitorJob[],
): Promise<{ submitted: Map<string, string>; refused: Set<MonitorCandidate> }> {
  const maxParallel = exp.experiment.max_parallel ?? 3;
  let live = new Set(allJobs.filter((j) => LIVE.has(j.state)).map((j) => j.name)).size;
  const submitted = new Map<string, string>();
  const refused = new Set<MonitorCandidate>();
  for (const c of [...candidates].sort(byRequest)) {
    if (live >= maxParallel) break;
    if (!c.requested || jobByRun.has(c.runName)) continue;
    const r = await ports.submit(exp, c);
    if (r && 'refused' in r) refused.add(c);
    if (!r || 'refused' in r) continue;
    submitted.set(c.runName, r.jobId);
    jobByRun.set(c.runName, { jobId: r.jobId, name: c.runName, state: 'PENDING', submitTs: null });
    live++;
    if (c.request)
      await ports.lifecycle?.recordRun(c.pr, c.request.id, {
        jobId: r.jobId,
        submittedAt: new Date(ports.now() * 1000).toISOString(),
      });
  }
  return { submitted, refused };
}

/** Metrics: one query per quantity for the whole experiment, over the jobs that have run. */
async function experimentTelemetry(
  ports: MonitorPorts,
  exp: MonitorExperiment,
  candidates: readonly MonitorCandidate[],
  jobByRun: Map<string, MonitorJob>,
  evalTs: number,
  scrape: number,
): Promise<ExperimentTelemetry | undefined> {
  const started = candidates.map((c) => jobByRun.get(c.runName)).filter((j): j is MonitorJob => !!j?.startTs);
  if (!started.length) return undefined;
  const start = Math.floor(Math.min(...started.map((j) => j.startTs as number)) / scrape) * scrape;
  return fetchTelemetry(
    exp.prometheus ?? ports.prometheus,
    experimentSelector(exp.experiment.experiment_id),
    { start, end: Math.max(evalTs, start), stepSeconds: scrape },
    { timeScale: exp.timeScale, scrapeSeconds: scrape },
  );
}

/** The run's analysis as of now (or its end), and the comment its last pass wrote. */
async function observeCandidate(
  pass: Pass,
  c: MonitorCandidate,
  job: MonitorJob | undefined,
): Promise<Observed> {
  const ended = job !== undefined && !LIVE.has(job.state);
  const analysis = job?.startTs ? analyse(pass, c, job, job.startTs) : undefined;
  // The comment is the durable memory of the last pass (its verdict, its decision).
  const current = await pass.ports.github.readComment(c.pr, c.candidate);
  const previous = current ? parseObservationBlock(current) : undefined;
  const o: Observed = { c, job, analysis, current, previous, ended };
  keepLastLiveVerdict(o);
  return o;
}

function analyse(pass: Pass, c: MonitorCandidate, job: MonitorJob, startTs: number): RunAnalysis {
  const { S, evalTs, exp } = pass;
  const nowTs = job.endTs && !LIVE.has(job.state) ? Math.min(evalTs, job.endTs) : evalTs;
  const analysis = observeRun({
    runName: c.runName,
    series: seriesOf(pass.telemetry, c.runName),
    timeScale: S,
    nowTs,
    stepSeconds: pass.scrape,
    jobStartTs: startTs,
    wallMinutes: pass.wallMinutes,
    expectedRollouts: pass.expectedRollouts,
    topology: c.topology,
    settings: exp.experiment.stabilisation,
    missing: pass.telemetry?.missing,
    ended: !LIVE.has(job.state),
  });
  // no telemetry at all: starting for a while, then a failure of its own
  const minutesRunning = ((nowTs - startTs) * S) / 60;
  const deadline = pass.options.telemetryDeadlineMinutes ?? 3 * TIMELINE.startupMinutes;
  if (
    !pass.unavailable &&
    analysis.startTs === null &&
    (!LIVE.has(job.state) || minutesRunning >= deadline) &&
    !job.failure
  )
    analysis.observation.failure = {
      kind: 'no-telemetry',
      message: `no metrics for run_name="${c.runName}" ${Math.round(minutesRunning)} run-minutes after the job started`,
    };
  return analysis;
}

/** A run that ended keeps the verdict its last live pass reached (a window rule may flip at the cut). */
function keepLastLiveVerdict({ analysis, ended, previous, c }: Observed): void {
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

/** State, failure, comparison and decision of one candidate: its view (null: not asked to run). */
function judgeCandidate(
  pass: Pass,
  o: Observed,
  reference: Reference | null,
  leader: Reference | null = null,
): CandidateView | null {
  const { exp } = pass;
  const { c, job, analysis } = o;
  const stoppedBy = stoppedByOf(exp, o);
  const stoppedByUs =
    stoppedBy !== null || (job?.state === 'CANCELLED' && exp.experiment.stop_when_stable === true);
  let state = candidateState(job, c.requested, analysis, stoppedByUs);
  if (state === null) return null;
  const observation: CandidateObservation = analysis?.observation ?? {
    run_name: c.runName,
    verdict: {
      state: 'no-data',
      evidence: [job ? `Slurm job ${job.jobId} is ${job.state}` : 'waiting for a free slot'],
    },
    stable_metrics: {},
  };
  if (observation.failure?.kind === 'no-telemetry') state = 'failed';
  if (state === 'failed') observation.failure = failureOf(c, job, observation);
  const comparisons = compareCandidate(exp, c, observation, {
    reference,
    leader,
    previous: o.previous?.run_name === c.runName ? (o.previous.decision ?? null) : null,
    ended: o.ended,
    gpu: gpuInput(pass, o, stoppedBy === 'decision'),
  });
  return viewOf(pass, o, state, observation, comparisons, reference, stoppedBy);
}

function failureOf(
  c: MonitorCandidate,
  job: MonitorJob | undefined,
  observation: CandidateObservation,
): Failure {
  const failure: Failure = job?.failure ??
    observation.failure ?? {
      kind: job?.state === 'CANCELLED' ? 'cancelled' : job?.state === 'TIMEOUT' ? 'time-limit' : 'crash',
      message: `Slurm job ${job?.jobId} ended ${job?.state}`,
      slurm_state: job?.state,
    };
  return explainFailure(failure, {
    topology: c.topology,
    gpus: observation.stable_metrics.resource_usage?.gpu_by_index,
  });
}

function viewOf(
  pass: Pass,
  o: Observed,
  state: CandidateState,
  observation: CandidateObservation,
  comparisons: Comparison[],
  reference: Reference | null,
  stoppedBy: CandidateView['stoppedBy'],
): CandidateView {
  const { exp, telemetry } = pass;
  const { c, job, analysis, ended } = o;
  const e = exp.experiment;
  const seconds = (r: { name: string; value: Interval } | null | undefined) =>
    r ? { name: r.name, secondsPerRollout: r.value.value } : null;
  // a baseline running in this pass is drawn at its projection (it may not be stable yet)
  const projected = reference?.live ? reference.verdict.projected_full_run : null;
  const liveBaseline = reference && projected ? { name: reference.name, value: projected } : null;
  return {
    experimentId: pass.id,
    candidate: c.candidate,
    runName: c.runName,
    state,
    jobId: job?.jobId ?? null,
    slurmState: job?.state ?? null,
    timeline: timelineOf(pass, o, observation.verdict.warmup_end_minutes),
    observation,
    comparisons,
    chart: analysis?.chart,
    opportunities: analysis?.opportunities,
    queries: telemetry?.queries.map((q) => ({ quantity: q.quantity, query: q.query, source: q.source })),
    grafanaUrl: exp.grafanaUrl ?? null,
    timeRange: analysis?.startTs
      ? { fromMs: analysis.startTs * 1000, toMs: job?.endTs && ended ? job.endTs * 1000 : null }
      : null,
    notes: telemetry?.errors.map((err) => `Prometheus error for ${err.quantity}: ${err.message}`),
    minImprovement: e.min_improvement ?? DEFAULT_MIN_IMPROVEMENT,
    stopWhenDecided: e.stop_when_decided !== false,
    baseline: seconds(exp.baseline) ?? seconds(liveBaseline),
    best: seconds(exp.best),
    finalJobState: ended ? (job?.state ?? null) : null,
    stoppedBy,
    commentIntervalMinutes: e.comment_interval_minutes ?? DEFAULT_COMMENT_INTERVAL_MINUTES,
    recordChartUrl: exp.recordChartUrl ?? null,
  };
}

function timelineOf(
  pass: Pass,
  { job, analysis, ended }: Observed,
  warmupEnd?: number | null,
): TimelineEntry[] {
  const firstTs = analysis?.startTs;
  return [
    { label: 'submitted', at: iso(job?.submitTs) },
    { label: 'started', at: iso(job?.startTs) },
    { label: 'first metrics', at: iso(firstTs) },
    {
      label: 'warm-up ended',
      at: firstTs && warmupEnd != null ? iso(Math.round(firstTs + (warmupEnd * 60) / pass.S)) : null,
    },
    { label: 'ended', at: ended ? iso(job?.endTs) : null },
  ];
}

/**
 * Cancels a live job the experiment says to stop now (never while metrics are unavailable); a
 * stop on the decision fills in the GPU-minutes it saves. The job id when cancelled.
 */
async function stopCandidate(pass: Pass, o: Observed, view: CandidateView): Promise<string | undefined> {
  const { job } = o;
  if (pass.unavailable || !job || !LIVE.has(job.state)) return undefined;
  const reason = stopReason(pass.exp.experiment, view);
  if (reason === null) return undefined;
  await pass.ports.slurm.cancel(job.jobId, pass.id);
  const d = view.observation.decision;
  const gpu = gpuInput(pass, o, true);
  if (d && reason.startsWith(DECISION_STOP) && gpu) view.observation.decision = withGpuMinutes(d, gpu);
  return job.jobId;
}

/** A candidate judged this pass, and its comment when one is due. */
interface Planned {
  pass: Pass;
  o: Observed;
  view: CandidateView;
  cancelled?: string;
  /** The comment to write now; undefined: none is due. */
  text?: string;
  /** Metrics unavailable: only the notice on its last comment; its pull request's check and label stay. */
  held: boolean;
  /** Its comment is final with this write (the job ended and its data settled). */
  final: boolean;
  /** What its pull request's check run says changes with this write (state or decision). */
  checkDue?: boolean;
}

/**
 * The candidate's comment behind one write gate: nothing for an unchanged candidate or a final
 * comment; a running candidate whose numbers only moved at most every comment_interval_minutes
 * (src/report/comment-throttle.ts). With metrics unavailable, the last comment with a notice.
 */
function planCandidate(pass: Pass, o: Observed, view: CandidateView, cancelled: string | undefined): Planned {
  const { evalTs, scrape } = pass;
  const { job, current } = o;
  if (pass.unavailable && job?.startTs) {
    const since = unavailableSince(current) ?? iso(pass.ports.now()) ?? '';
    const noted = withUnavailableNotice(current, since, pass.unavailable);
    const notes = [...(view.notes ?? []), `metrics unavailable since ${since}`];
    const text = noted !== undefined && noted !== current ? noted : undefined;
    return { pass, o, view: { ...view, notes }, held: true, final: false, ...(text ? { text } : {}) };
  }
  const body = renderMonitorComment(view);
  // An ended run's comment is final once the data has settled (a few scrapes after the end):
  // later passes leave it alone even if Prometheus drops or ages the run's series.
  const finalMark =
    job && o.ended && job.endTs && evalTs >= job.endTs + 3 * scrape ? ` ${FINAL_MARK}${job.jobId}` : '';
  const hash = contentHash(`${body}${finalMark}`);
  const stamp = { state: view.state, outcome: viewStanding(view).outcome, hash, writtenAtMs: evalTs * 1000 };
  const isFinal = job !== undefined && !!current?.includes(`${FINAL_MARK}${job.jobId} -->`);
  const wasUnavailable = !!current?.includes(UNAVAILABLE_MARK);
  const interval = view.commentIntervalMinutes ?? DEFAULT_COMMENT_INTERVAL_MINUTES;
  const previous = parseCommentStamp(current);
  const due =
    !isFinal &&
    (wasUnavailable ||
      (pass.options.refresh === true && previous?.hash !== hash) ||
      shouldWriteComment(previous, stamp, evalTs * 1000, interval));
  const text = due
    ? `${body}\n<!-- ${HASH_MARK}${hash}${finalMark} -->\n${renderCommentStamp(stamp)}`
    : undefined;
  // moving numbers go to the comment; the check is rewritten when what it says changes
  const checkDue =
    due && (wasUnavailable || pass.options.refresh === true || shouldWriteCheck(previous, stamp));
  return {
    pass,
    o,
    view,
    cancelled,
    held: false,
    final: finalMark !== '',
    checkDue,
    ...(text ? { text } : {}),
  };
}

/** The state label of a pull request from all its candidates: the most urgent one shows. */
export function pullLabel(
  views: ReadonlyArray<Pick<CandidateView, 'state' | 'observation'>>,
): LabelState | null {
  const labels = new Set(views.map((v) => labelFor(v.state, !!v.observation.verdict.value)));
  for (const l of ['failed', 'running', 'queued', 'stable'] as const) if (labels.has(l)) return l;
  return null;
}

/** The check run of a pull request's head commit over its candidates at that commit. */
export function pullCheck(views: readonly CandidateView[]): MonitorCheck {
  return pullRequestCheckRun(views.map((v) => ({ candidate: v.candidate, check: monitorCheck(v) })));
}

/**
 * A pull request's writes: when any of its candidates' comments is due, its check run on each
 * head commit that has a due candidate and its state label, computed over ALL its candidates (never
 * overwritten per candidate); then each due comment (last: the pass's commit marker); then each
 * run's Outcome once its comment is final (judged as of the job's end, written once).
 */
async function writePull(
  ports: MonitorPorts,
  pr: number,
  plans: readonly Planned[],
  pulls: Pulls,
): Promise<CandidateOutcome[]> {
  const hold = pulls.held.has(pr) || plans.some((p) => p.held);
  const due = plans.filter((p) => p.text !== undefined);
  if (!hold) {
    const shas = new Set(due.filter((p) => p.checkDue).map((p) => p.o.c.headSha));
    for (const sha of shas)
      await ports.github.writeCheck(
        pr,
        sha,
        pullCheck(plans.filter((p) => p.o.c.headSha === sha).map((p) => p.view)),
      );
    const labels = plans[0]?.o.c.labels ?? pulls.left.get(pr) ?? [];
    if (due.length || pulls.left.has(pr))
      await ports.github.setLabel(pr, pullLabel(plans.map((p) => p.view)), labels);
  }
  for (const p of due) await ports.github.writeComment(pr, p.o.c.candidate, p.text as string);
  for (const { o, view, final } of plans)
    if (final && o.job && o.c.request && !o.c.outcome)
      await ports.lifecycle?.recordOutcome(
        pr,
        o.c.request.id,
        finalOutcome(view, o.job, iso(o.job.endTs) ?? new Date(ports.now() * 1000).toISOString()),
      );
  return plans.map((p) => outcomeOf(p.pass, p.o.c, p.view, p.text !== undefined, p.cancelled));
}

function outcomeOf(
  pass: Pass,
  c: MonitorCandidate,
  view: CandidateView,
  changed: boolean,
  cancelled: string | undefined,
): CandidateOutcome {
  return {
    experimentId: pass.id,
    candidate: c.candidate,
    runName: c.runName,
    pr: c.pr,
    state: view.state,
    verdict: view.observation.verdict.state,
    changed,
    submitted: pass.submitted.get(c.runName),
    ...(cancelled ? { cancelled } : {}),
    view,
  };
}

/**
 * What the Request of `c` needs before this pass observes it (src/lifecycle/model.ts phaseOf): a
 * superseded or lost run is written as such and not observed; a queued one becomes `requested`;
 * a consumed one is only observed while its job's comment is not final. Null: nothing more.
 */
async function applyLifecycle(
  ports: MonitorPorts,
  experimentId: string,
  c: MonitorCandidate,
  job: MonitorJob | undefined,
): Promise<MonitorCandidate | null> {
  if (!c.request) return c;
  const request = c.request;
  const headSha = c.currentHeadSha ?? c.headSha;
  const phase: Phase = phaseOf({
    request,
    run: c.run,
    outcome: c.outcome,
    job: job ? { id: job.jobId, state: job.state } : null,
    headSha,
  });
  const at = new Date(ports.now() * 1000).toISOString();
  switch (phase.phase) {
    case 'supersede': {
      if (phase.jobId) await ports.slurm.cancel(phase.jobId, experimentId);
      await ports.lifecycle?.recordOutcome(c.pr, request.id, {
        kind: 'superseded',
        at,
        ...(phase.jobId ? { jobId: phase.jobId } : {}),
        evidence: [
          `the pull request moved from ${request.headSha.slice(0, 7)} to ${headSha.slice(0, 7)}: the new head waits for a new /topo submit`,
          ...(phase.jobId ? [`cancelled Slurm job ${phase.jobId}`] : []),
        ],
      });
      return null; // its pull request's label is recomputed from the candidates that stay
    }
    case 'lost':
      await ports.lifecycle?.recordOutcome(c.pr, request.id, {
        kind: 'lost',
        at,
        jobId: phase.jobId,
        evidence: [
          `Slurm no longer knows job ${phase.jobId} (history window or lost controller state); it is not submitted again: comment /topo submit to run it again`,
        ],
      });
      return null;
    case 'done':
      if (phase.cancelLive) await ports.slurm.cancel(phase.cancelLive, experimentId);
      if (!job || ['superseded', 'cancelled', 'lost'].includes(phase.outcome.kind)) return null;
      return { ...c, requested: false };
    default:
      return { ...c, requested: true };
  }
}

/** The Outcome of a run whose comment just became final (judged as of the job's end). */
function finalOutcome(view: CandidateView, job: MonitorJob, at: string): Outcome {
  const v = view.observation.verdict;
  const d = view.observation.decision;
  if (view.state === 'stopped' && view.stoppedBy === 'decision' && d)
    return {
      kind: 'decided',
      at,
      jobId: job.jobId,
      evidence: [
        `${d.state} against ${d.against}${d.decided_at_minutes != null ? ` at run-minute ${d.decided_at_minutes}` : ''}: Slurm job ${job.jobId} cancelled by the decision (stop_when_decided)`,
        ...d.evidence,
        ...(savingsText(d) ? [savingsText(d) as string] : []),
      ],
    };
  const kind: Outcome['kind'] =
    view.state === 'failed' ? 'failed' : view.state === 'stopped' ? 'stopped' : 'finished';
  const evidence =
    kind === 'failed'
      ? [view.observation.failure?.message ?? `Slurm job ${job.jobId} ended ${job.state}`]
      : [
          v.value
            ? `${v.state}: ${v.value.value} s/rollout [${v.value.low}, ${v.value.high}]`
            : `ended without a stable value (${v.state})`,
        ];
  return { kind, at, jobId: job.jobId, evidence };
}

/**
 * What the candidates of a pass are decided against: the current best, else the baseline (both
 * measured, from the record), else a baseline running in this pass (its live projection).
 */
export interface Reference {
  /** "current best" or "baseline"; "leading candidate" for the pruner's reference. */
  role: 'current best' | 'baseline' | 'leading candidate';
  name: string;
  verdict: VerdictLike;
  /** Its value for the fixed-sample comparison (the record's, or a live run's stable value). */
  value: Interval | null;
  /** A run of this pass, not a measured one. */
  live: boolean;
  /** The leading candidate's pull request (named when it is another one's). */
  pr?: number;
}

/** The baseline's candidate name: the experiment's baseline, else `topo init`'s `baseline`. */
function baselineName(exp: MonitorExperiment): string {
  return exp.baseline?.name ?? 'baseline';
}

const measured = (role: Reference['role'], r: { name: string; value: Interval }): Reference => ({
  role,
  name: r.name,
  verdict: { state: 'stable', projected_full_run: r.value },
  value: r.value,
  live: false,
});

function referenceOf(
  exp: MonitorExperiment,
  observed: ReadonlyArray<Pick<Observed, 'c' | 'analysis'>>,
): Reference | null {
  if (exp.best) return measured('current best', exp.best);
  if (exp.baseline) return measured('baseline', exp.baseline);
  const base = observed.find((o) => o.c.candidate === baselineName(exp) && o.analysis);
  const verdict = base?.analysis?.observation.verdict;
  if (!base || !verdict || base.analysis?.observation.failure) return null;
  return { role: 'baseline', name: base.c.candidate, verdict, value: verdict.value ?? null, live: true };
}

/**
 * The leading candidate of the pass (src/analysis/decision.ts leadingCandidate): the other
 * candidates' best usable projection, live or frozen at its last pass, when faster than the
 * reference's. Never the reference or the baseline, never a failed run.
 */
function leaderOf(
  exp: MonitorExperiment,
  observed: ReadonlyArray<Pick<Observed, 'c' | 'analysis'>>,
  reference: Reference | null,
): Reference | null {
  const runs = observed.flatMap((o) =>
    o.analysis &&
    !o.analysis.observation.failure &&
    o.c.candidate !== reference?.name &&
    o.c.candidate !== baselineName(exp)
      ? [{ name: o.c.candidate, verdict: o.analysis.observation.verdict, pr: o.c.pr }]
      : [],
  );
  const lead = leadingCandidate(runs, reference?.verdict ?? null);
  return lead
    ? {
        role: 'leading candidate',
        name: lead.name,
        verdict: lead.verdict,
        value: null,
        live: true,
        pr: lead.pr,
      }
    : null;
}

const DECIDED = new Set(['better', 'worse', 'equivalent', 'not-better']);
const isDecided = (d: Decision | null | undefined): d is Decision => !!d && DECIDED.has(d.state);

/**
 * Who ended a CANCELLED job. Reconcile keeps no state: a job cancelled on the decision is known by
 * the decision its last comment carries (the comment of the pass that cancelled it).
 */
function stoppedByOf(exp: MonitorExperiment, o: Observed): CandidateView['stoppedBy'] {
  if (o.job?.state !== 'CANCELLED') return null;
  if (o.c.outcome?.kind === 'stopped') return 'user';
  const previous = o.previous?.run_name === o.c.runName ? o.previous : undefined;
  if (exp.experiment.stop_when_decided !== false && isDecided(previous?.decision)) return 'decision';
  const verdict = o.analysis?.observation.verdict.state ?? previous?.verdict.state;
  if (exp.experiment.stop_when_stable && isStable(verdict)) return 'stable';
  return null;
}

/**
 * GPU-minutes of the job (src/analysis/decision.ts gpuMinutes): the GPUs it holds (the
 * experiment's gpus_per_node, else the cluster's, else the topology's GPUs, else 8) over its
 * minutes so far; the run
 * would have ended at its wall time, or sooner once its rollouts are done (the projection's horizon).
 */
function gpuInput(pass: Pass, o: Observed, stopped: boolean): GpuMinutesInput | null {
  const { job, analysis, c } = o;
  if (!job?.startTs) return null;
  const until = o.ended && job.endTs ? Math.min(pass.evalTs, job.endTs) : pass.evalTs;
  const minutesRunning = ((until - job.startTs) * pass.S) / 60;
  const offset = analysis?.startTs != null ? ((analysis.startTs - job.startTs) * pass.S) / 60 : null;
  const end = analysis?.observation.verdict.run_end_minutes;
  const runEndMinutes =
    offset !== null && end != null ? Math.min(pass.wallMinutes, offset + end) : pass.wallMinutes;
  const gpus =
    pass.exp.experiment.fixed_inputs.slurm?.gpus_per_node ??
    pass.exp.gpusPerNode ??
    (c.topology ? gpuMap(c.topology).size : 0);
  return { gpus: gpus > 0 ? gpus : 8, minutesRunning, runEndMinutes, stopped };
}

/** What the sequential decision of a candidate reads besides its observation. */
export interface DecisionContext {
  reference?: Reference | null;
  /** The leading candidate: one that cannot beat it by min_improvement is not-better (pruned). */
  leader?: Reference | null;
  /** The decision of the last pass (its comment's observation block): decisions are final. */
  previous?: Decision | null;
  /** The job ended: a decision it reached is kept as it was. */
  ended?: boolean;
  gpu?: GpuMinutesInput | null;
}

/**
 * THE comparison of a candidate (the one place): against the current best, then the baseline;
 * the first one is written into the observation. With a reference, the sequential decision
 * (src/analysis/decision.ts decideCandidate) is written too: against the current best, else the
 * baseline, with the experiment's min_improvement; a failed run gets none.
 */
export function compareCandidate(
  exp: MonitorExperiment,
  c: MonitorCandidate,
  observation: CandidateObservation,
  context: DecisionContext = {},
): Comparison[] {
  const comparisons: Comparison[] = [];
  if (exp.best && exp.best.name !== c.candidate)
    comparisons.push(
      compare(observation.verdict.value ?? null, exp.best.value, `current best ${exp.best.name}`),
    );
  if (exp.baseline && exp.baseline.name !== c.candidate && exp.baseline.name !== exp.best?.name)
    comparisons.push(
      compare(observation.verdict.value ?? null, exp.baseline.value, `baseline ${exp.baseline.name}`),
    );
  const ref = context.reference;
  if (ref?.live && ref.name !== c.candidate)
    comparisons.push(compare(observation.verdict.value ?? null, ref.value, `baseline ${ref.name}`));
  if (comparisons[0]) observation.comparison = comparisons[0];
  const decision = decisionOf(exp, c, observation, context);
  if (decision) observation.decision = context.gpu ? withGpuMinutes(decision, context.gpu) : decision;
  return comparisons;
}

function decisionOf(
  exp: MonitorExperiment,
  c: MonitorCandidate,
  observation: CandidateObservation,
  { reference, leader, previous, ended }: DecisionContext,
): Decision | null {
  if (observation.failure) return null;
  const isReference = c.candidate === reference?.name || c.candidate === baselineName(exp);
  // a decision once reached stays, also when the job ended or the reference's run is gone
  if ((ended || !reference) && isDecided(previous)) return previous;
  if (!reference && !isReference) return null;
  const lead = leader && leader.name !== c.candidate ? decidedAgainst(leader, c.pr) : null;
  // pruned by the same leader on an earlier pass: final too (the job may run on without stop_when_decided)
  if (lead && isDecided(previous) && previous.against === lead.name) return previous;
  const minImprovement = exp.experiment.min_improvement ?? DEFAULT_MIN_IMPROVEMENT;
  const decision = decideCandidate(observation.verdict, reference ? decidedAgainst(reference, c.pr) : null, {
    minImprovement,
    previous,
    isReference,
  });
  if (decision.state !== 'measuring' || isReference || !lead) return decision;
  return pruneByLeader(observation.verdict, lead, { minImprovement, previous }) ?? decision;
}

/**
 * A reference as the decision names it: `against` is "<role> <name>", with the leader's pull
 * request when it is another one's; the evidence reads it once ("the baseline", not "baseline
 * baseline"; "the leading candidate `a` (#12)").
 */
function decidedAgainst(r: Reference, pr: number): { name: string; verdict: VerdictLike; label: string } {
  const name = `${r.role} ${r.name}${r.pr !== undefined && r.pr !== pr ? ` (#${r.pr})` : ''}`;
  return { name, verdict: r.verdict, label: describeReference(name) };
}

const DECISION_STOP = 'decided';

/**
 * THE stop decision of a running candidate (the one place): why to stop it now, or null.
 * stop_when_stable: once stable. stop_when_decided (default true): once its decision says it
 * cannot win or is settled (src/analysis/decision.ts shouldStopOnDecision); a reference never
 * stops on a decision. Never called while metrics are unavailable.
 */
export function stopReason(experiment: Experiment, view: CandidateView): string | null {
  const d = view.observation.decision;
  if (d && !['failed', 'finished', 'stopped'].includes(view.state)) {
    const s = shouldStopOnDecision([d], { stopWhenDecided: experiment.stop_when_decided !== false });
    if (s.stop) return `${DECISION_STOP}: ${s.reason} (stop_when_decided)`;
  }
  if (view.state === 'stable' && experiment.stop_when_stable) return 'stable (stop_when_stable)';
  return null;
}

/** When the metrics became unavailable, from the notice of an earlier pass. */
function unavailableSince(comment: string | undefined): string | null {
  const m = comment ? new RegExp(`<!-- ${UNAVAILABLE_MARK}([0-9TZ:.-]+) -->`).exec(comment) : null;
  return m?.[1] ?? null;
}

/** The comment with one notice line on top (an earlier notice replaced); undefined without a comment. */
function withUnavailableNotice(
  comment: string | undefined,
  since: string,
  reason: string,
  what: 'Metrics unavailable' | 'Cluster unreachable' = 'Metrics unavailable',
): string | undefined {
  if (comment === undefined) return undefined;
  const body = comment.replace(/^> ⚠️ (Metrics unavailable|Cluster unreachable) since [^\n]*\n\n/, '');
  return `> ⚠️ ${what} since ${since} (${inlineText(reason, 300)}): nothing is judged until it is back; retried every pass. <!-- ${UNAVAILABLE_MARK}${since} -->\n\n${body}`;
}

/** First come, first served by request time; unknown sorts last. */
function byRequest(a: MonitorCandidate, b: MonitorCandidate): number {
  const at = (c: MonitorCandidate) => c.requestedAt ?? Number.POSITIVE_INFINITY;
  return at(a) - at(b) || a.pr - b.pr;
}

/** Slurm's times are printed in UTC (our commands run with TZ=UTC), whatever the runner's zone. */
const slurmTs = slurmTimeToUnix;

/**
 * The monitor's Slurm port over the Slurm adapter: one `jobs(prefix)` call per experiment; a failed
 * job's log tail is read to classify its failure (src/slurm/classify.ts).
 */
export function slurmMonitorPort(
  slurm: SlurmClient,
  knownExperimentIds: readonly string[] = [],
): MonitorPorts['slurm'] {
  return {
    async jobs(experimentId) {
      const jobs = ownJobs(await slurm.jobs(`topo-${experimentId}-`), experimentId, knownExperimentIds);
      return Promise.all(
        jobs.map(async (j): Promise<MonitorJob> => {
          let failure: Failure | null = null;
          if (!isLive(j.state) && !(j.state === 'COMPLETED' && (j.exitCode ?? 0) === 0)) {
            const log = await slurm.tail(j, 200).catch(() => [] as string[]);
            failure = classifyFailure(j, log);
          }
          return {
            jobId: j.id,
            name: j.name,
            state: j.state,
            submitTs: slurmTs(j.submitTime),
            startTs: slurmTs(j.startTime),
            endTs: slurmTs(j.endTime),
            failure,
          };
        }),
      );
    },
    cancel: (jobId) => slurm.cancel(jobId),
  };
}

/**
 * Name of the monitor's check run on a pull request's head commit: one per commit, over all the
 * pull request's candidates at it (src/report/check-conclusion.ts pullRequestCheckRun), so branch
 * protection can require one fixed name whatever the candidates are called.
 */
export const MONITOR_CHECK_NAME = 'topo/monitor';

/**
 * The monitor's GitHub port over src/github: sticky comment `monitor-<candidate>`
 * (src/usecases/monitor-comment.ts), check run, state label.
 */
export function githubMonitorPort(
  octokit: Octokit,
  repo: { owner: string; repo: string; botLogin: string },
): MonitorPorts['github'] {
  const target = (pr: number) => ({
    owner: repo.owner,
    repo: repo.repo,
    issue_number: pr,
    botLogin: repo.botLogin,
  });
  return {
    readComment: (pr, candidate) => readMonitorComment(octokit, target(pr), candidate),
    async writeComment(pr, candidate, body) {
      await writeMonitorComment(octokit, target(pr), candidate, body);
    },
    async writeCheck(_pr, headSha, check) {
      await upsertCheckRun(octokit, {
        owner: repo.owner,
        repo: repo.repo,
        name: MONITOR_CHECK_NAME,
        head_sha: headSha,
        title: check.title,
        summary: check.summary,
        ...(check.conclusion ? { conclusion: check.conclusion } : {}),
      });
    },
    setLabel: (pr, state, current) =>
      setStateLabel(octokit, { owner: repo.owner, repo: repo.repo, issue_number: pr }, state, current),
  };
}
