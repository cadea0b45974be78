// experiments/<id>.md, rendered from the JSON record only: the progress table, a Mermaid chart of
// every candidate's stabilised seconds per rollout against the baseline, one section per candidate.

import { decidedBarChart } from '../chart/mermaid.js';
import { barChartSvg } from '../chart/svg.js';
import { safeText } from '../github/user-text.js';
import type { ExperimentRecord, RecordRun } from '../types/generated/record.js';
import { describeChange } from './change.js';
import { type Figure, figureOf } from './figure.js';
import { cell, decisionText, interval, num, percentOfFraction, seconds } from './format.js';
import { baselineRun, bestRun, recordPaths } from './model.js';
import { referenceGpuMinutes } from './reference-runs.js';

type StableMetrics = NonNullable<RecordRun['stable_metrics']>;

/** `topology=<base>` plus the candidate name and hash, for a table cell. */
export function topologyLabel(run: RecordRun): string {
  const hash = run.topology?.hash ? ` \`${run.topology.hash.slice(0, 8)}\`` : '';
  return `\`${run.name}\`${hash} on \`${run.topology?.base ?? 'topology=?'}\``;
}

function queueSummary(metrics: StableMetrics | null | undefined): string | null {
  const byService = metrics?.rpc_queue_depth_at_start_latest_by_service;
  if (!byService || Object.keys(byService).length === 0) return null;
  return `queue min/max ${Object.entries(byService)
    .map(([svc, q]) => `${svc} ${num(q.worker_min)}/${num(q.worker_max)}`)
    .join(', ')}`;
}

function gpuSummary(metrics: StableMetrics | null | undefined): string | null {
  const gpus = Object.values(metrics?.resource_usage?.gpu_by_index ?? {});
  if (gpus.length === 0) return null;
  const utils = gpus
    .map((g) => g.utilization_percent?.mean)
    .filter((v): v is number => typeof v === 'number');
  const pressure = gpus
    .map((g) => g.memory_pressure_percent?.max ?? g.memory_pressure_percent?.mean)
    .filter((v): v is number => typeof v === 'number');
  const headroom = gpus
    .map((g) => g.memory_headroom_gb_min)
    .filter((v): v is number => typeof v === 'number');
  const parts: string[] = [];
  if (utils.length) parts.push(`GPU util ${num(Math.min(...utils), 0)}–${num(Math.max(...utils), 0)}%`);
  if (pressure.length) parts.push(`memory pressure max ${num(Math.max(...pressure), 0)}%`);
  if (headroom.length) parts.push(`min headroom ${num(Math.min(...headroom))} GB`);
  return parts.join(', ');
}

function bottleneckSummary(metrics: StableMetrics | null | undefined): string | null {
  const b = metrics?.bottleneck;
  if (!b) return null;
  return `bottleneck ${b.service ?? b.kind} (${b.confidence})`;
}

