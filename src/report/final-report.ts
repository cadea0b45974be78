// The final report (`topo report`, `/topo report`): the seed's five parts, rendered from the
// experiment record alone. Pure.

import { barChart } from '../chart/mermaid.js';
import { describeChange, hydraValue } from '../record/change.js';
import { decidedAgainst, figureOf } from '../record/figure.js';
import { cell, decisionText, interval, num, seconds } from '../record/format.js';
import { baselineRun, bestRun, recordPaths } from '../record/model.js';
import { figureText, gpuTable, secondsPerRolloutChart } from '../record/render.js';
import { topologyLeaves } from '../topology/expand.js';
import type { ExperimentRecord, RecordRun, SkillReflection } from '../types/generated/record.js';

type StableMetrics = NonNullable<RecordRun['stable_metrics']>;

export interface FinalReportOptions {
  /** Link target for the record, e.g. a blob URL on the default branch; defaults to the relative path. */
  recordUrl?: string;
  /** Shown in the header (the record never reads a clock). */
  generatedAt?: string;
}

function gpuList(m: StableMetrics | null | undefined) {
  return Object.entries(m?.resource_usage?.gpu_by_index ?? {}).sort((a, b) => Number(a[0]) - Number(b[0]));
}

/** One line of resource use: GPU utilisation range, max memory pressure, minimum headroom. */
export function resourceLine(m: StableMetrics | null | undefined): string {
  const gpus = gpuList(m).map(([, g]) => g);
  if (gpus.length === 0) return 'no GPU telemetry';
  const pick = (f: (g: (typeof gpus)[number]) => number | null | undefined) =>
    gpus.map(f).filter((v): v is number => typeof v === 'number');
  const util = pick((g) => g.utilization_percent?.mean);
  const pressure = pick((g) => g.memory_pressure_percent?.max ?? g.memory_pressure_percent?.mean);
  const headroom = pick((g) => g.memory_headroom_gb_min);
  const parts = [];
  if (util.length) parts.push(`GPU util ${num(Math.min(...util), 0)}–${num(Math.max(...util), 0)}%`);
  if (pressure.length) parts.push(`memory pressure ≤ ${num(Math.max(...pressure), 0)}%`);
  if (headroom.length) parts.push(`min headroom ${num(Math.min(...headroom))} GB`);
  return parts.join(', ');
}

function relativeChange(value: number | null, base: number | null): string {
  if (value === null || base === null || base === 0) return '—';
  const pct = ((value - base) / base) * 100;
  return `${pct > 0 ? '+' : ''}${num(pct, 1)}%`;
}

function measured(run: RecordRun): string {
  const figure = figureOf(run);
  if (figure === null || run.status === 'failed')
    return run.failures?.length ? `failed (${run.failures.at(-1)!.kind})` : 'no stable value';
  const parts = [figureText(figure)];
  const five = run.stable_metrics?.seconds_per_rollout_5m;
  if (five != null) parts.push(`5m ${seconds(five)}`);
  if (run.verdict && run.verdict.state !== 'stable') parts.push(run.verdict.state);
  return parts.join(', ');
}

function bottleneckLine(m: StableMetrics | null | undefined): string {
  const b = m?.bottleneck;
  if (!b) return 'not determined';
  const evidence = b.evidence.length ? `: ${b.evidence.join('; ')}` : '';
  return `${b.service ?? b.kind} (${b.kind}, confidence ${b.confidence})${evidence}`;
}

/** The chain of accepted changes from the baseline to a run (following `parent`). */
function lineage(record: ExperimentRecord, run: RecordRun): RecordRun[] {
  const chain: RecordRun[] = [];
  const seen = new Set<string>();
  let current: RecordRun | undefined = run;
  while (current && !seen.has(current.name)) {
    chain.unshift(current);
    seen.add(current.name);
    current = current.parent ? record.runs.find((r) => r.name === current!.parent) : undefined;
  }
  return chain;
}

/** Per-GPU utilisation (bars) and memory pressure (line) of one run, as a Mermaid chart. */
export function gpuChart(run: RecordRun, title: string): string | undefined {
  const gpus = gpuList(run.stable_metrics).filter(([, g]) => g.utilization_percent?.mean != null);
  if (gpus.length === 0) return undefined;
  const chart = barChart(
    gpus.map(([gpu, g]) => ({
      label: `GPU ${gpu}`,
      value: g.utilization_percent!.mean!,
      line: g.memory_pressure_percent?.mean ?? g.memory_pressure_percent?.max ?? 0,
    })),
    { title, yLabel: 'percent' },
  );
  return `${chart}\n\nBars: mean GPU utilisation %. Line: mean GPU memory pressure % (memory used ÷ total).`;
}

