// `topo demo --autopilot`: the autopilot you can watch. An experiment with an `autopilot` policy on
// the default branch of a repository on the local GitHub API runs on the local cluster from the
// baseline to a merged winner with no command typed: every few seconds one monitor pass runs as the
// repository's workflow runs it (the same code, src/monitor with its autopilot stage and the monitor
// action's ports), and the demo prints what a person watching the repository sees change: each round,
// each proposal, each decision against its reference, the merges, the GPU-hours against the budget and
// the conclusion. `--quick` runs a shorter experiment in which a writer (the demo's one scripted person)
// pauses and resumes it on the dashboard and then lowers its budget below what is spent: the budget's
// stop. The output page shows the dashboard as it evolved. Orchestration only, through
// AutopilotDemoParts (./autopilot-parts.ts), so the loop is testable with parts in memory.
import { setTimeout as sleep } from 'node:timers/promises';
import { MONITOR_CHECK_NAME, VALIDATE_CHECK_NAME } from '../github/check-runs.js';
import type { Experiment } from '../types/generated/experiment.js';
import { dashboardRows, EMPTY_HUB, gpuHoursLine, type HubView, narrate } from './autopilot-view.js';
import type { Cleanup } from './cleanup.js';
import { type HtmlSection, renderIndexHtml } from './index-html.js';
import type { DemoOutput } from './output.js';
import {
  type ClusterEnv,
  DemoAborted,
  type DemoCluster,
  type DemoResult,
  ensureCluster,
  interruptedExit,
} from './run.js';

/** The demo's repository on the local GitHub API. */
export interface DemoRepo {
  /** Its API address, e.g. http://127.0.0.1:4000/repos/demo/topologies. */
  url: string;
  defaultBranch: string;
}

/** A bot pull request's page: its title, body and comments. */
export interface PullPage {
  number: number;
  title: string;
  markdown: string;
}

export interface AutopilotDemoParts {
  cluster: DemoCluster;
  /** The experiment from the sample command with `policy`, and the default branch's files. */
  prepare(
    command: string,
    env: ClusterEnv,
    dateStamp: string,
    policy: Partial<Experiment>,
  ): Promise<{ experiment: Experiment; files: Record<string, string> }>;
  /** Starts the local GitHub API with the repository holding `files` on its default branch. */
  github(files: Record<string, string>): Promise<DemoRepo>;
  /** One monitor pass as the repository's workflow runs it; the pass's errors. */
  pass(env: ClusterEnv): Promise<string[]>;
  /** What a person watching the repository sees now (./autopilot-parts.ts hubView). */
  view(experimentId: string): HubView;
  /** The quick run's scripted writer on the repository. */
  writer(experimentId: string): ScriptedWriter;
  /** The default branch's files. */
  files(): Map<string, string>;
  /** The experiment's bot pull requests, each as its page shows it. */
  pages(experimentId: string): PullPage[];
  /** Cancels every live Slurm job of the experiment (an interruption, a failure). */
  cancelAll(experimentId: string, env: ClusterEnv): Promise<void>;
  /** The monitor passes' requests to the GitHub API so far (GraphQL queries are reads). */
  requests(): { reads: number; writes: number };
  /** Stops the local GitHub API. */
  close(): Promise<void>;
}

export interface AutopilotDemoOptions {
  command: string;
  quick: boolean;
  /** Real seconds between two passes (a pass is the schedule's: every 5 run-minutes at most). */
  pollSeconds: number;
  dateStamp: string;
  isRoot: boolean;
  mermaidScript: string;
  /** The loop must close within this many real seconds. */
  maxWallSeconds: number;
}

/** The checks branch protection requires on the demo's default branch (and `merge: auto` waits for). */
export const DEMO_REQUIRED_CHECKS = [VALIDATE_CHECK_NAME, MONITOR_CHECK_NAME];

/**
 * The demo experiment's policy. Full: two rounds of three after the baseline, merged automatically.
 * Quick: rounds of two, decisions within 40 run-minutes, a budget its scripted writer lowers.
 */
export function demoPolicy(quick: boolean): Partial<Experiment> {
  return {
    max_parallel: 3,
    ...(quick ? { max_decision_minutes: 40 } : {}),
    autopilot: {
      enabled: true,
      gpu_hours: 150,
      parallel: quick ? 2 : 3,
      max_rounds: quick ? 3 : 2,
      stop_after: 2,
      submit: 'auto',
      merge: 'auto',
      required_checks: DEMO_REQUIRED_CHECKS,
    },
  } as Partial<Experiment>;
}