/** "8.87 s/rollout as decided against `baseline`" or "10.83 s/rollout": a run's figure for people. */
export function figureText(f: Figure | null): string {
  if (!f) return '—';
  return `${seconds(f.value)} s/rollout${f.reference ? ` as decided against \`${f.reference.name}\`` : ''}`;
}

/** The progress table's Observation cell. */
export function observationSummary(run: RecordRun): string {
  const m = run.stable_metrics;
  const parts: string[] = [];
  const figure = figureOf(run);
  if (figure) parts.push(figureText(figure));
  if (m?.seconds_per_rollout_5m != null) parts.push(`5m ${seconds(m.seconds_per_rollout_5m)}`);
  if (run.verdict && run.verdict.state !== 'stable') parts.push(`verdict ${run.verdict.state}`);
  for (const text of [queueSummary(m), gpuSummary(m), bottleneckSummary(m)]) if (text) parts.push(text);
  const failure = run.failures?.at(-1);
  if (failure) parts.push(`failed: ${failure.kind}`);
  if (m?.telemetry_quality?.gaps?.length) parts.push(`telemetry gaps: ${m.telemetry_quality.gaps.length}`);
  return parts.length ? parts.join('; ') : 'no metrics';
}

function decisionCell(run: RecordRun): string {
  if (run.decision.outcome === 'pending') return run.status;
  return `${run.decision.outcome}${run.decision.reason ? `: ${safeText(run.decision.reason)}` : ''}`;
}

function learningCell(run: RecordRun): string {
  const list = run.skill_reflections ?? [];
  return list.length ? list.map((l) => safeText(l.learning)).join(' / ') : 'none';
}

export function progressTable(record: ExperimentRecord): string {
  const lines = [
    '| Step | Job | Topology | Change | Observation | Decision | Next | Learning |',
    '|---:|---|---|---|---|---|---|---|',
  ];
  record.runs.forEach((run, i) => {
    const job = run.job_id ? `\`${run.job_id}\`` : '—';
    const row = [
      String(i + 1),
      job,
      topologyLabel(run),
      cell(describeChange(run.change, !run.parent)),
      cell(observationSummary(run)),
      cell(decisionCell(run)),
      cell(run.decision.next),
      cell(learningCell(run)),
    ];
    lines.push(`| ${row.join(' | ')} |`);
  });
  if (record.runs.length === 0) lines.push('| — | — | — | — | no candidate recorded yet | — | — | — |');
  return lines.join('\n');
}

const DECIDED_GROUPS = [
  { key: 'accepted', name: 'accepted', colour: '#2da44e', square: '🟩' },
  { key: 'rejected', name: 'rejected', colour: '#cf222e', square: '🟥' },
  { key: 'failed', name: 'failed', colour: '#57606a', square: '⬛' },
  { key: 'stopped', name: 'stopped', colour: '#9a6700', square: '🟫' },
  { key: 'pending', name: 'not decided yet', colour: '#d0d7de', square: '⬜' },
];

/** Each run's figure (./figure.ts), in record order; runs without one are left out. */
function figures(record: ExperimentRecord): Array<{ run: RecordRun; figure: Figure }> {
  return record.runs.flatMap((run) => {
    const figure = figureOf(run);
    return figure ? [{ run, figure }] : [];
  });
}

/** The baseline's and the current best's figures, the charts' reference lines. */
function referenceFigures(record: ExperimentRecord): {
  base?: { run: RecordRun; value: number };
  best?: { run: RecordRun; value: number };
} {
  const base = baselineRun(record);
  const best = bestRun(record);
  const at = (run: RecordRun | undefined) => {
    const f = run ? figureOf(run) : null;
    return run && f ? { run, value: f.value } : undefined;
  };
  return { base: at(base), best: best !== base ? at(best) : undefined };
}

/**
 * Mermaid xychart-beta: a bar per candidate at its figure (what its decision says), coloured by its
 * decision, with the baseline and the current best as reference lines and a colour legend. The 95%
 * intervals Mermaid cannot draw are in the SVG (`recordChartSvg`), linked below the chart.
 * Undefined when no candidate has a value yet.
 */
export function secondsPerRolloutChart(record: ExperimentRecord, title?: string): string | undefined {
  const bars = figures(record);
  if (bars.length === 0) return undefined;
  const { base, best } = referenceFigures(record);
  const references = [
    ...(base
      ? [
          {
            name: `${base.run.name === 'baseline' ? 'baseline' : `baseline \`${base.run.name}\``} (${seconds(base.value)} s)`,
            value: base.value,
            colour: '#1f6feb',
            square: '🟦',
          },
        ]
      : []),
    ...(best
      ? [
          {
            name: `current best \`${best.run.name}\` (${seconds(best.value)} s)`,
            value: best.value,
            colour: '#8250df',
            square: '🟪',
          },
        ]
      : []),
  ];
  const { chart, legend } = decidedBarChart(
    bars.map(({ run, figure }) => ({ label: run.name, value: figure.value, group: barGroup(run) })),
    DECIDED_GROUPS,
    references,
    {
      title: title ?? 'Seconds per rollout as decided (lower is better)',
      yLabel: 'seconds per rollout',
    },
  );
  const missing = record.runs
    .filter((r) => !bars.some((b) => b.run === r))
    .map((r) => `\`${r.name}\` (${r.status})`);
  const svg = recordPaths(record.experiment_id).chart.replace(/^experiments\//, '');
  return [
    chart,
    '',
    `${legend}${missing.length ? ` · without a value: ${missing.join(', ')}` : ''}`,
    '',
    `A candidate decided against another is drawn at that one's value × (1 + the decided change). With 95% intervals: [${svg}](${svg})`,
  ].join('\n');
}

