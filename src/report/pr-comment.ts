// The monitor's sticky comment (and the job summary): state and timeline, metrics table, verdict
// with evidence and the queries behind it, decision, a Mermaid chart, a Grafana link and the
// hidden machine-readable block. Pure and deterministic: the same inputs give the same text, so an
// unchanged pull request costs no write.
import { savingsText } from '../analysis/decision.js';
import { type Figure, runFigure } from '../analysis/figure.js';
import { decisionReference } from '../analysis/reference.js';
import type { Sample } from '../analysis/series.js';
import { round } from '../analysis/series.js';
import { chartLegend, lineChart } from '../chart/mermaid.js';
import { inlineText } from '../github/user-text.js';
import type { CandidateState } from '../judge/state.js';
import { isLive as isLiveStatus, statusOf, statusWord } from '../slurm/types.js';
import { grafanaDashboardUrl } from '../telemetry/grafana.js';
import type { CandidateObservation, Interval } from '../types/generated/metrics.js';
import { type MonitorCheckRun, monitorCheckRun, pct } from './check-conclusion.js';
import { renderObservationBlock } from './observation-block.js';
import { code, describeReference, OUTCOME_ICON, type Standing, standingOf } from './standing.js';

export interface TimelineEntry {
  label: string;
  /** ISO time, or null when not reached. */
  at: string | null;
}

export interface QueryShown {
  quantity: string;
  query: string;
  source: 'rule' | 'raw';
}

export interface CandidateView {
  experimentId: string;
  candidate: string;
  runName: string;
  state: CandidateState;
  jobId?: string | null;
  slurmState?: string | null;
  timeline: TimelineEntry[];
  observation: CandidateObservation;
  chart?: { fullRun: Sample[]; rate5m: Sample[] };
  opportunities?: string[];
  queries?: QueryShown[];
  /** Grafana base URL (e.g. http://127.0.0.1:3003); no link without it. */
  grafanaUrl?: string | null;
  /** Unix ms of the run's first sample and of the evaluation, for the Grafana range. */
  timeRange?: { fromMs: number; toMs: number | null } | null;
  notes?: string[];
  /** The experiment's min_improvement (default 0.02) when the observation has no decision. */
  minImprovement?: number;
  /**
   * The job's Slurm state once it ended (COMPLETED, CANCELLED, FAILED, TIMEOUT, …). Shown instead
   * of `slurmState` in a final comment; a terminal view never shows a live Slurm state.
   */
  finalJobState?: string | null;
  /** Who ended the job: `/topo stop` (user), the monitor on the decision, or on a stable verdict. */
  stoppedBy?: 'user' | 'decision' | 'stable' | 'no-longer-needed' | null;
  /** The monitor cancels the job itself once decided (experiment stop_when_decided, default true). */
  stopWhenDecided?: boolean;
  /** Reference lines of the chart and the throughput comparison (projected s/rollout). */
  baseline?: { name: string; secondsPerRollout: number } | null;
  best?: { name: string; secondsPerRollout: number } | null;
  /** Minutes between rewrites of a running candidate's comment (shown in the next step); absent outside a pull request (the CLI). */
  commentIntervalMinutes?: number;
  /** URL of the experiment's committed chart (experiments/<id>.svg on the default branch), linked under the chart. */
  recordChartUrl?: string | null;
  /** The round's reference as this candidate is decided against it (issue 38): its job beside it, or the recorded run. */
  referenceJob?: ReferenceJobLine | null;
  /**
   * What sacct said when the cluster's accounting did not answer this pass (slurmdbd down): the
   * headline, so the comment and the check run, says the pass read live jobs from squeue alone.
   */
  accountingUnreachable?: string | null;
}

/** The reference a candidate is decided against, as its comment shows it. */
export interface ReferenceJobLine {
  /** "current best `model-1`". */
  name: string;
  /** Its job beside the candidates; null: the recorded run (then `note` says why). */
  run: {
    runName: string;
    pr: number;
    jobId: string | null;
    /** Slurm's state, or "queued" before it has a job. */
    state: string;
    grafanaUrl: string | null;
    /** GPU-minutes its job held so far (elapsed × GPUs). */
    gpuMinutes: number | null;
    /** Why this pass stops it (no open decision needs it any more), if it does. */
    stopping: string | null;
  } | null;
  note: string | null;
}