function headroomAdvice(run: RecordRun): string[] {
  const out: string[] = [];
  for (const [gpu, g] of gpuList(run.stable_metrics)) {
    const util = g.utilization_percent?.mean;
    const headroom = g.memory_headroom_gb_min;
    const pressure = g.memory_pressure_percent?.max ?? g.memory_pressure_percent?.mean;
    const services = (g.topology_services ?? []).join(', ') || 'no service';
    if (pressure != null && pressure >= 90)
      out.push(
        `GPU ${gpu} (${services}) is at ${num(pressure, 0)}% memory pressure: no room for more instances.`,
      );
    else if (util != null && util < 60 && headroom != null)
      out.push(
        `GPU ${gpu} (${services}) averages ${num(util, 0)}% utilisation with ${num(headroom)} GB headroom: room for instances of the bottleneck service.`,
      );
  }
  return out;
}

function learningsByTopic(
  record: ExperimentRecord,
): Map<string, { run: string; learning: SkillReflection }[]> {
  const map = new Map<string, { run: string; learning: SkillReflection }[]>();
  for (const run of record.runs)
    for (const learning of run.skill_reflections ?? []) {
      const list = map.get(learning.topic) ?? [];
      list.push({ run: run.name, learning });
      map.set(learning.topic, list);
    }
  return map;
}

/** Advice the record itself supports, beyond what people wrote: repeated failures and telemetry gaps. */
function derivedAdvice(record: ExperimentRecord): string[] {
  const out: string[] = [];
  const failures = new Map<string, string[]>();
  for (const run of record.runs)
    for (const f of run.failures ?? []) failures.set(f.kind, [...(failures.get(f.kind) ?? []), run.name]);
  for (const [kind, runs] of failures)
    out.push(
      `${runs.length} candidate(s) failed with ${kind} (${runs.map((r) => `\`${r}\``).join(', ')})${kind === 'gpu-oom' ? ': check the memory estimate in validation before submitting' : ''}.`,
    );
  const gaps = record.runs.filter(
    (r) =>
      (r.stable_metrics?.telemetry_quality?.gaps?.length ?? 0) +
        (r.stable_metrics?.telemetry_quality?.missing_metrics?.length ?? 0) >
      0,
  );
  if (gaps.length)
    out.push(
      `Telemetry was incomplete for ${gaps.map((r) => `\`${r.name}\``).join(', ')}: ${[
        ...new Set(
          gaps.flatMap((r) => [
            ...(r.stable_metrics?.telemetry_quality?.missing_metrics ?? []),
            ...(r.stable_metrics?.telemetry_quality?.gaps ?? []),
          ]),
        ),
      ].join('; ')}.`,
    );
  const unstable = record.runs.filter(
    (r) => r.verdict && r.verdict.state !== 'stable' && r.status !== 'failed',
  );
  if (unstable.length)
    out.push(
      `Decided before a stable verdict: ${unstable.map((r) => `\`${r.name}\` (${r.verdict!.state})`).join(', ')} — the seed asks to compare only stabilised full-run values.`,
    );
  return out;
}

/** The best's own decision, when it has one: what its pull request showed. */
function bestClaim(best: RecordRun): string {
  const claim = decidedAgainst(best);
  return claim?.better ? `; ${claim.text}` : '';
}

function figureValue(run: RecordRun | undefined): number | null {
  return run ? (figureOf(run)?.value ?? null) : null;
}

/**
 * The result: the record's best (src/record/best.ts) at its figure against the baseline's (the
 * figures every surface shows, src/record/figure.ts), so it never contradicts the decisions.
 */
function resultLine(record: ExperimentRecord): string {
  const base = baselineRun(record);
  const best = bestRun(record);
  const counts = ['accepted', 'rejected', 'failed', 'stopped', 'running', 'pending']
    .map((s) => [s, record.runs.filter((r) => r.status === s).length] as const)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${s}`);
  const bestValue = figureValue(best);
  const baseValue = figureValue(base);
  if (!best || !base || bestValue === null || baseValue === null || best.name === base.name)
    return `**Result:** no candidate beat the baseline. ${record.runs.length} candidate(s): ${counts.join(', ') || 'none'}.`;
  return `**Result:** \`${best.name}\` reaches ${seconds(bestValue)} s per rollout against the baseline's ${seconds(baseValue)} s as decided (${relativeChange(bestValue, baseValue)}; ${num(baseValue / bestValue, 2)}× the throughput)${bestClaim(best)}. ${record.runs.length} candidate(s): ${counts.join(', ')}.`;
}

