// The monitor's sticky comment (and the job summary): state and timeline, metrics table, verdict
// with evidence and the queries behind it, comparison, a Mermaid chart, a Grafana link and the
// hidden machine-readable block. Pure and deterministic: the same inputs give the same text, so an
// unchanged pull request costs no write.
import { describeComparison } from '../analysis/comparison.js';
import type { Sample } from '../analysis/series.js';
import { round } from '../analysis/series.js';
import { grafanaDashboardUrl } from '../telemetry/grafana.js';
import type { CandidateObservation, Comparison, Interval } from '../types/generated/metrics.js';
import { chartLegend, lineChart } from './mermaid.js';
import { renderObservationBlock } from './observation-block.js';

export const CANDIDATE_STATES = [
  'queued',
  'submitted',
  'starting',
  'warming',
  'stabilising',
  'stable',
  'finished',
  'stopped',
  'failed',
] as const;
export type CandidateState = (typeof CANDIDATE_STATES)[number];

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
  comparisons: Comparison[];
  chart?: { fullRun: Sample[]; rate5m: Sample[] };
  opportunities?: string[];
  queries?: QueryShown[];
  /** Grafana base URL (e.g. http://127.0.0.1:3003); no link without it. */
  grafanaUrl?: string | null;
  /** Unix ms of the run's first sample and of the evaluation, for the Grafana range. */
  timeRange?: { fromMs: number; toMs: number | null } | null;
  notes?: string[];
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

/** The body of the monitor's sticky comment for one candidate. */
export function renderMonitorComment(v: CandidateView): string {
  const o = v.observation;
  const verdict = o.verdict;
  const m = o.stable_metrics;
  const out: string[] = [];
  out.push(`### ${STATE_ICON[v.state]} \`${v.candidate}\` — ${v.state}`);
  out.push('');
  out.push(
    `Experiment \`${v.experimentId}\` · run \`${v.runName}\`${v.jobId ? ` · Slurm job ${v.jobId}${v.slurmState ? ` (${v.slurmState})` : ''}` : ''}`,
  );
  out.push('');
  const reached = v.timeline.filter((t) => t.at);
  if (reached.length) out.push(`**Timeline:** ${reached.map((t) => `${t.label} ${t.at}`).join(' → ')}`, '');

  // verdict
  out.push(`#### Verdict: \`${verdict.state}\``);
  out.push('');
  if (verdict.value)
    out.push(
      `**Projected full-run seconds per rollout at the end of the run: ${fmtInterval(verdict.value)}** (95% interval; candidates are compared on it)`,
      '',
    );
  else if (verdict.projected_full_run)
    out.push(`Provisional projection: ${fmtInterval(verdict.projected_full_run)} (not stable yet)`, '');
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
  for (const c of v.comparisons)
    out.push(
      `- ${c.outcome === 'better' ? '🟢' : c.outcome === 'worse' ? '🔴' : '⚪'} ${describeComparison(c)}`,
    );
  if (v.comparisons.length) out.push('');
  if (verdict.evidence.length) {
    out.push('<details><summary>Evidence</summary>', '');
    for (const e of verdict.evidence) out.push(`- ${e}`);
    out.push('', '</details>', '');
  }

  // metrics
  out.push('#### Metrics');
  out.push('');
  out.push('| Metric | Value |', '|---|---|');
  const row = (k: string, val: string) => out.push(`| ${k} | ${cell(val)} |`);
  row('Full-run s/rollout (now)', fmt(m.seconds_per_rollout_full_run));
  row('5-min s/rollout (diagnostic)', fmt(m.seconds_per_rollout_5m));
  row('Steady s/rollout after warm-up', fmtInterval(verdict.steady_seconds_per_rollout));
  row('Projected full-run s/rollout', fmtInterval(verdict.projected_full_run));
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
  const gpus = Object.entries(m.resource_usage?.gpu_by_index ?? {});
  if (gpus.length) {
    out.push(
      '| GPU | Services | Util % min/mean/max | Memory GB min/mean/max | Total GB | Pressure % max | Headroom GB min |',
      '|---|---|---|---|---|---|---|',
    );
    for (const [g, u] of gpus) {
      const mm = (x: { min?: number | null; mean?: number | null; max?: number | null } | undefined, d = 0) =>
        `${fmt(x?.min, d)} / ${fmt(x?.mean, d)} / ${fmt(x?.max, d)}`;
      out.push(
        `| ${g} | ${cell((u.topology_services ?? []).join(', ') || '—')} | ${mm(u.utilization_percent)} | ${mm(u.memory_used_gb, 1)} | ${fmt(u.memory_total_gb, 1)} | ${fmt(u.memory_pressure_percent?.max, 0)} | ${fmt(u.memory_headroom_gb_min, 1)} |`,
      );
    }
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
    for (const e of b.evidence) out.push(`- ${e}`);
    out.push('');
  }
  if (v.opportunities?.length) {
    out.push('**Opportunities:**');
    for (const e of v.opportunities) out.push(`- ${e}`);
    out.push('');
  }

  // chart
  if (v.chart && (v.chart.fullRun.length || v.chart.rate5m.length)) {
    const series = [
      { name: 'full-run s/rollout', samples: v.chart.fullRun },
      { name: '5-min s/rollout', samples: v.chart.rate5m },
    ];
    const projected = verdict.projected_full_run?.value;
    const references = projected ? [{ name: 'projected full-run at run end', value: projected }] : [];
    const ref = projected ?? m.seconds_per_rollout_full_run ?? undefined;
    const chart = lineChart(series, {
      title: 'Seconds per rollout',
      xLabel: 'run minutes',
      yLabel: 's/rollout',
      yMax: ref ? ref * 3 : undefined,
      references,
    });
    if (chart) out.push(chart, '', `Lines: ${chartLegend(series, references)}`, '');
  }
  if (v.grafanaUrl) out.push(`[Open in Grafana](${grafanaLink(v.grafanaUrl, v.runName, v.timeRange)})`, '');
  const missing = m.telemetry_quality?.missing_metrics ?? [];
  if (missing.length) out.push(`Telemetry gaps: no data for ${missing.join(', ')}.`, '');
  for (const n of v.notes ?? []) out.push(`> ${n}`, '');
  if (v.queries?.length) {
    out.push('<details><summary>Queries behind this verdict</summary>', '', '```promql');
    for (const q of v.queries)
      out.push(`# ${q.quantity} (${q.source === 'rule' ? 'recording rule' : 'raw fallback'})`, q.query);
    out.push('```', '', '</details>', '');
  }
  out.push(renderObservationBlock(o));
  return out.join('\n');
}

/** The job summary: every candidate of the pass, same content as the comments. */
export function renderJobSummary(views: readonly CandidateView[]): string {
  if (!views.length) return '## topo monitor\n\nNo live candidates.\n';
  const table = [
    '## topo monitor',
    '',
    '| Experiment | Candidate | State | Verdict | Projected s/rollout | vs best |',
    '|---|---|---|---|---|---|',
    ...views.map(
      (v) =>
        `| ${v.experimentId} | ${v.candidate} | ${v.state} | ${v.observation.verdict.state} | ${fmtInterval(v.observation.verdict.projected_full_run)} | ${v.comparisons[0]?.outcome ?? '—'} |`,
    ),
    '',
  ];
  return [...table, ...views.map((v) => `<hr>\n\n${renderMonitorComment(v)}\n`)].join('\n');
}