/** One version of the dashboard as the output page shows it. */
interface Version {
  pass: number;
  seconds: number;
  body: string;
}

interface Watch {
  parts: AutopilotDemoParts;
  env: ClusterEnv;
  experimentId: string;
  log: (line: string) => void;
  signal: AbortSignal;
  started: number;
  now: () => number;
}

export interface AutopilotDemoDeps {
  parts: AutopilotDemoParts;
  log: (line: string) => void;
  output: DemoOutput;
  cleanup: Cleanup;
  signal: AbortSignal;
  now?: () => number;
}

/** What the quick run's writer does on the repository: comment on the dashboard, lower the budget. */
export interface ScriptedWriter {
  comment(body: string): void;
  lowerBudget(gpuHours: number): void;
}

/** The whole autopilot demo. Never throws for an interruption: returns its exit code after cleaning up. */
export async function runAutopilotDemo(
  options: AutopilotDemoOptions,
  deps: AutopilotDemoDeps,
): Promise<DemoResult> {
  const { parts, output, cleanup, signal, log } = deps;
  const now = deps.now ?? Date.now;
  const started = now();
  let experimentId: string | null = null;
  const result = (exitCode: number): DemoResult => ({
    exitCode,
    experimentId,
    outcomes: [],
    references: [],
    files: output.written(),
    wallSeconds: (now() - started) / 1000,
  });
  try {
    const env = await ensureCluster(parts.cluster, options.isRoot, cleanup, log);
    if (!env) return result(1);
    log(`creating the experiment from:\n  ${options.command}`);
    const prepared = await parts.prepare(options.command, env, options.dateStamp, demoPolicy(options.quick));
    experimentId = prepared.experiment.experiment_id;
    const id = experimentId;
    log('starting the local GitHub API (every request checked against GitHub’s OpenAPI description)');
    const repo = await parts.github(prepared.files);
    cleanup.add('stop the local GitHub API', () => parts.close());
    cleanup.add(`cancel the Slurm jobs of ${id}`, () => parts.cancelAll(id, env));
    log(
      `repository ${repo.url}: the experiment and its autopilot policy on ${repo.defaultBranch}, no command typed from here on`,
    );
    const watch: Watch = { parts, env, experimentId: id, log, signal, started, now };
    const versions = await watchLoop(watch, options, parts.writer(id));
    log(apiLine(parts.requests(), versions.passes));
    writeOutput(output, options, id, parts, versions);
    return result(versions.closed ? 0 : 1);
  } catch (error) {
    return result(interruptedExit(error, signal, log));
  } finally {
    await cleanup.runAll(log);
  }
}

/**
 * Passes until the loop closes (the final report posted, the dashboard closed) or the time runs out:
 * after each, what changed is printed, the dashboard kept when it changed, and the quick run's writer
 * acts.
 */
async function watchLoop(
  w: Watch,
  options: AutopilotDemoOptions,
  writer: ScriptedWriter,
): Promise<{ list: Version[]; closed: boolean; passes: number }> {
  const list: Version[] = [];
  let seen: HubView = EMPTY_HUB;
  const script = options.quick ? quickScript(writer, w.log) : () => {};
  for (let pass = 1; ; pass++) {
    if (w.signal.aborted) throw new DemoAborted((w.signal.reason as NodeJS.Signals) ?? 'SIGINT');
    const errors = await w.parts.pass(w.env);
    for (const e of errors) w.log(`  (monitor pass ${pass}: ${e})`);
    const next = w.parts.view(w.experimentId);
    for (const line of narrate(seen, next)) w.log(line);
    const seconds = Math.round((w.now() - w.started) / 1000);
    if (next.dashboard && next.dashboard.body !== list.at(-1)?.body)
      list.push({ pass, seconds, body: next.dashboard.body });
    script(pass, seen, next);
    seen = next;
    if (next.reported && next.dashboard && !next.dashboard.open) return { list, closed: true, passes: pass };
    if (seconds > options.maxWallSeconds) {
      w.log(`the loop did not close within ${options.maxWallSeconds} s: stopping`);
      return { list, closed: false, passes: pass };
    }
    try {
      await sleep(options.pollSeconds * 1000, undefined, { signal: w.signal });
    } catch {
      throw new DemoAborted((w.signal.reason as NodeJS.Signals) ?? 'SIGINT');
    }
  }
}