/** Part 1: the baseline at its figure, its resources and bottleneck. */
function baselineSection(record: ExperimentRecord): string[] {
  const base = baselineRun(record);
  const out = ['', '## 1. Baseline', ''];
  if (!base) return [...out, 'No baseline was recorded.'];
  const m = base.stable_metrics;
  const f = figureOf(base);
  const projected = base.verdict?.projected_full_run;
  out.push(
    `\`${base.name}\` on \`${base.topology?.base ?? record.fixed_inputs.base_topology}\`${base.job_id ? ` (Slurm job \`${base.job_id}\`)` : ''}.`,
    '',
    `- Seconds per rollout (what the candidates were decided against): ${f && f.low < f.high ? interval(f) : `${seconds(f?.value)} s`}${projected ? ` (the detector's projection of the full run to its end, start-up included: ${interval(projected)})` : ''}`,
    `- Full-run value read at the end: ${seconds(m?.seconds_per_rollout_full_run)} s; 5-minute value: ${seconds(m?.seconds_per_rollout_5m)} s`,
    `- Resources: ${resourceLine(m)}`,
    `- Bottleneck: ${bottleneckLine(m)}`,
  );
  const table = gpuTable(m);
  if (table) out.push('', table);
  const chart = gpuChart(
    base,
    `${base.name === 'baseline' ? 'Baseline' : `Baseline ${base.name}`}: GPU utilisation and memory pressure`,
  );
  if (chart) out.push('', chart);
  return out;
}

/** Part 2: every candidate at its figure, with the chart of all of them. */
function candidatesSection(record: ExperimentRecord): string[] {
  const base = baselineRun(record);
  const baseValue = figureValue(base);
  const out = ['', '## 2. Tried topologies', ''];
  const chart = secondsPerRolloutChart(
    record,
    'Seconds per rollout by candidate, as decided (lower is better)',
  );
  if (chart) out.push(chart, '');
  out.push(
    '| Step | Candidate | Change | Reasoning | Expected effect | Measured | vs baseline | Resources | Decision |',
    '|---:|---|---|---|---|---|---:|---|---|',
  );
  record.runs.forEach((run, i) => {
    const row = [
      String(i + 1),
      `\`${run.name}\``,
      cell(describeChange(run.change, !run.parent)),
      cell(run.hypothesis),
      cell(run.expected_effect),
      cell(measured(run)),
      run === base ? 'baseline' : relativeChange(figureValue(run), baseValue),
      cell(resourceLine(run.stable_metrics)),
      cell(`${run.decision.outcome}${run.decision.reason ? `: ${run.decision.reason}` : ''}`),
    ];
    out.push(`| ${row.join(' | ')} |`);
  });
  if (record.runs.length === 0) out.push('| — | — | — | — | — | — | — | — | — |');
  out.push(...predictionLines(record));
  return out;
}

/** Part 3: the best topology at its figure, why it won, its chain of changes and headroom. */
function bestSection(record: ExperimentRecord): string[] {
  const best = bestRun(record);
  const out = ['', '## 3. Best topology', ''];
  if (!best) return [...out, 'No candidate was accepted.'];
  const chain = lineage(record, best);
  out.push(
    `\`${best.name}\`${best.run_name ? ` (run \`${best.run_name}\`)` : ''}: ${seconds(figureValue(best))} s per rollout.`,
    '',
    `- Why it won: ${cell(record.current_best.decision_reasoning ?? 'lowest stabilised value among accepted candidates')}`,
  );
  const decided = decisionText(best.monitor_decision);
  if (decided) out.push(`- Decision: ${decided}`);
  if (chain.length > 1) {
    out.push('- Changes from the baseline, step by step:');
    for (const step of chain.slice(1))
      out.push(`  - \`${step.name}\`: ${cell(describeChange(step.change, false))}`);
  }
  out.push(`- Remaining bottleneck: ${bottleneckLine(best.stable_metrics)}`);
  out.push(`- Resources: ${resourceLine(best.stable_metrics)}`);
  const advice = headroomAdvice(best);
  if (advice.length) out.push('- Headroom for further tuning:', ...advice.map((a) => `  - ${a}`));
  const leaves = best.topology?.block ? topologyLeaves(best.topology.block) : [];
  if (leaves.length)
    out.push(
      '',
      `As Hydra overrides over \`${best.topology!.base}\`:`,
      '',
      '```sh',
      leaves.map((l) => `${l.key}=${hydraValue(l.value)}`).join(' \\\n'),
      '```',
    );
  const table = gpuTable(best.stable_metrics);
  if (table) out.push('', table);
  const gchart = gpuChart(best, `Best ${best.name}: GPU utilisation and memory pressure`);
  if (gchart) out.push('', gchart);
  return out;
}

