// The monitor's reconcile pass: stateless, idempotent. For every experiment: its live candidates
// (from pull requests), their Slurm jobs (one call), their metrics (one query per quantity),
// the candidate state machine, then for each pull request whose content changed: its check run,
// its state label and its sticky comment (written last: it is the pass's commit marker). A pull
// request whose content did not change costs no write. Queued candidates are submitted when slots
// free; stable ones are stopped when the experiment asks for it.
import { createHash } from 'node:crypto';
import { compare } from '../analysis/comparison.js';
import { defaultRunEndMinutes } from '../analysis/detector.js';
import { explainFailure } from '../analysis/failure.js';
import { observeRun, type RunAnalysis, slurmTimeToMinutes } from '../analysis/observe.js';
import type { LabeledSeries } from '../analysis/series.js';
import { SCRAPE_INTERVAL_S, TIMELINE } from '../catalog/alpasim.js';
import { upsertCheckRun } from '../github/check-runs.js';
import type { Octokit } from '../github/client.js';
import { setStateLabel } from '../github/labels.js';
import { readStickyComment, upsertStickyComment } from '../github/sticky-comment.js';
import { inlineText } from '../github/user-text.js';
import { jobForRun } from '../lifecycle/jobs.js';
import { type Outcome, type Phase, phaseOf, type RunRecord, type RunRequest } from '../lifecycle/model.js';
import { parseObservationBlock } from '../report/observation-block.js';
import {
  type CandidateState,
  type CandidateView,
  renderMonitorComment,
  type TimelineEntry,
} from '../report/pr-comment.js';
import { classifyFailure } from '../slurm/classify.js';
import { slurmTimeToUnix } from '../slurm/parse.js';
import { isLive, type SlurmClient } from '../slurm/types.js';
import type { PrometheusClient } from '../telemetry/prometheus.js';
import { type ExperimentTelemetry, experimentSelector, fetchTelemetry } from '../telemetry/queries.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { CandidateObservation, Comparison, Failure, Interval } from '../types/generated/metrics.js';
import type { Topology } from '../types/generated/topology.js';
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
  /** Submits a queued candidate (idempotent by job name: the Slurm engineer's queue function). */
  submit(experiment: MonitorExperiment, candidate: MonitorCandidate): Promise<{ jobId: string } | undefined>;
  prometheus: PrometheusClient;
  github: {
    readComment(pr: number): Promise<string | undefined>;
    writeComment(pr: number, body: string): Promise<void>;
    writeCheck(pr: number, headSha: string, check: MonitorCheck): Promise<void>;
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

function checkFor(view: CandidateView): MonitorCheck {
  const v = view.observation.verdict;
  const value = v.value ?? null;
  const cmp = view.comparisons[0];
  const valueText = value ? `${value.value} s/rollout [${value.low}, ${value.high}]` : 'no stable value';
  const summary = [
    `State: ${view.state} · verdict: ${v.state}`,
    value
      ? `Projected full-run seconds per rollout: ${valueText}`
      : v.projected_full_run
        ? `Provisional projection: ${v.projected_full_run.value}`
        : '',
    cmp ? `Compared with ${cmp.against}: ${cmp.outcome}` : '',
    view.observation.failure
      ? `Failure: ${view.observation.failure.kind} — ${view.observation.failure.message}`
      : '',
  ]
    .filter(Boolean)
    .join('\n');
  if (view.state === 'failed')
    return {
      title: `Failed: ${view.observation.failure?.kind ?? 'unknown'}`,
      summary,
      conclusion: 'failure',
    };
  if (view.state === 'stable' || view.state === 'finished' || view.state === 'stopped')
    return value
      ? { title: `Stable: ${valueText}${cmp ? ` (${cmp.outcome})` : ''}`, summary, conclusion: 'success' }
      : { title: `Ended without a stable value (${v.state})`, summary, conclusion: 'neutral' };
  return { title: `${view.state}: ${v.state}`, summary };
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
  for (const exp of experiments) {
    try {
      report.candidates.push(...(await reconcileExperiment(ports, exp, options)));
    } catch (e) {
      report.errors.push(`${exp.experiment.experiment_id}: ${(e as Error).message}`);
      if (e instanceof ClusterUnreachable) await noteClusterUnreachable(ports, exp, e.message, report);
    }
  }
  return report;
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
      const current = await ports.github.readComment(c.pr);
      const since = unavailableSince(current) ?? iso(ports.now()) ?? '';
      const noted = withUnavailableNotice(current, since, reason, 'Cluster unreachable');
      if (noted !== undefined && noted !== current) await ports.github.writeComment(c.pr, noted);
    } catch (e) {
      report.errors.push(`#${c.pr}: ${(e as Error).message}`);
    }
  }
}