function barGroup(run: RecordRun): string {
  if (
    run.status === 'accepted' ||
    run.status === 'rejected' ||
    run.status === 'failed' ||
    run.status === 'stopped'
  )
    return run.status;
  return 'pending';
}

/** The record's chart as SVG (bars at each run's figure with its interval, the baseline and the best); '' without values. */
export function recordChartSvg(record: ExperimentRecord): string {
  const { base, best } = referenceFigures(record);
  const refs: Array<{ name: string; value: number; kind: 'baseline' | 'best' }> = [];
  if (base) refs.push({ name: base.run.name, value: base.value, kind: 'baseline' });
  if (best) refs.push({ name: best.run.name, value: best.value, kind: 'best' });
  return barChartSvg({
    title: `${record.experiment_id}: seconds per rollout as decided (lower is better)`,
    yLabel: 'seconds per rollout',
    bars: figures(record).map(({ run, figure }) => ({
      label: run.name,
      value: figure.value,
      interval: figure.low < figure.high ? { low: figure.low, high: figure.high } : null,
      outcome: run.status,
    })),
    references: refs,
  });
}

export function gpuTable(metrics: StableMetrics | null | undefined): string | undefined {
  const gpus = Object.entries(metrics?.resource_usage?.gpu_by_index ?? {}).sort(
    (a, b) => Number(a[0]) - Number(b[0]) || a[0].localeCompare(b[0]),
  );
  if (gpus.length === 0) return undefined;
  const mmm = (v: { min?: number | null; mean?: number | null; max?: number | null } | undefined, d = 0) =>
    v ? `${num(v.min, d)} / ${num(v.mean, d)} / ${num(v.max, d)}` : '—';
  const lines = [
    '| GPU | Services | Utilisation % (min / mean / max) | Memory used GB (min / mean / max) | Total GB | Pressure % (mean / max) | Min headroom GB |',
    '|---:|---|---|---|---:|---|---:|',
  ];
  for (const [gpu, g] of gpus) {
    const pressure = g.memory_pressure_percent
      ? `${num(g.memory_pressure_percent.mean, 0)} / ${num(g.memory_pressure_percent.max, 0)}`
      : '—';
    lines.push(
      `| ${gpu} | ${cell((g.topology_services ?? []).join(', '))} | ${mmm(g.utilization_percent)} | ${mmm(g.memory_used_gb, 1)} | ${num(g.memory_total_gb)} | ${pressure} | ${num(g.memory_headroom_gb_min)} |`,
    );
  }
  return lines.join('\n');
}

function queueTable(metrics: StableMetrics | null | undefined): string | undefined {
  const byService = Object.entries(metrics?.rpc_queue_depth_at_start_latest_by_service ?? {});
  if (byService.length === 0) return undefined;
  return [
    '| Service | Queue depth worker min | Queue depth worker max |',
    '|---|---:|---:|',
    ...byService.map(([svc, q]) => `| ${svc} | ${num(q.worker_min)} | ${num(q.worker_max)} |`),
  ].join('\n');
}

/** "- Seconds per rollout: 8.87 s [8.18–9.61], as its decision says against `baseline` (10.83 s)". */
function figureLine(f: Figure | null): string[] {
  if (!f) return [];
  const how = f.reference
    ? `, as its decision says against \`${f.reference.name}\` (${seconds(f.reference.value)} s)`
    : '';
  return [`- Seconds per rollout: ${f.low < f.high ? interval(f) : `${seconds(f.value)} s`}${how}`];
}

