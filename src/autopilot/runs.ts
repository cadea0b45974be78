// The experiment's runs as the autopilot sees them (PilotRun), from the record and from the live
// candidates. The round of a bot candidate travels in its hypothesis ("Autopilot round N: …"), so
// the record keeps it without a schema change and every reader finds the same rounds. Pure.
import { type OutcomeInput, outcomeOf } from '../analysis/outcome.js';
import { heldAgain, runOutcome } from '../campaign/held.js';
import type { RunOutcome } from '../campaign/rounds.js';
import { figureOf } from '../record/figure.js';
import { baselineRun } from '../record/model.js';
import { EXPERIMENT_DEFAULTS } from '../topology/settings.js';
import type { ExperimentRecord, RecordRun } from '../types/generated/record.js';
import type { PilotRun } from './core.js';

const ROUND = /^Autopilot round (\d{1,3}): /;

/** The hypothesis of a bot candidate of round N. */
export function roundHypothesis(round: number, hypothesis: string): string {
  return `Autopilot round ${round}: ${hypothesis.replace(ROUND, '')}`;
}

/** The round a hypothesis names, or null for a person's candidate. */
export function roundOf(hypothesis: string | null | undefined): number | null {
  const m = ROUND.exec(hypothesis ?? '');
  return m ? Number(m[1]) : null;
}

/**
 * A run's outcome as the campaign counts it: THE outcome of its one decision
 * (src/analysis/outcome.ts outcomeOf), what its comment, check, label and record said. A reference
 * (the baseline) counts as `equivalent`. Faster at equal run age while a guard held the claim (issue
 * 43 item 2), or stopped still measuring: no decision, as the campaign bench records it
 * (src/campaign/held.ts runOutcome), never a not-better.
 */
export function campaignOutcome(x: OutcomeInput): RunOutcome {
  const o = outcomeOf(x);
  if (o === 'reference') return 'equivalent';
  return o === 'measuring' || o === 'better-at-equal-age' || o === 'faster-drift-not-ruled-out'
    ? 'undecided'
    : o;
}

/** A recorded run's outcome as the campaign counts it (null while its job lives). */
export function recordedOutcome(run: RecordRun): RunOutcome | null {
  if (run.status === 'pending' || run.status === 'running') return null;
  return campaignOutcome({
    decision: run.monitor_decision,
    failed: run.status === 'failed',
    ended: true,
    merged: run.status === 'accepted',
  });
}

/**
 * GPU-hours a recorded run held: the monitor's GPU-minutes of its Slurm allocation (its decision's
 * gpu_minutes_used, elapsed × GPUs); a record written before those were kept falls back to its GPUs
 * over its minutes of data. The bot's state keeps the allocation of every run it saw (src/monitor/autopilot.ts).
 */
export function recordedGpuHours(run: RecordRun, gpusPerRun: number): number {
  const used = run.monitor_decision?.gpu_minutes_used;
  if (typeof used === 'number') return used / 60;
  const minutes = run.verdict?.minutes_of_data ?? 0;
  return (gpusPerRun * minutes) / 60;
}

/**
 * Why an ended candidate's decision (the record's or this pass's) was not reached, by the rule the
 * campaign loop records (src/campaign/held.ts runOutcome: no decision, a guard held it, or it closed
 * at the horizon), its outcome when a guard held it below −min_improvement (`undecided`, to be rerun,
 * never `not-better`), and its last relative change: a held run is no
 * tried topology for the stop rule. `settlesOnRerun`: held so on a rerun, it settles `better`
 * (heldAgain; withReruns applies it once the bot's state says it is one). `drifting`: the detector
 * marks its job drifting.
 */