/** "Reference: current best `a`, run `r` beside it (#3, Slurm job 7: RUNNING) · 120 GPU-minutes · Grafana". */
export function referenceJobText(r: ReferenceJobLine): string {
  const run = r.run;
  if (!run) return `Reference: ${r.name} as recorded${r.note ? ` (${r.note})` : ''}`;
  const where = `#${run.pr}, `;
  const job = run.jobId ? `Slurm job ${run.jobId}: ${run.state}` : run.state;
  const cost = run.gpuMinutes === null ? '' : ` · ${Math.round(run.gpuMinutes)} GPU-minutes`;
  const link = run.grafanaUrl ? ` · [Grafana](${run.grafanaUrl})` : '';
  const stop = run.stopping ? ` · stopped now: ${run.stopping}` : '';
  return `Reference: ${r.name}, run ${code(run.runName)} beside this candidate (${where}${job})${cost}${link}${stop}`;
}

const STATE_ICON: Record<CandidateState, string> = {
  queued: '⏳',
  submitted: '📨',
  starting: '🚀',
  warming: '🔥',
  stabilising: '📈',
  stable: '✅',
  finished: '🏁',
  stopped: '⏹️',
  failed: '❌',
};

function fmt(x: number | null | undefined, digits = 3): string {
  return x === null || x === undefined || !Number.isFinite(x) ? '—' : String(round(x, digits));
}

function fmtInterval(i: Interval | null | undefined): string {
  return i ? `${fmt(i.value)} [${fmt(i.low)}, ${fmt(i.high)}]` : '—';
}

/** Escapes a value for a Markdown table cell. */
function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function grafanaLink(
  base: string,
  runName: string,
  range?: { fromMs: number; toMs: number | null } | null,
): string {
  return grafanaDashboardUrl(base, { runName }, range);
}

/** The standing of a view: the one answer shared by the headline, the check run and the summary. */
export function viewStanding(v: CandidateView): Standing {
  return standingOf({
    state: v.state,
    failure: v.observation.failure ?? null,
    decision: v.observation.decision ?? null,
    hasValue: !!v.observation.verdict.value,
    minImprovement: v.minImprovement,
    minutesOfData: v.observation.verdict.minutes_of_data ?? null,
  });
}

/** "by 12.3% [95% interval 8.1%–16.0%]" of a relative change (negative is faster). */
function byHowMuch(change: Interval | null | undefined): string {
  if (!change) return '';
  const [a, b] = [Math.abs(change.low), Math.abs(change.high)].sort((x, y) => x - y);
  const crosses = change.low < 0 && change.high > 0;
  return crosses
    ? ` (${signed(change.value)}, 95% interval ${signed(change.low)} to ${signed(change.high)})`
    : ` by ${pct(change.value)} [95% interval ${pct(a as number)}–${pct(b as number)}]`;
}

function signed(x: number): string {
  return `${x > 0 ? '+' : x < 0 ? '−' : '±'}${pct(x)}`;
}

function headlineText(s: Standing): string {
  const ref = s.against ?? 'the reference';
  switch (s.outcome) {
    case 'better':
      return `better than ${ref}${byHowMuch(s.change)}`;
    case 'worse':
      return `worse than ${ref}${byHowMuch(s.change)}`;
    case 'equivalent':
      return `within ±${pct(s.minImprovement)} (min_improvement) of ${ref}${byHowMuch(s.change)}`;
    case 'not-better':
      return `not ${pct(s.minImprovement)} (min_improvement) faster than ${ref}: it cannot win${s.change ? ` (${signed(s.change.value)}, 95% interval ${signed(s.change.low)} to ${signed(s.change.high)})` : ''}`;
    case 'better-at-equal-age':
      return `better than ${ref} at equal run age${byHowMuch(s.change)}; it keeps running until a drift against it over the full run is ruled out (the full-run guard)`;
    case 'faster-drift-not-ruled-out':
      return `faster than ${ref} at equal run age${byHowMuch(s.change)}; drift not ruled out: a drift against it could undo the gain over the full run`;
    case 'reference':
      return 'the reference the candidates are compared with';
    case 'failed':
      return `failed (${s.reason ?? 'unknown'})`;
    case 'undecided':
      return `ended without a decision: ${s.reason ?? 'no value'}`;
    default: {
      const eta =
        s.expectedMinutes != null
          ? `about ${Math.ceil(s.expectedMinutes)} more run-minutes to a decision`
          : '';
      const sofar = s.change ? `so far ${signed(s.change.value)} against ${ref}` : '';
      return `measuring${eta || sofar ? ` — ${[eta, sofar].filter(Boolean).join('; ')}` : ''}`;
    }
  }
}

