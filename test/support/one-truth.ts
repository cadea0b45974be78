// One truth for "the best": the record's current_best against the decisions its pull requests
// showed, read through the monitor's own model (src/report/standing.ts, what the comment's
// headline, the check run and the label show), not through the record's rule it checks.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { figureOf } from '../../src/record/figure.js';
import { parseRecord } from '../../src/record/validate.js';
import { standingOf } from '../../src/report/standing.js';
import type { ExperimentRecord, RecordRun } from '../../src/types/generated/record.js';

/** What a run's pull request showed: its standing, and the name of the reference it was decided against. */
export function shown(run: RecordRun): { outcome: string; reference: string | null } {
  const standing = standingOf({
    state: 'finished',
    decision: run.monitor_decision ?? null,
    hasValue: !!run.verdict?.value,
  });
  return { outcome: standing.outcome, reference: run.monitor_decision?.reference.name ?? null };
}

/**
 * Where current_best contradicts the decisions: an accepted run shown better than the current best
 * (the reference it was decided against is still the best), an accepted run shown not better than
 * another accepted run yet the best, a best that is not an accepted run. Empty when they agree.
 */
export function bestProblems(record: ExperimentRecord): string[] {
  const best = record.current_best.topology;
  const accepted = new Set(record.runs.filter((r) => r.status === 'accepted').map((r) => r.name));
  const problems: string[] = [];
  if (best !== null && !accepted.has(best)) problems.push(`current_best ${best} is not an accepted run`);
  for (const run of record.runs) {
    if (run.status !== 'accepted') continue;
    const { outcome, reference } = shown(run);
    if (!reference || reference === run.name || !accepted.has(reference)) continue;
    if (outcome === 'better' && best === reference)
      problems.push(`${run.name} was accepted as better than ${reference}, yet ${reference} is current_best`);
    if (['worse', 'equivalent', 'not-better'].includes(outcome) && best === run.name)
      problems.push(`${run.name} was shown ${outcome} against ${reference}, yet it is current_best`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// One number: the FIGURES every surface shows (issue 32). A run's seconds per rollout is one number
// wherever it is shown, and where a run and the reference it was decided against are both shown,
// their ratio is inside the decision's interval (a `better` one below its reference). Read from
// the surfaces' text, not from the code that renders them.

/** A figure a surface shows for a run, and half a unit of its last digit. */
export interface ShownFigure {
  surface: string;
  run: string;
  value: number;
  precision: number;
}

const precisionOf = (text: string) => 0.5 * 10 ** -(text.split('.')[1]?.length ?? 0);
const figure = (surface: string, run: string, text: string): ShownFigure => ({
  surface,
  run,
  value: Number(text),
  precision: precisionOf(text),
});

/** "the baseline", "the baseline `b`", "the current best `m`", "the baseline (the current best)" → the name. */
function referenceName(legend: string): string | null {
  const m = /^the (baseline|current best|leading candidate)(?: `([^`]+)`)?/.exec(legend);
  return m ? (m[2] ?? 'baseline') : null;
}

interface ParsedChart {
  title: string;
  labels: string[];
  bars: number[][];
  lines: number[][];
  legend: string[];
}

/** The title, x labels, bars and lines of each ```mermaid block, with the legend line after it. */
function mermaidCharts(text: string): ParsedChart[] {
  const out: ParsedChart[] = [];
  for (const m of text.matchAll(/```mermaid\n([\s\S]*?)```\n+([^\n]*)/g)) {
    const body = m[1] ?? '';
    const nums = (kind: string) =>
      [...body.matchAll(new RegExp(`^ {2}${kind} \\[([^\\]]*)\\]`, 'gm'))].map((l) =>
        (l[1] ?? '').split(',').map(Number),
      );
    const axis = /x-axis \[([^\]]*)\]/.exec(body)?.[1] ?? '';
    out.push({
      title: /^ {2}title "([^"]*)"/m.exec(body)?.[1] ?? '',
      labels: [...axis.matchAll(/"([^"]*)"/g)].map((l) => l[1] ?? ''),
      bars: nums('bar'),
      lines: nums('line'),
      legend: (m[2] ?? '').split(' · ').map((s) => s.replace(/^\S+\s/, '')),
    });
  }
  return out;
}