function metricsList(run: RecordRun): string[] {
  const m = run.stable_metrics;
  const v = run.verdict;
  const lines: string[] = figureLine(figureOf(run));
  if (v) {
    lines.push(
      `- Verdict: **${v.state}**${v.minutes_of_data != null ? ` after ${num(v.minutes_of_data)} min of data` : ''}${v.warmup_end_minutes != null ? ` (warm-up ended at ${num(v.warmup_end_minutes)} min)` : ''}`,
    );
    if (v.projected_full_run)
      lines.push(
        `- The detector's projected full-run value (start-up included): ${interval(v.projected_full_run)}`,
      );
    if (v.value) lines.push(`- The detector's stable value: ${interval(v.value)}`);
    if (v.cycle)
      lines.push(
        `- Cycle: period ${num(v.cycle.period_minutes)} min, amplitude ${percentOfFraction(v.cycle.amplitude_relative)}`,
      );
  }
  const decided = decisionText(run.monitor_decision);
  if (decided) lines.push(`- Decision: ${decided}`);
  if (m) {
    // The run's seconds per rollout is its figure above, once: the raw samples (the full run at the
    // last reading, start-up included, and the 5-minute rate, often taken as the job was stopped)
    // stay in the JSON's stable_metrics and are never shown beside it as another figure.
    const pairs: [string, string][] = [
      ['Completed rollouts', num(m.completed_rollouts, 0)],
      ['Failed rollouts', num(m.failed_rollouts, 0)],
      ['Rollout duration p95', `${seconds(m.rollout_duration_p95_s)} s`],
      ['Step duration p95', `${seconds(m.step_duration_p95_s)} s`],
      ['Runtime event-loop idle fraction', percentOfFraction(m.runtime_idle_fraction)],
      ['Warm-up excluded', `${num(m.warmup_excluded_s, 0)} s`],
    ];
    for (const [label, value] of pairs) if (!value.startsWith('—')) lines.push(`- ${label}: ${value}`);
    const host = m.resource_usage?.host_memory;
    if (host && (host.available_gb_min != null || host.total_gb != null))
      lines.push(
        `- Host memory: ${num(host.available_gb_min)} GB available at least, of ${num(host.total_gb)} GB`,
      );
  }
  return lines;
}

/** The run's identity: its run, job, pull request, topology, parent, change and hypothesis. */
function runFacts(run: RecordRun): string[] {
  const out: string[] = [];
  const facts: string[] = [];
  if (run.run_name) facts.push(`run \`${run.run_name}\``);
  if (run.job_id) facts.push(`Slurm job \`${run.job_id}\``);
  if (run.run_dir) facts.push(`run directory \`${run.run_dir}\``);
  if (run.pull_request)
    facts.push(
      run.pull_request.url
        ? `[pull request #${run.pull_request.number}](${run.pull_request.url})`
        : `pull request #${run.pull_request.number}`,
    );
  if (run.recorded_at) facts.push(`recorded ${run.recorded_at}`);
  if (facts.length) out.push(`${facts.join(' · ')}`, '');
  out.push(
    `- Topology: \`${run.topology?.base ?? 'topology=?'}\`${run.topology?.hash ? ` (hash \`${run.topology.hash}\`)` : ''}${run.topology?.file ? `, file \`${run.topology.file}\`` : ''}`,
  );
  out.push(`- Parent: ${run.parent ? `\`${run.parent}\`` : 'none (baseline)'}`);
  const change = Object.entries(run.change ?? {});
  if (change.length) out.push('- Change:', ...change.map(([key, value]) => `  - \`${key}\`: ${value}`));
  if (run.hypothesis) out.push(`- Hypothesis: ${cell(safeText(run.hypothesis))}`);
  if (run.expected_effect) out.push(`- Expected effect: ${cell(run.expected_effect)}`);
  return out;
}