/** "1,056": thousands separated, locale-independent. */
function thousands(x: number): string {
  return String(Math.round(x)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function throughput(seconds: number): string {
  return `${fmt(seconds, 3)} s per rollout · ${thousands(3600 / seconds)} rollouts per hour`;
}

/** The candidate's figure: THE figure of its judgement (src/analysis/figure.ts), read from its observation. */
export function viewFigure(v: CandidateView): Figure | null {
  const o = v.observation;
  return runFigure({
    decision: o.decision,
    verdict: o.verdict,
    reading: o.stable_metrics.seconds_per_rollout_full_run,
  });
}

/** What a figure is, in words, for the value line. */
function figureBasis(f: Figure): string {
  const range = f.low < f.high ? `, 95% interval ${fmt(f.low)}–${fmt(f.high)} s` : '';
  switch (f.basis) {
    case 'decision':
      return `as decided: ${signed(f.reference?.change?.value ?? 0)} against ${code(f.reference?.name ?? '')} at ${fmt(f.reference?.value)} s${range}`;
    case 'projection':
      return `the detector's projected full run${range}`;
    case 'estimate':
      return `decision estimate so far${range}`;
    default:
      return 'full run so far, start-up included; no projection yet';
  }
}

/** The value line: the candidate's figure beside rollouts per hour, and the reference's. */
function valueLine(v: CandidateView): string | undefined {
  const f = viewFigure(v);
  const ref = f?.reference
    ? { name: f.reference.name, secondsPerRollout: f.reference.value }
    : (v.best ?? v.baseline);
  const refText =
    ref && ref.secondsPerRollout > 0 && ref.name !== v.candidate
      ? ` · reference ${code(ref.name)}: ${throughput(ref.secondsPerRollout)}`
      : '';
  if (f && f.value > 0) return `**${throughput(f.value)}** (${figureBasis(f)})${refText}`;
  return undefined;
}

function isLive(v: CandidateView): boolean {
  return !TERMINAL.has(v.state) && !!v.jobId && !!v.slurmState && isLiveStatus(statusOf(v.slurmState));
}

/** The one next step. */
export function nextStep(v: CandidateView, s: Standing = viewStanding(v)): string {
  const ref = s.against ?? 'the reference';
  const free = isLive(v) && v.stopWhenDecided === false ? ' `/topo stop` frees the node now.' : '';
  switch (s.outcome) {
    case 'better':
      return `**Recommended: merge — best so far.**${free}`;
    case 'worse':
      return `**Close: slower than ${ref}.**${free}`;
    case 'equivalent':
      return `**Close unless you prefer it for another reason: no faster than ${ref}.**${free}`;
    case 'not-better':
      return `**Close: it cannot be ${pct(s.minImprovement)} faster than ${ref}.**${free}`;
    case 'better-at-equal-age':
      return `**Keep it running: it leads ${ref} at equal run age; the full-run guard settles whether to merge.**`;
    case 'faster-drift-not-ruled-out':
      return `**Your call: faster than ${ref} at equal run age, but a drift that could undo it over the full run is not ruled out. Re-run with \`/topo submit\` to measure it longer, or merge knowing that.**`;
    case 'reference':
      return '**Keep: candidates are compared with this run.**';
    case 'failed':
      return v.observation.failure?.likely_fix
        ? `**Fix and push again:** ${v.observation.failure.likely_fix}`
        : '**Close or fix it: the failure is below.**';
    case 'undecided':
      return '**Re-run with `/topo submit` for a longer measurement, or close.**';
    default:
      if (v.state === 'queued') return 'Nothing to do: waiting for a free slot.';
      // Only the monitor edits a comment in place; a terminal (topo analyze) reads once.
      return v.commentIntervalMinutes === undefined
        ? 'Nothing to do yet: the decision comes once the run has enough data; run this command again later.'
        : `Nothing to do yet: this comment is updated at least every ${v.commentIntervalMinutes} min, and at once when the decision comes.`;
  }
}

const TERMINAL = new Set<CandidateState>(['finished', 'stopped', 'failed']);

/** "Slurm job 42: CANCELLED by `/topo stop`"; never a live state once the candidate ended. */
export function jobLine(v: CandidateView): string {
  if (!v.jobId) return v.state === 'queued' ? 'No Slurm job yet (queued)' : 'No Slurm job';
  const terminal = TERMINAL.has(v.state);
  let state = v.finalJobState ?? v.slurmState ?? null;
  if (terminal && state && isLiveStatus(statusOf(state)))
    state = v.stoppedBy ? statusWord('cancelled') : 'ended';
  const by =
    state && statusOf(state) === 'cancelled' && v.stoppedBy
      ? v.stoppedBy === 'user'
        ? ' by `/topo stop`'
        : v.stoppedBy === 'decision'
          ? ' by the decision'
          : v.stoppedBy === 'no-longer-needed'
            ? ' once no open decision needed this reference'
            : ' once stable'
      : '';
  const d = v.observation.decision;
  const savings = d ? savingsText(d) : null;
  const savedText = by && savings ? ` (${savings})` : '';
  return `Slurm job ${v.jobId}${state ? `: ${state}${by}${savedText}` : ''}`;
}

/** The headline's first line (without its Markdown heading): what `topo watch` and `topo record` print. */
export function headlineLine(candidate: string, s: Standing): string {
  return `${OUTCOME_ICON[s.outcome]} ${code(candidate)}: ${headlineText(s)}`;
}

/** The first lines of the comment: better or worse, by how much, how sure, what next. */
export function renderHeadline(v: CandidateView): string[] {
  const s = viewStanding(v);
  const out = [`### ${headlineLine(v.candidate, s)}`, ''];
  const value = valueLine(v);
  if (value) out.push(value, '');
  out.push(nextStep(v, s), '');
  out.push(
    `${jobLine(v)} · ${STATE_ICON[v.state]} ${v.state} · run ${code(v.runName)} · experiment ${code(v.experimentId)}`,
    '',
  );
  if (v.referenceJob) out.push(referenceJobText(v.referenceJob), '');
  if (v.accountingUnreachable) out.push(accountingLine(v.accountingUnreachable), '');
  return out;
}

/** The headline's notice while slurmdbd is down (issue 40): what still works and what waits. */
export function accountingLine(problem: string): string {
  return `> ⚠️ ${ACCOUNTING_UNREACHABLE} (${inlineText(problem, 200)}): live jobs are read from squeue, so decisions and stops go on; a job that ended and that the controller forgot is unknown until accounting answers again.`;
}

/** The words that open the notice (src/monitor/comment.ts notices a change of it). */
export const ACCOUNTING_UNREACHABLE = 'Slurm accounting is unreachable';

/**
 * The monitor's check run for a candidate: the decision as its conclusion (see check-conclusion.ts)
 * and the comment's headline as its summary. Replaces the check run that was green for every
 * stable run.
 */
export function monitorCheck(v: CandidateView): MonitorCheckRun {
  return monitorCheckRun(viewStanding(v), renderHeadline(v).join('\n'));
}

/**
 * The detector's verdict, labelled as what it is (the full-run value's stabilisation, start-up
 * included), then the decision.
 */
function verdictSection(v: CandidateView): string[] {
  const o = v.observation;
  const verdict = o.verdict;
  const d = o.decision;
  const out = [`#### Detector verdict: \`${verdict.state}\` (the full-run value, start-up included)`, ''];
  if (verdict.value)
    out.push(
      `Projected full-run seconds per rollout at the end of the run (the detector's, start-up included): ${fmtInterval(verdict.value)} (95% interval)${d ? '; the decision reads the rollouts after the first wave instead' : ''}`,
      '',
    );
  else if (verdict.projected_full_run)
    out.push(
      `The detector's provisional full-run projection (start-up included, not stable yet): ${fmtInterval(verdict.projected_full_run)}`,
      '',
    );
  if (verdict.cycle)
    out.push(
      `Cyclic steady state: period ${fmt(verdict.cycle.period_minutes, 1)} min, amplitude ±${fmt(100 * (verdict.cycle.amplitude_relative ?? 0), 1)}% (topology cannot fix cycles)`,
      '',
    );
  if (o.failure) {
    out.push(`**Failure (${o.failure.kind}):** ${o.failure.message}`);
    if (o.failure.likely_fix) out.push(`Likely fix: ${o.failure.likely_fix}`);
    for (const e of o.failure.evidence ?? []) out.push(`- ${e}`);
    out.push('');
  }
  if (d) {
    out.push(
      `Decision (${d.method ?? 'sequential'}): \`${d.state}\` against ${describeReference(d.reference)}, min_improvement ${pct(d.min_improvement)}${d.decided_at_minutes != null ? `, decided at run-minute ${fmt(d.decided_at_minutes, 1)}` : ''}${d.gpu_minutes_used != null ? ` · ${fmt(d.gpu_minutes_used, 0)} GPU-minutes used` : ''}${savingsText(d) ? ` · ${savingsText(d)}` : ''}`,
    );
    for (const e of d.evidence) out.push(`- ${e}`);
    out.push('');
  }
  if (verdict.evidence.length)
    out.push('Evidence of the verdict:', '', ...verdict.evidence.map((e) => `- ${e}`), '');
  return out;
}

/** The metrics table, the queue depths by service. */
function metricsSection(v: CandidateView): string[] {
  const verdict = v.observation.verdict;
  const m = v.observation.stable_metrics;
  const f = viewFigure(v);
  const out = ['#### Metrics', '', '| Metric | Value |', '|---|---|'];
  const row = (k: string, val: string) => out.push(`| ${k} | ${cell(val)} |`);
  if (f) row(`s/rollout (${f.basis === 'decision' ? 'as decided' : 'shown above'})`, fmtInterval(f));
  row('Full-run s/rollout so far (start-up included)', fmt(m.seconds_per_rollout_full_run));
  row('5-min s/rollout (diagnostic)', fmt(m.seconds_per_rollout_5m));
  row('Steady s/rollout after warm-up', fmtInterval(verdict.steady_seconds_per_rollout));
  row("Detector's projected full-run s/rollout (start-up included)", fmtInterval(verdict.projected_full_run));
  row('Completed / failed rollouts', `${fmt(m.completed_rollouts, 0)} / ${fmt(m.failed_rollouts, 0)}`);
  row(
    'Run-minutes of data / warm-up ends at',
    `${fmt(verdict.minutes_of_data, 1)} / ${fmt(verdict.warmup_end_minutes, 1)}`,
  );
  row(
    'Runtime event-loop idle',
    m.runtime_idle_fraction == null ? '—' : `${fmt(100 * m.runtime_idle_fraction, 0)}%`,
  );
  row('Rollout duration p95 (s)', fmt(m.rollout_duration_p95_s));
  out.push('');
  const queue = Object.entries(m.rpc_queue_depth_at_start_latest_by_service ?? {});
  if (queue.length) {
    out.push('| Service | Queue depth min | Queue depth max |', '|---|---|---|');
    for (const [svc, q] of queue) out.push(`| ${svc} | ${fmt(q.worker_min, 1)} | ${fmt(q.worker_max, 1)} |`);
    out.push('');
  }
  return out;
}

/** Per-GPU use, host memory, the bottleneck and the opportunities. */
function resourcesSection(v: CandidateView): string[] {
  const m = v.observation.stable_metrics;
  const out: string[] = [];
  const gpus = Object.entries(m.resource_usage?.gpu_by_index ?? {});
  if (gpus.length) {
    out.push(
      '| GPU | Services | Util % min/mean/max | Memory GB min/mean/max | Total GB | Pressure % max | Headroom GB min |',
      '|---|---|---|---|---|---|---|',
    );
    const mm = (x: { min?: number | null; mean?: number | null; max?: number | null } | undefined, d = 0) =>
      `${fmt(x?.min, d)} / ${fmt(x?.mean, d)} / ${fmt(x?.max, d)}`;
    for (const [g, u] of gpus)
      out.push(
        `| ${g} | ${cell((u.topology_services ?? []).join(', ') || '—')} | ${mm(u.utilization_percent)} | ${mm(u.memory_used_gb, 1)} | ${fmt(u.memory_total_gb, 1)} | ${fmt(u.memory_pressure_percent?.max, 0)} | ${fmt(u.memory_headroom_gb_min, 1)} |`,
      );
    out.push('');
  }
  const host = m.resource_usage?.host_memory;
  if (host && (host.available_gb_min != null || host.total_gb != null))
    out.push(
      `Host memory: ${fmt(host.available_gb_min, 1)} GB free at least, of ${fmt(host.total_gb, 1)} GB.`,
      '',
    );
  if (m.bottleneck) {
    const b = m.bottleneck;
    out.push(`**Bottleneck:** ${b.kind}${b.service ? ` (${b.service})` : ''}, confidence ${b.confidence}`);
    out.push(...b.evidence.map((e) => `- ${e}`), '');
  }
  if (v.opportunities?.length) out.push('**Opportunities:**', ...v.opportunities.map((e) => `- ${e}`), '');
  return out;
}

/** The chart, the links, the telemetry gaps, the notes and the queries. */
function linksSection(v: CandidateView): string[] {
  const out: string[] = [];
  const chart = secondsChart(v);
  if (chart)
    out.push('<details><summary>Chart: seconds per rollout</summary>', '', chart, '', '</details>', '');
  if (v.recordChartUrl)
    out.push(`[The experiment's candidates with 95% intervals (SVG)](${encodeURI(v.recordChartUrl)})`, '');
  if (v.grafanaUrl) out.push(`[Open in Grafana](${grafanaLink(v.grafanaUrl, v.runName, v.timeRange)})`, '');
  const missing = v.observation.stable_metrics.telemetry_quality?.missing_metrics ?? [];
  if (missing.length) out.push(`Telemetry gaps: no data for ${missing.join(', ')}.`, '');
  for (const n of v.notes ?? []) out.push(`> ${n}`, '');
  if (v.queries?.length) {
    out.push('<details><summary>Queries behind this verdict</summary>', '', '```promql');
    for (const q of v.queries)
      out.push(`# ${q.quantity} (${q.source === 'rule' ? 'recording rule' : 'raw fallback'})`, q.query);
    out.push('```', '', '</details>', '');
  }
  return out;
}

/** The body of the monitor's sticky comment for one candidate: the decision first, details collapsed. */
export function renderMonitorComment(v: CandidateView): string {
  const reached = v.timeline.filter((t) => t.at);
  return [
    ...renderHeadline(v),
    '<details><summary>Verdict, metrics and resources</summary>',
    '',
    ...(reached.length ? [`**Timeline:** ${reached.map((t) => `${t.label} ${t.at}`).join(' → ')}`, ''] : []),
    ...verdictSection(v),
    ...metricsSection(v),
    ...resourcesSection(v),
    '</details>',
    '',
    ...linksSection(v),
    renderObservationBlock(v.observation),
  ].join('\n');
}

/**
 * The run's seconds per rollout against its reference lines. A candidate with a decided figure is
 * drawn at it (a `better` one below its reference) beside its 5-minute rate; the full run so far,
 * start-up included, is drawn only while there is no decided figure.
 */
function secondsChart(v: CandidateView): string {
  if (!v.chart || !(v.chart.fullRun.length || v.chart.rate5m.length)) return '';
  const f = viewFigure(v);
  const series = [
    ...(f?.basis === 'decision'
      ? []
      : [{ name: 'full-run s/rollout so far (start-up included)', samples: v.chart.fullRun }]),
    { name: '5-min s/rollout', samples: v.chart.rate5m },
  ];
  const references: Array<{ name: string; value: number }> = [];
  if (f && f.basis !== 'reading')
    references.push({ name: `${v.candidate} ${figureLabel(f)}`, value: f.value });
  if (v.baseline && v.baseline.name !== v.candidate)
    references.push({
      name: describeReference(decisionReference('baseline', v.baseline.name)),
      value: v.baseline.secondsPerRollout,
    });
  if (v.best && v.best.name !== v.candidate && v.best.name !== v.baseline?.name)
    references.push({
      name: describeReference(decisionReference('current best', v.best.name)),
      value: v.best.secondsPerRollout,
    });
  const top = Math.max(
    f?.value ?? v.observation.stable_metrics.seconds_per_rollout_full_run ?? 0,
    ...references.map((r) => r.value),
  );
  const chart = lineChart(series, {
    title: 'Seconds per rollout (lower is better)',
    xLabel: 'run minutes',
    yLabel: 's/rollout',
    yMax: top > 0 ? top * 2 : undefined,
    references,
  });
  return chart ? `${chart}\n\n${chartLegend(series, references)}` : '';
}

function figureLabel(f: Figure): string {
  return f.basis === 'decision'
    ? 'as decided'
    : f.basis === 'projection'
      ? "(the detector's projected full run)"
      : '(decision estimate so far)';
}

/** The job summary: every candidate of the pass, same content as the comments. */
export function renderJobSummary(views: readonly CandidateView[]): string {
  if (!views.length) return '## topo monitor\n\nNo live candidates.\n';
  const table = [
    '## topo monitor',
    '',
    '| Experiment | Candidate | State | Verdict | s/rollout | Decision |',
    '|---|---|---|---|---|---|',
    ...views.map(
      (v) =>
        `| ${v.experimentId} | ${v.candidate} | ${v.state} | ${v.observation.verdict.state} | ${fmtInterval(viewFigure(v))} | ${viewStanding(v).outcome} |`,
    ),
    '',
  ];
  return [...table, ...views.map((v) => `<hr>\n\n${renderMonitorComment(v)}\n`)].join('\n');
}