/** Part 4: the learnings by topic and what the record itself shows. */
function adviceSection(record: ExperimentRecord): string[] {
  const out = ['', '## 4. Advice for improving the workflow', ''];
  const byTopic = learningsByTopic(record);
  const derived = derivedAdvice(record);
  if (byTopic.size === 0 && derived.length === 0)
    out.push('No learnings were recorded (`/topo learn <text>` on a pull request adds one).');
  for (const [topic, list] of [...byTopic.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    out.push(`**${topic.replace(/_/g, ' ')}**`, '');
    for (const { run, learning } of list)
      out.push(
        `- ${cell(learning.learning)} (from \`${run}\`${learning.author ? `, @${learning.author}` : ''})${learning.suggested_skill_update ? `. Suggested skill update: ${cell(learning.suggested_skill_update)}` : ''}`,
      );
    out.push('');
  }
  if (derived.length) out.push('**From the record**', '', ...derived.map((d) => `- ${d}`));
  return out;
}

/** The final report as Markdown. */
export function renderFinalReport(record: ExperimentRecord, options: FinalReportOptions = {}): string {
  const paths = recordPaths(record.experiment_id);
  const link = options.recordUrl ?? paths.markdown.replace(/^experiments\//, '');
  const out: string[] = [
    `# Final report: \`${record.experiment_id}\``,
    '',
    `Objective: ${record.objective}. Driver \`${record.fixed_inputs.driver}\` on \`${record.fixed_inputs.deploy}\`, starting from \`${record.fixed_inputs.base_topology}\`.${options.generatedAt ? ` Generated ${options.generatedAt}.` : ''}`,
    '',
    resultLine(record),
    ...baselineSection(record),
    ...candidatesSection(record),
    ...bestSection(record),
    ...adviceSection(record),
    '',
    '## 5. Experiment record',
    '',
    `The full record: [${paths.markdown}](${link}) (machine-readable memory: \`${paths.json}\`).`,
  ];
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}

/**
 * Predicted (topo suggest's calibrated model) against measured seconds per rollout, and the
 * calibration error: how far the predictions were off and how often their interval held the value.
 */
export function predictionLines(record: ExperimentRecord): string[] {
  const rows = record.runs.filter(
    (r) => r.prediction && r.prediction.measured_seconds_per_rollout != null && r.prediction.error != null,
  );
  if (rows.length === 0) return [];
  const errors = rows.map((r) => Math.abs(r.prediction!.error!)).sort((a, b) => a - b);
  const mid = Math.floor(errors.length / 2);
  const median = errors.length % 2 ? errors[mid]! : (errors[mid - 1]! + errors[mid]!) / 2;
  const rms = Math.sqrt(rows.reduce((a, r) => a + Math.log1p(r.prediction!.error!) ** 2, 0) / rows.length);
  const covered = rows.filter((r) => r.prediction!.covered).length;
  const level = Math.round(100 * (rows[0]!.prediction!.level ?? 0.9));
  const pct = (x: number) => `${num(100 * x, 1)}%`;
  return [
    '',
    `**Predicted against measured** (\`topo suggest\`'s model calibrated on the runs before each proposal): calibration error ${pct(median)} median, ${pct(rms)} RMS over ${rows.length} predicted run(s); ${covered} of ${rows.length} inside their ${level}% interval.`,
    '',
    '| Candidate | Predicted s/rollout | Interval | Measured | Error | Inside |',
    '|---|---:|---|---:|---:|---|',
    ...rows.map((r) => {
      const p = r.prediction!;
      return `| \`${r.name}\` | ${seconds(p.seconds_per_rollout)} | ${seconds(p.low)}-${seconds(p.high)} | ${seconds(p.measured_seconds_per_rollout)} | ${p.error! >= 0 ? '+' : ''}${pct(p.error!)} | ${p.covered ? 'yes' : 'no'} |`;
    }),
  ];
}