/** Findings (its figure first), queue depths, bottleneck, per-GPU and per-process resources. */
function runFindings(run: RecordRun): string[] {
  const out = ['', '#### Findings', ''];
  const metrics = metricsList(run);
  out.push(...(metrics.length ? metrics : ['- No metrics were recorded.']));
  const evidence = run.verdict?.evidence ?? [];
  if (evidence.length) out.push('- Evidence:', ...evidence.map((e) => `  - ${cell(e)}`));
  const queue = queueTable(run.stable_metrics);
  if (queue) out.push('', queue);
  const b = run.stable_metrics?.bottleneck;
  out.push('', '#### Bottleneck', '');
  if (b)
    out.push(
      `**${b.service ?? b.kind}** (${b.kind}, confidence ${b.confidence})`,
      ...b.evidence.map((e) => `- ${cell(e)}`),
    );
  else out.push('Not determined.');
  const gpus = gpuTable(run.stable_metrics);
  out.push('', '#### Resources per GPU', '', gpus ?? 'No per-GPU telemetry was recorded.');
  const cpu = Object.entries(
    run.stable_metrics?.resource_usage?.process_cpu_utilization_percent_by_group ?? {},
  );
  if (cpu.length) {
    out.push('', '| Process group | CPU % (min / mean / max) |', '|---|---|');
    for (const [group, v] of cpu)
      out.push(`| ${cell(group)} | ${num(v.min, 0)} / ${num(v.mean, 0)} / ${num(v.max, 0)} |`);
  }
  return out;
}

/** Telemetry gaps and classified failures. */
function runProblems(run: RecordRun): string[] {
  const out: string[] = [];
  const quality = run.stable_metrics?.telemetry_quality;
  const gaps = [
    ...(quality?.missing_metrics ?? []).map((m) => `missing metric \`${m}\``),
    ...(quality?.gaps ?? []),
  ];
  if (gaps.length || quality?.notes) {
    out.push('', '#### Telemetry gaps', '', ...gaps.map((g) => `- ${cell(g)}`));
    if (quality?.notes) out.push(`- ${cell(quality.notes)}`);
  }
  if (run.failures?.length) {
    out.push('', '#### Failures', '');
    for (const f of run.failures) {
      const where = [
        f.slurm_state && `Slurm ${f.slurm_state}`,
        f.exit_code && `exit ${f.exit_code}`,
        f.gpu != null && `GPU ${f.gpu}`,
      ]
        .filter(Boolean)
        .join(', ');
      out.push(
        `- **${f.kind}**${where ? ` (${where})` : ''}: ${cell(f.message)}${f.likely_fix ? ` — likely fix: ${cell(f.likely_fix)}` : ''}`,
      );
    }
  }
  return out;
}

export function runSection(run: RecordRun, step: number): string {
  const out: string[] = [
    `### Step ${step}: \`${run.name}\` — ${run.status}`,
    '',
    ...runFacts(run),
    ...runFindings(run),
    ...runProblems(run),
  ];
  out.push('', '#### Decision', '');
  out.push(
    `**${run.decision.outcome}**${run.decision.reason ? `: ${cell(safeText(run.decision.reason))}` : ''}`,
  );
  if (run.decision.next) out.push('', `Next: ${cell(run.decision.next)}`);
  if (run.skill_reflections?.length) {
    out.push('', '#### Learnings', '');
    for (const l of run.skill_reflections)
      out.push(
        `- (${l.topic}) ${cell(safeText(l.learning))}${l.suggested_skill_update ? ` — suggested skill update: ${cell(safeText(l.suggested_skill_update))}` : ''}${l.author ? ` — ${safeText(l.author)}` : ''}`,
      );
  }
  return out.join('\n');
}