async function reconcileExperiment(
  ports: MonitorPorts,
  exp: MonitorExperiment,
  options: ReconcileOptions,
): Promise<CandidateOutcome[]> {
  const id = exp.experiment.experiment_id;
  const S = exp.timeScale;
  const scrape = exp.scrapeSeconds ?? SCRAPE_INTERVAL_S;
  const tick = options.tickSeconds ?? 60;
  const lag = options.lagSeconds ?? 2 * scrape;
  const evalTs = Math.floor((ports.now() - lag) / tick) * tick;
  const allJobs = await ports.slurm.jobs(id).catch((e: Error) => {
    throw new ClusterUnreachable(`Slurm: ${e.message}`);
  });
  const jobByRun = new Map<string, MonitorJob>();
  for (const name of new Set(allJobs.map((j) => j.name))) {
    const job = jobForRun(allJobs, name, (j) => ({ id: j.jobId, name: j.name, state: j.state }));
    if (job) jobByRun.set(name, job);
  }

  // The lifecycle decides what each Request needs (src/lifecycle/model.ts phaseOf).
  const candidates: MonitorCandidate[] = [];
  for (const c of exp.candidates) {
    const kept = await applyLifecycle(ports, id, c, jobByRun.get(c.runName));
    if (kept) candidates.push(kept);
  }

  // submit queued candidates while slots are free: strictly by request time (then the older pull request)
  const maxParallel = exp.experiment.max_parallel ?? 3;
  let live = new Set(allJobs.filter((j) => LIVE.has(j.state)).map((j) => j.name)).size;
  const submitted = new Map<string, string>();
  for (const c of [...candidates].sort(byRequest)) {
    if (live >= maxParallel) break;
    if (!c.requested || jobByRun.has(c.runName)) continue;
    const r = await ports.submit(exp, c);
    if (r) {
      submitted.set(c.runName, r.jobId);
      jobByRun.set(c.runName, { jobId: r.jobId, name: c.runName, state: 'PENDING', submitTs: null });
      live++;
      if (c.request)
        await ports.lifecycle?.recordRun(c.pr, c.request.id, {
          jobId: r.jobId,
          submittedAt: new Date(ports.now() * 1000).toISOString(),
        });
    }
  }

  // metrics: one query per quantity for the whole experiment, over the jobs that have run
  const started = candidates.map((c) => jobByRun.get(c.runName)).filter((j): j is MonitorJob => !!j?.startTs);
  let telemetry: ExperimentTelemetry | undefined;
  if (started.length) {
    const start = Math.floor(Math.min(...started.map((j) => j.startTs as number)) / scrape) * scrape;
    telemetry = await fetchTelemetry(
      exp.prometheus ?? ports.prometheus,
      experimentSelector(id),
      { start, end: Math.max(evalTs, start), stepSeconds: scrape },
      { timeScale: S, scrapeSeconds: scrape },
    );
  }

  const wall = exp.experiment.fixed_inputs.slurm?.time
    ? slurmTimeToMinutes(exp.experiment.fixed_inputs.slurm.time)
    : null;
  const fi = exp.experiment.fixed_inputs;
  const expectedRollouts = fi.scene_count ? fi.scene_count * (fi.rollouts_per_scene ?? 1) : null;
  const outcomes: CandidateOutcome[] = [];
  // An outage is an outage: with any quantity unreadable, nothing is judged, failed or recorded.
  const unavailable = telemetry?.errors.length
    ? `Prometheus: ${telemetry.errors[0]?.quantity}: ${telemetry.errors[0]?.message}`
    : null;
  for (const c of candidates) {
    const job = jobByRun.get(c.runName);
    let analysis: RunAnalysis | undefined;
    if (job?.startTs) {
      const nowTs = job.endTs && !LIVE.has(job.state) ? Math.min(evalTs, job.endTs) : evalTs;
      analysis = observeRun({
        runName: c.runName,
        series: seriesOf(telemetry, c.runName),
        timeScale: S,
        nowTs,
        stepSeconds: scrape,
        jobStartTs: job.startTs,
        wallMinutes: wall ?? defaultRunEndMinutes() + TIMELINE.startupMinutes,
        expectedRollouts,
        topology: c.topology,
        settings: exp.experiment.stabilisation,
        missing: telemetry?.missing,
        ended: !LIVE.has(job.state),
      });
      // no telemetry at all: starting for a while, then a failure of its own
      const minutesRunning = ((nowTs - job.startTs) * S) / 60;
      const deadline = options.telemetryDeadlineMinutes ?? 3 * TIMELINE.startupMinutes;
      if (
        !unavailable &&
        analysis.startTs === null &&
        (!LIVE.has(job.state) || minutesRunning >= deadline) &&
        !job.failure
      )
        analysis.observation.failure = {
          kind: 'no-telemetry',
          message: `no metrics for run_name="${c.runName}" ${Math.round(minutesRunning)} run-minutes after the job started`,
        };
    }
    // The comment is the durable memory of the last pass: a run that ended keeps the verdict its
    // last live pass reached (the data up to the stop is the same; a window rule may flip at the cut).
    const current = await ports.github.readComment(c.pr);
    const previous = current ? parseObservationBlock(current) : undefined;
    const ended = job !== undefined && !LIVE.has(job.state);
    if (
      analysis &&
      ended &&
      previous?.run_name === c.runName &&
      isStable(previous.verdict.state) &&
      !isStable(analysis.observation.verdict.state)
    ) {
      const note = 'verdict of the last pass before the run ended';
      const evidence = previous.verdict.evidence.includes(note)
        ? previous.verdict.evidence
        : [...previous.verdict.evidence, note];
      analysis.observation.verdict = { ...previous.verdict, evidence };
    }
    const stoppedByUs = job?.state === 'CANCELLED' && exp.experiment.stop_when_stable === true;
    let state = candidateState(job, c.requested, analysis, stoppedByUs);
    if (state === null) continue; // not asked to run: the validate workflow owns its comment
    const observation: CandidateObservation = analysis?.observation ?? {
      run_name: c.runName,
      verdict: {
        state: 'no-data',
        evidence: [job ? `Slurm job ${job.jobId} is ${job.state}` : 'waiting for a free slot'],
      },
      stable_metrics: {},
    };
    if (observation.failure?.kind === 'no-telemetry') state = 'failed';
    if (state === 'failed') {
      const failure: Failure = job?.failure ??
        observation.failure ?? {
          kind: job?.state === 'CANCELLED' ? 'cancelled' : job?.state === 'TIMEOUT' ? 'time-limit' : 'crash',
          message: `Slurm job ${job?.jobId} ended ${job?.state}`,
          slurm_state: job?.state,
        };
      observation.failure = explainFailure(failure, {
        topology: c.topology,
        gpus: observation.stable_metrics.resource_usage?.gpu_by_index,
      });
    }
    const comparisons = compareCandidate(exp, c, observation);

    const timeline: TimelineEntry[] = [
      { label: 'submitted', at: iso(job?.submitTs) },
      { label: 'started', at: iso(job?.startTs) },
      { label: 'first metrics', at: iso(analysis?.startTs) },
      {
        label: 'warm-up ended',
        at:
          analysis?.startTs && observation.verdict.warmup_end_minutes != null
            ? iso(Math.round(analysis.startTs + (observation.verdict.warmup_end_minutes * 60) / S))
            : null,
      },
      { label: 'ended', at: job && !LIVE.has(job.state) ? iso(job.endTs) : null },
    ];
    const view: CandidateView = {
      experimentId: id,
      candidate: c.candidate,
      runName: c.runName,
      state,
      jobId: job?.jobId ?? null,
      slurmState: job?.state ?? null,
      timeline,
      observation,
      comparisons,
      chart: analysis?.chart,
      opportunities: analysis?.opportunities,
      queries: telemetry?.queries.map((q) => ({ quantity: q.quantity, query: q.query, source: q.source })),
      grafanaUrl: exp.grafanaUrl ?? null,
      timeRange: analysis?.startTs
        ? {
            fromMs: analysis.startTs * 1000,
            toMs: job?.endTs && !LIVE.has(job.state) ? job.endTs * 1000 : null,
          }
        : null,
      notes: telemetry?.errors.map((e) => `Prometheus error for ${e.quantity}: ${e.message}`),
    };

    let cancelled: string | undefined;
    if (!unavailable && job && LIVE.has(job.state) && stopReason(exp.experiment, view) !== null) {
      await ports.slurm.cancel(job.jobId, id);
      cancelled = job.jobId;
    }

    if (unavailable && job?.startTs) {
      // Keep the last judged comment, say since when the metrics are missing, retry next pass.
      const since = unavailableSince(current) ?? iso(ports.now()) ?? '';
      const noted = withUnavailableNotice(current, since, unavailable);
      const changed = noted !== undefined && noted !== current;
      if (changed) await ports.github.writeComment(c.pr, noted as string);
      outcomes.push({
        experimentId: id,
        candidate: c.candidate,
        runName: c.runName,
        pr: c.pr,
        state,
        verdict: observation.verdict.state,
        changed,
        submitted: submitted.get(c.runName),
        view: { ...view, notes: [...(view.notes ?? []), `metrics unavailable since ${since}`] },
      });
      continue;
    }

    const body = renderMonitorComment(view);
    const hash = contentHash(body);
    // An ended run's comment is final once the data has settled (a few scrapes after the end):
    // later passes leave it alone even if Prometheus drops or ages the run's series.
    const finalMark =
      job && ended && job.endTs && evalTs >= job.endTs + 3 * scrape ? ` ${FINAL_MARK}${job.jobId}` : '';
    const full = `${body}\n<!-- ${HASH_MARK}${hash}${finalMark} -->`;
    const isFinal = job !== undefined && !!current?.includes(`${FINAL_MARK}${job.jobId} -->`);
    let changed = false;
    const wasUnavailable = !!current?.includes(UNAVAILABLE_MARK);
    if (!isFinal && (wasUnavailable || !current?.includes(`${HASH_MARK}${hash}${finalMark} -->`))) {
      await ports.github.writeCheck(c.pr, c.headSha, checkFor(view));
      await ports.github.setLabel(c.pr, labelFor(state, !!observation.verdict.value), c.labels);
      await ports.github.writeComment(c.pr, full);
      changed = true;
    }
    // The run's Outcome, once its comment is final: judged as of the job's end, written once.
    if (finalMark && job && c.request && !c.outcome)
      await ports.lifecycle?.recordOutcome(
        c.pr,
        c.request.id,
        finalOutcome(view, job, iso(job.endTs) ?? new Date(ports.now() * 1000).toISOString()),
      );
    outcomes.push({
      experimentId: id,
      candidate: c.candidate,
      runName: c.runName,
      pr: c.pr,
      state,
      verdict: observation.verdict.state,
      changed,
      submitted: submitted.get(c.runName),
      cancelled,
      view,
    });
  }
  return outcomes;
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
      await ports.github.setLabel(c.pr, null, c.labels);
      return null;
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
      await ports.github.setLabel(c.pr, null, c.labels);
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
 * THE comparison of a candidate (the one place): against the current best, then the baseline;
 * the first one is written into the observation. The lead adds h13's sequential decision here
 * (`observation.decision = decide…(…)`), next to the comparison it refines.
 */
export function compareCandidate(
  exp: MonitorExperiment,
  c: MonitorCandidate,
  observation: CandidateObservation,
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
  if (comparisons[0]) observation.comparison = comparisons[0];
  return comparisons;
}

/**
 * THE stop decision of a running candidate (the one place): why to stop it now, or null. Today:
 * stop_when_stable. The lead adds h13's sequential decision here (experiment.stop_when_decided,
 * default true: stop once `view.observation.decision` is better|worse|equivalent). Never called
 * while metrics are unavailable.
 */
export function stopReason(experiment: Experiment, view: CandidateView): string | null {
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

/** Name of the monitor's check run on a candidate's head commit. */
export const MONITOR_CHECK_NAME = 'topo/monitor';

/** The monitor's GitHub port over src/github: sticky comment `monitor`, check run, state label. */
export function githubMonitorPort(
  octokit: Octokit,
  repo: { owner: string; repo: string; botLogin: string },
): MonitorPorts['github'] {
  const target = (pr: number) => ({
    owner: repo.owner,
    repo: repo.repo,
    issue_number: pr,
    purpose: 'monitor',
    botLogin: repo.botLogin,
  });
  return {
    readComment: (pr) => readStickyComment(octokit, target(pr)),
    async writeComment(pr, body) {
      await upsertStickyComment(octokit, { ...target(pr), body });
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