/** A repository's monitor runs every 5 minutes (its schedule): 12 passes an hour. */
const PASSES_PER_HOUR = 12;

/** What the passes cost in GitHub API requests, and an hour of them at the schedule's pace. */
export function apiLine(r: { reads: number; writes: number }, passes: number): string {
  const total = r.reads + r.writes;
  const perPass = total / Math.max(1, passes);
  return `GitHub API: ${total} requests in ${passes} passes (${r.reads} reads, ${r.writes} writes), ${perPass.toFixed(1)} a pass: about ${Math.round(perPass * PASSES_PER_HOUR)} an hour at one pass every 5 minutes`;
}

/**
 * The quick run's scripted writer: `/topo pause` on the dashboard once round 1 opened, `/topo resume`
 * two passes after the pause was answered, and, once round 2 opened, the budget lowered on the default
 * branch to the GPU-hours already spent: the budget's stop (its live runs stopped, the conclusion).
 */
export function quickScript(writer: ScriptedWriter, log: (line: string) => void) {
  let paused: number | null = null;
  let resumed = false;
  let lowered = false;
  return (pass: number, _prev: HubView, next: HubView): void => {
    // a round opens with a pull request of its own, or with reruns only (the dashboard's rows say so)
    const rows = next.dashboard ? dashboardRows(next.dashboard.body) : [];
    const opened = (round: number) =>
      next.pulls.some((p) => p.round === round) || rows.some((r) => r.round === String(round));
    if (paused === null && opened(1)) {
      writer.comment('/topo pause');
      log('  alice (a writer) comments `/topo pause` on the dashboard');
      paused = pass;
    } else if (paused !== null && !resumed && pass >= paused + 3) {
      writer.comment('/topo resume');
      log('  alice comments `/topo resume` on the dashboard');
      resumed = true;
    } else if (resumed && !lowered && opened(2) && next.dashboard) {
      const spent = Number(/\*\*GPU-hours:\*\* ([\d.]+) spent/.exec(next.dashboard.body)?.[1] ?? Number.NaN);
      if (!Number.isFinite(spent)) return;
      const limit = Math.max(1, Math.floor(spent));
      writer.lowerBudget(limit);
      log(`  alice lowers autopilot.gpu_hours to ${limit} on the default branch (${spent} GPU-hours spent)`);
      lowered = true;
    }
  };
}

function pullFile(number: number): string {
  return `pulls/${number}.md`;
}

/** The default branch's files, the dashboard's versions, each bot pull request's page and index.html. */
function writeOutput(
  output: DemoOutput,
  options: AutopilotDemoOptions,
  id: string,
  parts: AutopilotDemoParts,
  versions: { list: Version[] },
): void {
  const main = parts.files();
  for (const [path, text] of main) output.write(path, text);
  const dashboard = versions.list
    .map((v) => `## Pass ${v.pass} (${v.seconds} s)\n\n${v.body}`)
    .join('\n\n---\n\n');
  output.write('dashboard.md', dashboard);
  const pulls = parts.pages(id);
  for (const p of pulls) output.write(pullFile(p.number), p.markdown);
  output.copy(options.mermaidScript, 'mermaid.min.js');
  const report = main.get(`experiments/${id}-report.md`);
  const sections: HtmlSection[] = [
    ...(report
      ? [{ id: 'final-report', title: 'Final report', markdown: report, file: `experiments/${id}-report.md` }]
      : []),
    {
      id: 'dashboard',
      title: 'The dashboard issue, as it evolved',
      markdown: dashboard,
      file: 'dashboard.md',
    },
    {
      id: 'record',
      title: `Experiment record ${id}`,
      markdown: main.get(`experiments/${id}.md`) ?? '',
      file: `experiments/${id}.md`,
    },
    ...pulls.map((p) => ({
      id: `pull-${p.number}`,
      title: p.title,
      markdown: p.markdown,
      file: pullFile(p.number),
    })),
  ];
  output.write(
    'index.html',
    renderIndexHtml({
      title: `topo demo --autopilot: ${id}`,
      intro: `Started from: ${options.command}. Every pull request, merge, comment and the dashboard below were written by the monitor's passes; no command was typed.`,
      sections,
      mermaidScript: 'mermaid.min.js',
    }),
  );
  const gpu = versions.list.length ? gpuHoursLine(versions.list.at(-1)?.body ?? '') : null;
  if (gpu) output.write('gpu-hours.txt', `${gpu}\n`);
}
