// The monitor action's scheduled pass: its inputs (read through a getter, checked here), the watched
// pass with the autopilot placed after decide, and what it reports (outputs, job summary, log line,
// warnings, failure). actions/monitor/main.ts builds the ports and writes the report.
import { DEFAULT_YIELD_TO } from '../github/workflow-runs.js';
import { renderMonitorSummary } from '../report/monitor-summary.js';
import { autopilot } from './autopilot.js';
import { type WatchDeps, type WatchOptions, type WatchReport, watchPass } from './loop.js';
import { STAGES, withStage } from './pass.js';
import type { MonitorExperiment, MonitorPorts } from './ports.js';
import { monitorSummaryInput } from './summary.js';

/** The pass's inputs. */
export interface ScheduledInputs {
  tick: number;
  watch: WatchOptions;
  /** Workflows whose queued runs the watch yields to. */
  yieldTo: string[];
}

/** The action's inputs (`input(name)`: '' when unset); throws on a value out of range. */
export function scheduledInputs(input: (name: string) => string): ScheduledInputs {
  const positive = (name: string, fallback: string): number => {
    const value = Number(input(name) || fallback);
    if (!(value > 0)) throw new Error(`input ${name} must be a positive number, got "${input(name)}"`);
    return value;
  };
  const tick = positive('tick-seconds', '60');
  // watch-minutes (0: one pass) and the seconds between looks
  const minutes = Number(input('watch-minutes') || '0');
  if (!(minutes >= 0 && minutes <= 60))
    throw new Error(`input watch-minutes must be between 0 and 60, got "${input('watch-minutes')}"`);
  return {
    tick,
    watch: { minutes, lookSeconds: positive('watch-look-seconds', '60') },
    yieldTo: (input('yield-to') || DEFAULT_YIELD_TO.join(',')).split(/[\s,]+/).filter(Boolean),
  };
}

/** The watched pass, with the autopilot between decide and act, and the experiments it read. */
export async function runScheduledPass(
  ports: MonitorPorts,
  { tick, watch }: ScheduledInputs,
  deps: WatchDeps & { log(line: string): void },
): Promise<{ seen: MonitorExperiment[]; watched: WatchReport }> {
  // The pass's experiments, kept for the job summary (slots, queue order).
  let seen: MonitorExperiment[] = [];
  const experiments = async () => {
    seen = await ports.experiments();
    return seen;
  };
  // The autopilot runs between decide and act of the full pass: its stops go through act, its
  // Requests are submitted by the next pass's queue like a person's; the looks leave it out.
  const stages = withStage(STAGES, { name: 'autopilot', run: autopilot }, { after: 'decide' });
  const watched = await watchPass(
    { ...ports, experiments },
    { tickSeconds: tick },
    { ...watch, stages },
    deps,
  );
  if (watch.minutes > 0) deps.log(watchLine(watched));
  return { seen, watched };
}

/** What the action reports for one watched pass. */
export interface ScheduledReport {
  outputs: { candidates: string; changed: string; states: string };
  /** The job summary (markdown). */
  summary: string;
  /** The log line. */
  line: string;
  warnings: string[];
  /** The step's failure: the pass's errors, when it had any. */
  failure?: string;
}

export function scheduledReport(
  seen: readonly MonitorExperiment[],
  watched: WatchReport,
  { repositoryUrl, api }: { repositoryUrl: string; api: { reads: number; writes: number } },
): ScheduledReport {
  const report = { ...watched.pass, errors: watched.errors };
  const changed = report.candidates.filter((c) => c.changed).length;
  return {
    outputs: {
      candidates: String(report.candidates.length),
      changed: String(changed),
      states: JSON.stringify(Object.fromEntries(report.candidates.map((c) => [c.runName, c.state]))),
    },
    summary: renderMonitorSummary(monitorSummaryInput(seen, report, { repositoryUrl, api: { ...api } })),
    line: `${report.candidates.length} candidate(s), ${changed} pull request(s) updated; GitHub API: ${api.reads} read(s), ${api.writes} write(s)`,
    warnings: report.warnings,
    ...(report.errors.length ? { failure: report.errors.join('\n') } : {}),
  };
}

/** The watch's log line: its looks, the runs they stopped, why it ended. */
export function watchLine(w: WatchReport): string {
  const stopped = w.looks.flatMap((l) => l.stopped);
  const why = w.ended === 'yielded' ? `yielded to ${w.yieldedTo.join(', ')}` : w.ended;
  return `watch: ${w.looks.length} look(s), ${stopped.length} stopped${stopped.length ? ` (${stopped.join(', ')})` : ''}; ended: ${why}`;
}