/** Figures of a bar chart of candidates (the record's and the report's): each bar, and the reference lines. */
function barChartFigures(surface: string, text: string): ShownFigure[] {
  const out: ShownFigure[] = [];
  for (const c of mermaidCharts(text).filter((c) => c.bars.length && /seconds per rollout/i.test(c.title))) {
    c.labels.forEach((label, i) => {
      const v = c.bars.map((b) => b[i] ?? 0).find((x) => x > 0);
      if (v !== undefined) out.push({ surface, run: label, value: v, precision: 0.0005 });
    });
    // legend: the bar groups, then "baseline (10.83 s)", "current best `m` (9.4 s)"
    const refs = c.legend.slice(c.legend.length - c.lines.length);
    refs.forEach((name, i) => {
      const run =
        /^current best `([^`]+)`/.exec(name)?.[1] ??
        (/^baseline(?: `([^`]+)`)?/.exec(name) ? (/`([^`]+)`/.exec(name)?.[1] ?? 'baseline') : null);
      const v = c.lines[i]?.[0];
      if (run && v !== undefined) out.push({ surface: `${surface} line`, run, value: v, precision: 0.0005 });
    });
  }
  return out;
}

/** The figures a pull-request comment shows: its headline's value and reference, its chart's lines. */
export function commentFigures(run: string, comment: string): ShownFigure[] {
  const out: ShownFigure[] = [];
  const head =
    /^\*\*([\d.]+) s per rollout · [\d,]+ rollouts per hour\*\*[^\n]*?(?: · reference `([^`]+)`: ([\d.]+) s per rollout)?$/m.exec(
      comment,
    );
  if (head?.[1]) out.push(figure('comment headline', run, head[1]));
  if (head?.[2] && head[3]) out.push(figure('comment headline', head[2], head[3]));
  for (const c of mermaidCharts(comment)) {
    const first = c.lines.length - c.legend.length;
    c.legend.forEach((name, i) => {
      const line = c.lines[first + i] ?? [];
      const constant = line.length > 0 && line.every((x) => x === line[0]);
      const who = name.startsWith(`${run} `) ? run : referenceName(name);
      if (who && constant)
        out.push({ surface: 'comment chart', run: who, value: line[0] as number, precision: 0.0005 });
    });
  }
  return out;
}

/**
 * Each step's lines that show the run's seconds per rollout as a number ("- Seconds per rollout: 4.65 s
 * [...]", and any other "… seconds per rollout …: 4.74"); the detector's own evidence lines, which say
 * whose figure they are, are not the run's figure.
 */
function recordStepFigures(md: string): ShownFigure[] {
  const out: ShownFigure[] = [];
  for (const step of md.split(/^### Step \d+: /m).slice(1)) {
    const run = /^`([^`]+)`/.exec(step)?.[1];
    if (!run) continue;
    for (const m of step.matchAll(/^- ((?!The detector's)[^:\n]*seconds per rollout[^:\n]*): ([\d.]+)/gim))
      out.push(figure(`record step: ${m[1]}`, run, m[2] as string));
  }
  return out;
}

/** The figures of the record's Markdown: the current best's line, each step's figure and the bar chart. */
export function recordMarkdownFigures(md: string): ShownFigure[] {
  const best = /## Current best\n\n\*\*`([^`]+)`\*\* at ([\d.]+) s per rollout/.exec(md);
  return [
    ...(best?.[1] && best[2] ? [figure('record best line', best[1], best[2])] : []),
    ...recordStepFigures(md),
    ...barChartFigures('record chart', md),
  ];
}

/** The figures of the final report: its result line, its best topology and its chart. */
export function reportFigures(report: string, baseline: string): ShownFigure[] {
  const out: ShownFigure[] = [];
  const result =
    /\*\*Result:\*\* `([^`]+)` reaches ([\d.]+) s per rollout against the baseline's ([\d.]+) s/.exec(report);
  if (result?.[1] && result[2] && result[3])
    out.push(figure('report result', result[1], result[2]), figure('report result', baseline, result[3]));
  const best = /## 3\. Best topology\n\n`([^`]+)`[^\n]*: ([\d.]+) s per rollout\./.exec(report);
  if (best?.[1] && best[2]) out.push(figure('report best', best[1], best[2]));
  return [...out, ...barChartFigures('report chart', report)];
}

/** The figures of the record's JSON: current_best and its reasoning ("a accepted: 9.40 s/rollout vs 10.00 s/rollout of b"). */
export function recordFigures(record: ExperimentRecord): ShownFigure[] {
  const best = record.current_best;
  const out: ShownFigure[] = [];
  if (best.topology && best.stabilized_seconds_per_rollout_full_run != null)
    out.push({
      surface: 'record current_best',
      run: best.topology,
      value: best.stabilized_seconds_per_rollout_full_run,
      precision: 0.00005,
    });
  const why = /^(\S+) accepted[^:]*: ([\d.]+) s\/rollout(?: vs ([\d.]+) s\/rollout of (\S+?);)?/.exec(
    best.decision_reasoning ?? '',
  );
  if (why?.[1] && why[2]) out.push(figure('record reasoning', why[1], why[2]));
  if (why?.[3] && why[4]) out.push(figure('record reasoning', why[4], why[3]));
  return out;
}

/** `topo autopilot status` / the dashboard: each row's s/rollout and the best-so-far line. */
export function dashboardFigures(text: string): ShownFigure[] {
  const out: ShownFigure[] = [];
  for (const m of text.matchAll(/^\| [^|]+ \| `([^`]+)` \| [^|]+ \| [^|]+ \| ([\d.]+) \|/gm))
    if (m[1] && m[2]) out.push(figure('dashboard row', m[1], m[2]));
  const best =
    /\*\*Best so far:\*\* `([^`]+)`, ([\d.]+) s\/rollout(?: against the baseline's ([\d.]+))?/.exec(text);
  if (best?.[1] && best[2]) out.push(figure('dashboard best', best[1], best[2]));
  return out;
}

/**
 * The decision a run's pull request showed: its reference and interval of the relative change. The
 * pruner's `not-better` against the leading candidate too: the change was measured at equal run age,
 * so the loser is shown at the leader's settled figure × (1 + the change), and beside the leader at
 * the figure its own decision gave it, the ratio is inside the interval (src/analysis/figure.ts).
 */
function decidedChange(
  run: RecordRun,
): { reference: string; low: number; high: number; better: boolean } | null {
  const { outcome, reference } = shown(run);
  const change = run.monitor_decision?.relative_change ?? null;
  if (!reference || reference === run.name || !change) return null;
  if (!['better', 'worse', 'equivalent', 'not-better'].includes(outcome)) return null;
  return { reference, low: change.low, high: change.high, better: outcome === 'better' };
}

/**
 * Where the figures contradict each other or the decisions: a run shown at two different values,
 * a run shown beside its reference at a ratio outside its decision's interval (or not below it when
 * decided better), a comment that says "not comparable" beside its decision. Empty when they agree.
 */
export function figureProblems(
  record: ExperimentRecord,
  figures: readonly ShownFigure[],
  comments: Readonly<Record<string, string>> = {},
): string[] {
  const problems: string[] = [];
  const byRun = new Map<string, ShownFigure[]>();
  for (const f of figures) byRun.set(f.run, [...(byRun.get(f.run) ?? []), f]);
  for (const [run, list] of byRun)
    for (const f of list.slice(1))
      if (Math.abs(f.value - list[0]!.value) > f.precision + list[0]!.precision + 1e-9)
        problems.push(
          `${run} is ${list[0]!.value} on the ${list[0]!.surface} but ${f.value} on the ${f.surface}`,
        );
  for (const run of record.runs) {
    const d = decidedChange(run);
    if (!d) continue;
    const surfaces = new Set(figures.filter((f) => f.run === run.name).map((f) => f.surface));
    for (const surface of surfaces) {
      const mine = figures.find((f) => f.run === run.name && f.surface === surface)!;
      const ref = figures.find((f) => f.run === d.reference && f.surface === surface);
      if (!ref) continue;
      const ratio = mine.value / ref.value - 1;
      const tol = mine.precision / mine.value + ref.precision / ref.value + 1e-6;
      if (ratio < d.low - tol || ratio > d.high + tol || (d.better && !(mine.value < ref.value)))
        problems.push(
          `${surface}: ${run.name} ${mine.value} against ${d.reference} ${ref.value} is ${(100 * ratio).toFixed(1)}%, outside its decision's interval [${(100 * d.low).toFixed(1)}%, ${(100 * d.high).toFixed(1)}%]`,
        );
    }
  }
  for (const [run, comment] of Object.entries(comments)) {
    const decided = record.runs.find((r) => r.name === run)?.monitor_decision;
    if (decided && decided.state !== 'reference' && /not comparable with/.test(comment))
      problems.push(`${run}'s comment says "not comparable" beside its decision (${decided.state})`);
  }
  return problems;
}

/** Every figure problem of a `topo demo --out` folder: its comments, record, record Markdown and report. */
export function demoFigureProblems(out: string): string[] {
  const id = readdirSync(join(out, 'topologies'))[0] as string;
  const read = (...p: string[]) => readFileSync(join(out, ...p), 'utf8');
  // read as every reader reads a record (an older one migrated)
  const record = parseRecord(read('experiments', `${id}.json`), `${id}.json`);
  const baseline = record.runs.find((r) => !r.parent)?.name ?? 'baseline';
  const comments: Record<string, string> = {};
  for (const f of readdirSync(join(out, 'comments'))) comments[f.replace(/\.md$/, '')] = read('comments', f);
  const figures = [
    ...Object.entries(comments).flatMap(([run, body]) => commentFigures(run, body)),
    ...recordFigures(record),
    ...recordMarkdownFigures(read('experiments', `${id}.md`)),
    ...reportFigures(read('experiments', `${id}-report.md`), baseline),
  ];
  return figureProblems(record, figures, comments);
}

// ---------------------------------------------------------------------------------------------
// `topo watch` (issue 39 item 6): what it prints for a run and the record step it writes say the
// judgement it stored, the record's monitor_decision and its figure (src/record/figure.ts figureOf).

/** A line of `topo watch --json` (schemas/cli/watch.schema.json), as the checker reads it. */
export interface WatchLine {
  event: string;
  candidate: string;
  run_name: string;
  decision: { state: string; reference: { role: string; name: string }; relative_change: unknown } | null;
  headline: string;
  seconds_per_rollout?: { value: number; low: number | null; high: number | null; basis: string } | null;
  text: string;
}

/** The provisional claim and a run still measuring show a live figure, not the one the run settles at. */
const PROVISIONAL = new Set(['measuring', 'better-at-equal-age']);

/**
 * The figures `topo watch` printed for each recorded run once it settled (a settled decision, a
 * stop, an end, a record), in --json and in the text line; a reference job's lines are not a
 * recorded run's.
 */
export function watchFigures(lines: readonly WatchLine[], record: ExperimentRecord): ShownFigure[] {
  const out: ShownFigure[] = [];
  lines.forEach((l, i) => {
    const run = record.runs.find((r) => r.run_name === l.run_name)?.name;
    if (!run || l.event.startsWith('reference-') || superseded(lines, i)) return;
    if (l.event === 'decided' && PROVISIONAL.has(l.decision?.state ?? 'measuring')) return;
    const f = l.seconds_per_rollout;
    if (f) out.push({ surface: `watch --json ${l.event}`, run, value: f.value, precision: 0.00005 });
    for (const m of l.text.matchAll(/([\d.]+) s per rollout/g))
      out.push(figure(`watch ${l.event}`, run, m[1] as string));
  });
  return out;
}

/**
 * A line of a loser pruned against the leading candidate printed before a later `refigured` line of
 * it: it was anchored on the leader's estimate then, and the refigured line is its figure since.
 */
function superseded(lines: readonly WatchLine[], i: number): boolean {
  const l = lines[i] as WatchLine;
  if (l.decision?.reference.role !== 'leading candidate') return false;
  return lines.slice(i + 1).some((x) => x.run_name === l.run_name && x.event === 'refigured');
}

/** A headline's change, in %: signed "(+26.7%, 95% interval +13.9% to +41.1%)", or the magnitudes of "by 23.9% [95% interval 22.5%–25.3%]". */
function headlineChange(
  headline: string,
): { signed: boolean; value: number; low: number; high: number } | null {
  const sign = (s: string) => Number(s.replace('−', '-').replace(/^[+±]/, ''));
  const crossed = /\(([−+±][\d.]+)%, 95% interval ([−+±][\d.]+)% to ([−+±][\d.]+)%\)/.exec(headline);
  if (crossed)
    return { signed: true, value: sign(crossed[1]!), low: sign(crossed[2]!), high: sign(crossed[3]!) };
  const by = /by ([\d.]+)% \[95% interval ([\d.]+)%–([\d.]+)%\]/.exec(headline);
  return by ? { signed: false, value: Number(by[1]), low: Number(by[2]), high: Number(by[3]) } : null;
}

/** Where a headline's change is not its decision's (each to the 0.1% it prints). */
function headlineProblems(lines: readonly WatchLine[]): string[] {
  const problems: string[] = [];
  for (const l of lines) {
    const shown = headlineChange(l.headline);
    const c = l.decision?.relative_change as { value: number; low: number; high: number } | null;
    if (!shown || !c) continue;
    const pct = (x: number) => 100 * (shown.signed ? x : Math.abs(x));
    const [low, high] = [pct(c.low), pct(c.high)].sort((a, b) => a - b) as [number, number];
    const off = (x: number, shownPct: number) => Math.abs(x - shownPct) > 0.05 + 1e-9;
    if (off(pct(c.value), shown.value) || off(low, shown.low) || off(high, shown.high))
      problems.push(
        `${l.candidate}'s ${l.event} headline says ${shown.value}% [${shown.low}%, ${shown.high}%] but its decision ${(100 * c.value).toFixed(1)}% [${(100 * c.low).toFixed(1)}%, ${(100 * c.high).toFixed(1)}%]`,
      );
  }
  return problems;
}

/** Where the last decision watch printed for a recorded run is not the one the record stored. */
function storedDecisionProblems(lines: readonly WatchLine[], record: ExperimentRecord): string[] {
  const problems: string[] = [];
  for (const run of record.runs) {
    const said = lines.filter((l) => l.run_name === run.run_name && l.decision).at(-1)?.decision;
    const d = run.monitor_decision;
    if (!said) continue;
    const stored = d && { state: d.state, name: d.reference.name, change: d.relative_change ?? null };
    const printed = { state: said.state, name: said.reference.name, change: said.relative_change ?? null };
    if (JSON.stringify(printed) !== JSON.stringify(stored))
      problems.push(
        `${run.name}: watch's last decision is ${JSON.stringify(printed)}, the record's ${JSON.stringify(stored)}`,
      );
  }
  return problems;
}

/**
 * Every figure problem of a `topo watch`: its --json lines (text included) against the record it
 * wrote and that record's Markdown. Each recorded run's judgement (figureOf: its decision's figure,
 * else its own) comes first, so any figure watch or the record shows apart from it is named; then
 * the one-number checks (figureProblems), each headline's change against its decision, and the last
 * decision watch printed against the one the record stored. Empty when they agree.
 */
export function watchFigureProblems(
  lines: readonly WatchLine[],
  record: ExperimentRecord,
  markdown: string,
): string[] {
  const judged: ShownFigure[] = record.runs.flatMap((run) => {
    const f = figureOf(run);
    return f ? [{ surface: 'judgement', run: run.name, value: f.value, precision: 0.00005 }] : [];
  });
  const figures = [
    ...judged,
    ...watchFigures(lines, record),
    ...recordFigures(record),
    ...recordMarkdownFigures(markdown),
  ];
  return [
    ...figureProblems(record, figures),
    ...headlineProblems(lines),
    ...storedDecisionProblems(lines, record),
  ];
}