function fixedInputsTable(record: ExperimentRecord): string {
  const f = record.fixed_inputs;
  const rows: [string, string | number | null | undefined][] = [
    ['deploy', f.deploy],
    ['driver', f.driver],
    ['base topology', f.base_topology],
    ['cluster', f.cluster],
    ['scenes', f.scenes?.test_suite_id ?? (f.scenes?.scene_ids?.join(', ') || null)],
    ['scene count', f.scenes?.scene_count],
    ['rollouts per scene', f.rollouts_per_scene],
    ['simulation duration (s)', f.simulation_duration_s],
    ['cameras', f.cameras],
    ['control timestep (µs)', f.control_timestep_us],
    ['AlpaSim git commit', f.git_commit],
    ['checkout', f.remote_checkout],
    ['other overrides', f.overrides?.length ? f.overrides.join(' ') : null],
    ['Prometheus', f.telemetry?.prometheus_url],
    ['Grafana', f.telemetry?.grafana_url],
    ['file-SD source', f.telemetry?.file_sd_source],
    ['Slurm account', f.slurm?.account],
    ['Slurm partition', f.slurm?.partition],
    ['GPUs per node', f.slurm?.gpus_per_node],
    ['wall time', f.slurm?.walltime],
  ];
  return [
    '| Input | Value |',
    '|---|---|',
    ...rows
      .filter(([, v]) => v !== null && v !== undefined && v !== '')
      .map(([k, v]) => `| ${k} | \`${cell(String(v))}\` |`),
  ].join('\n');
}

/** The reference jobs run beside the rounds' candidates, each with the GPU-minutes charged for it. */
function referenceJobsSection(record: ExperimentRecord): string[] {
  const runs = record.reference_runs ?? [];
  if (!runs.length) return [];
  const rows = runs.map(
    (r) =>
      `| \`${r.run_name}\` | \`${r.of}\` | ${r.pull_request ? `#${r.pull_request}` : '—'} | ${cell((r.candidates ?? []).map((c) => `\`${c}\``).join(', ') || '—')} | ${r.gpu_minutes == null ? '—' : Math.round(r.gpu_minutes)} | ${cell(r.ended ?? '—')} |`,
  );
  return [
    '## Reference jobs',
    '',
    `Jobs of the best run beside a round's candidates (\`reference: beside\`): ${Math.round(referenceGpuMinutes(record))} GPU-minutes, charged to the experiment.`,
    '',
    '| Run | Of | Pull request | Decided against it | GPU-minutes | Ended |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
  ];
}

/** The whole Markdown document. */
export function renderRecordMarkdown(record: ExperimentRecord): string {
  const paths = recordPaths(record.experiment_id);
  const best = record.current_best;
  const out: string[] = [
    `<!-- Generated from ${paths.json} by alpasim-topo: edit the JSON (or comment on the pull request), not this file. -->`,
    `# Experiment \`${record.experiment_id}\``,
    '',
    `Objective: ${record.objective}.`,
    '',
  ];
  if (record.command) out.push('Started from:', '', '```sh', record.command, '```', '');
  out.push('## Current best', '');
  if (best.topology) {
    const run = bestRun(record);
    const figure = run ? figureOf(run) : null;
    out.push(
      `**\`${best.topology}\`** at ${seconds(figure?.value ?? best.stabilized_seconds_per_rollout_full_run)} s per rollout${figure?.reference ? ` (as its decision says against \`${figure.reference.name}\` at ${seconds(figure.reference.value)} s)` : ''}.`,
    );
    if (best.decision_reasoning) out.push('', cell(safeText(best.decision_reasoning)));
  } else out.push('No candidate accepted yet.');
  if (record.report?.path)
    out.push(
      '',
      `Final report: [${record.report.path}](${record.report.path.replace(/^experiments\//, '')})`,
    );
  out.push('', '## Progress', '', progressTable(record), '');
  const chart = secondsPerRolloutChart(record);
  if (chart) out.push('## Seconds per rollout', '', chart, '');
  out.push(...referenceJobsSection(record));
  out.push('## Fixed inputs', '', fixedInputsTable(record), '');
  if (record.runs.length) {
    out.push('## Candidates', '');
    record.runs.forEach((run, i) => {
      out.push(runSection(run, i + 1), '');
    });
  }
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}