export function heldFacts(
  d: (NonNullable<Parameters<typeof runOutcome>[0]> & { min_improvement?: number }) | null,
  o: { minImprovement: number; horizonMinutes: number; drifting?: boolean },
): Pick<PilotRun, 'held' | 'change' | 'rerun' | 'settlesOnRerun'> & { outcome?: RunOutcome } {
  const ctx = { ...o, minImprovement: d?.min_improvement ?? o.minImprovement };
  const { outcome, held, rerun } = runOutcome(d, { ...ctx, attempt: 1 });
  const again = !!d && !!rerun && heldAgain(d, { ...ctx, attempt: 2 }) !== null;
  const change = d?.relative_change?.value;
  return {
    ...(held ? { held } : {}),
    ...(rerun ? { outcome, rerun: true } : {}),
    ...(again ? { settlesOnRerun: true } : {}),
    ...(change !== undefined ? { change } : {}),
  };
}

/**
 * The runs as the bot's reruns make them (PilotState.reruns): a rerun candidate counts its attempt;
 * one whose new Request is not made yet (its run is still the held job it replaces) waits for it,
 * with nothing of that job (its GPU-hours count by its run name, apart); one whose rerun, held
 * again, settles by the campaign's rule (heldAgain) is `better`.
 */
export function withReruns(
  runs: readonly PilotRun[],
  reruns: Readonly<Record<string, { attempt: number; after: string | null }>>,
): PilotRun[] {
  return runs.map((r) => {
    const x = reruns[r.name];
    if (!x || r.origin !== 'bot') return r;
    if ((r.runName ?? null) === x.after && r.request !== 'live') {
      const { runName: _, held: _h, rerun: _r, settlesOnRerun: _s, change: _c, seconds: _x, ...rest } = r;
      return { ...rest, attempt: x.attempt, request: 'none', outcome: null, gpuHours: 0 };
    }
    if (r.settlesOnRerun && r.outcome !== null) {
      const { held: _h, rerun: _r, settlesOnRerun: _s, ...rest } = r;
      return { ...rest, attempt: x.attempt, outcome: 'better' };
    }
    return { ...r, attempt: x.attempt };
  });
}

/**
 * Every recorded run: the baseline as round 0, bot candidates in their round, people's with none.
 * `decisions`: the experiment's min_improvement and decision horizon (its max_decision_minutes).
 */
export function runsFromRecord(
  record: ExperimentRecord | undefined,
  gpusPerRun: number,
  decisions: { minImprovement: number; horizonMinutes: number } = {
    minImprovement: EXPERIMENT_DEFAULTS.minImprovement,
    horizonMinutes: EXPERIMENT_DEFAULTS.maxDecisionMinutes,
  },
): PilotRun[] {
  if (!record) return [];
  const base = baselineRun(record);
  return record.runs.map((run) => {
    const round = run === base ? 0 : roundOf(run.hypothesis);
    const outcome = run === base && run.status !== 'failed' ? ('equivalent' as const) : recordedOutcome(run);
    // its figure (what its decision says), so rounds rank winners as the record's rule does
    const seconds = figureOf(run)?.value ?? null;
    return {
      name: run.name,
      round,
      origin: round !== null && round > 0 ? 'bot' : 'person',
      ...(run.pull_request ? { pr: run.pull_request.number } : {}),
      pull: run.pull_request?.merge_commit_sha ? 'merged' : run.pull_request ? 'closed' : 'none',
      request: outcome === null ? 'live' : 'ended',
      outcome,
      ...(seconds !== null && run.status !== 'failed' ? { seconds } : {}),
      gpuHours: recordedGpuHours(run, gpusPerRun),
      ...(run === base || outcome === null || outcome === 'failed'
        ? {}
        : heldFacts(run.monitor_decision ?? null, decisions)),
      ...(run.run_name ? { runName: run.run_name } : {}),
      recorded: true,
    };
  });
}

/** Live runs win over recorded ones of the same name (a candidate recorded, then reopened and run again). */
export function mergeRuns(recorded: readonly PilotRun[], live: readonly PilotRun[]): PilotRun[] {
  const names = new Set(live.map((r) => r.name));
  return [...recorded.filter((r) => !names.has(r.name)), ...live];
}
