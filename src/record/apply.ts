// apply(record, outcome): the one way a candidate's outcome enters the record. Pure and keyed by the
// candidate's name, so applying the same outcome twice equals applying it once and outcomes of
// different candidates commute (what compare-and-swap retries rely on).
import type { CandidateObservation, Failure, Prediction } from '../types/generated/metrics.js';
import type {
  CurrentBest,
  Decision,
  ExperimentRecord,
  RecordRun,
  RunTopology,
  SkillReflection,
} from '../types/generated/record.js';
import { bestReasoning, bestSteps } from './best.js';
import { decisionText, interval, seconds } from './format.js';
import { withDecisionFigures } from './migrate.js';
import { stabilisedValue } from './model.js';

export type OutcomeKind = 'accepted' | 'rejected' | 'failed' | 'stopped';

export interface RecordOutcome {
  candidate: string;
  /** accepted = merged; rejected = closed unmerged; failed = the run failed; stopped = stopped early. */
  kind: OutcomeKind;
  /** When the pull request was closed (ISO 8601); the record never reads a clock. */
  at?: string | null;
  parent?: string | null;
  run_name?: string | null;
  job_id?: string | null;
  run_dir?: string | null;
  topology?: RunTopology | null;
  change?: Record<string, string> | null;
  hypothesis?: string | null;
  expected_effect?: string | null;
  /** topo suggest's prediction from the candidate file (the record adds the measured value beside it). */
  prediction?: Prediction | null;
  /** The monitor's observation (verdict + stable metrics), from the sticky comment or a fresh query. */
  observation?: CandidateObservation | null;
  /** A `/topo reject <reason>` text, or any explicit reason; else one is derived from the verdict. */
  reason?: string | null;
  next?: string | null;
  failure?: Failure | null;
  learnings?: SkillReflection[];
  /** Telemetry gaps found while recording, e.g. "metrics unavailable: …". */
  telemetry_gaps?: string[];
  pull_request?: { number: number; url?: string | null; merge_commit_sha?: string | null } | null;
}

const STATUS: Record<OutcomeKind, RecordRun['status']> = {
  accepted: 'accepted',
  rejected: 'rejected',
  failed: 'failed',
  stopped: 'stopped',
};

function uniqueBy<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const k = key(item);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

/** What the verdict says, in one sentence, for a decision's reason. */
export function verdictReason(run: RecordRun): string | null {
  const parts: string[] = [];
  const projected = run.verdict?.projected_full_run;
  const stable = run.verdict?.value;
  if (projected) parts.push(`projected full-run ${interval(projected, ' s/rollout')}`);
  else if (stable) parts.push(`stable ${interval(stable, ' s/rollout')}`);
  else if (run.stable_metrics?.seconds_per_rollout_full_run != null)
    parts.push(`full-run ${seconds(run.stable_metrics.seconds_per_rollout_full_run)} s/rollout`);
  if (run.verdict && run.verdict.state !== 'stable') parts.push(`verdict ${run.verdict.state}`);
  const compared = decisionText(run.monitor_decision);
  if (compared) parts.push(compared);
  return parts.length ? parts.join('; ') : null;
}

function failureReason(failures: Failure[] | undefined): string | null {
  const last = failures?.at(-1);
  return last ? `${last.kind}: ${last.message}` : null;
}

function decide(kind: OutcomeKind, run: RecordRun, outcome: RecordOutcome): Decision {
  const derived =
    kind === 'failed' ? (failureReason(run.failures) ?? verdictReason(run)) : verdictReason(run);
  const reason =
    outcome.reason ??
    (kind === 'accepted'
      ? `merged${derived ? ` (${derived})` : ''}`
      : kind === 'rejected'
        ? `closed without merge${derived ? ` (${derived})` : ''}`
        : kind === 'stopped'
          ? `stopped${derived ? ` (${derived})` : ''}`
          : (derived ?? 'failed'));
  const next = outcome.next ?? run.decision?.next ?? run.failures?.at(-1)?.likely_fix ?? null;
  return { outcome: kind === 'accepted' ? 'accept' : 'reject', reason, next };
}

function mergeRun(existing: RecordRun | undefined, outcome: RecordOutcome): RecordRun {
  const run: RecordRun = existing
    ? clone(existing)
    : {
        name: outcome.candidate,
        status: 'pending',
        decision: { outcome: 'pending', reason: null, next: null },
      };
  const set = <K extends keyof RecordRun>(key: K, value: RecordRun[K] | undefined) => {
    if (value !== undefined) run[key] = clone(value);
  };
  set('parent', outcome.parent);
  set('run_name', outcome.run_name ?? outcome.observation?.run_name);
  set('job_id', outcome.job_id);
  set('run_dir', outcome.run_dir);
  if (outcome.topology) run.topology = clone(outcome.topology);
  if (outcome.change) run.change = clone(outcome.change);
  set('hypothesis', outcome.hypothesis);
  set('expected_effect', outcome.expected_effect);
  if (outcome.observation) {
    run.verdict = clone(outcome.observation.verdict);
    run.stable_metrics = clone(outcome.observation.stable_metrics);
    // THE decision: what the comment, check and label showed, the run's one outcome
    if (outcome.observation.decision) run.monitor_decision = clone(outcome.observation.decision);
  }
  if (outcome.telemetry_gaps?.length) {
    const metrics = run.stable_metrics ?? {};
    const quality = metrics.telemetry_quality ?? {};
    quality.gaps = uniqueBy([...(quality.gaps ?? []), ...outcome.telemetry_gaps], (g) => g);
    metrics.telemetry_quality = quality;
    run.stable_metrics = metrics;
  }
  const failures = [
    ...(run.failures ?? []),
    ...(outcome.observation?.failure ? [outcome.observation.failure] : []),
    ...(outcome.failure ? [outcome.failure] : []),
  ];
  if (failures.length) run.failures = uniqueBy(failures, (f) => `${f.kind}\u0000${f.message}`).map(clone);
  if (outcome.learnings?.length) {
    run.skill_reflections = uniqueBy(
      [...(run.skill_reflections ?? []), ...outcome.learnings.map(clone)],
      (l) => l.learning.trim(),
    );
  }
  set('pull_request', outcome.pull_request);
  set('recorded_at', outcome.at);
  const prediction = outcome.prediction ?? run.prediction;
  if (prediction) run.prediction = againstMeasured(prediction, run, outcome.kind);
  run.status = STATUS[outcome.kind];
  run.decision = decide(outcome.kind, run, outcome);
  return run;
}

/** The prediction with the run's measured value, its error and whether the interval held it. */
export function againstMeasured(p: Prediction, run: RecordRun, kind: OutcomeKind): Prediction {
  // the prediction is a steady rate: measured by the verdict's steady rate when it has one
  const measured =
    kind === 'failed' ? null : (run.verdict?.steady_seconds_per_rollout?.value ?? stabilisedValue(run));
  const r = (x: number) => Math.round(x * 1e4) / 1e4;
  return {
    ...clone(p),
    measured_seconds_per_rollout: measured,
    error: measured === null ? null : r(measured / p.seconds_per_rollout - 1),
    covered: measured === null ? null : p.low <= measured && measured <= p.high,
  };
}

/**
 * The record's best after `run` was applied: the last of the succession over the accepted runs
 * (./best.ts), so re-applying an outcome changes nothing and the merge order does not matter.
 */
function updateBest(record: ExperimentRecord, run: RecordRun): CurrentBest {
  const previous = record.current_best;
  const step = bestSteps(record.runs).at(-1);
  if (!step)
    return {
      topology: null,
      run_name: null,
      stabilized_seconds_per_rollout_full_run: null,
      decision_reasoning: null,
    };
  const value = step.value;
  const reasoning = bestReasoning(step);
  // the same best for the same reason: a note on how it came back stays (re-applying changes nothing)
  if (
    previous.topology === step.run.name &&
    previous.stabilized_seconds_per_rollout_full_run === value &&
    previous.decision_reasoning?.startsWith(reasoning)
  )
    return previous;
  // The best candidate was re-recorded as not accepted: the best remaining one took its place.
  const fallback = previous.topology === run.name && run.status !== 'accepted' && step.run.name !== run.name;
  return {
    topology: step.run.name,
    run_name: step.run.run_name ?? null,
    stabilized_seconds_per_rollout_full_run: value,
    decision_reasoning: fallback ? `${reasoning}; ${run.name} was re-recorded as ${run.status}` : reasoning,
  };
}

/** Applies one candidate's outcome; returns a new record and leaves the input untouched. */
export function apply(record: ExperimentRecord, outcome: RecordOutcome): ExperimentRecord {
  const next = clone(record);
  const index = next.runs.findIndex((r) => r.name === outcome.candidate);
  const merged = mergeRun(index >= 0 ? next.runs[index] : undefined, outcome);
  if (index >= 0) next.runs[index] = merged;
  else next.runs.push(merged);
  // a decision from an older comment carries no figure: it gets the one it implies in the record
  next.runs = withDecisionFigures(next.runs);
  const run = next.runs.find((r) => r.name === outcome.candidate) as RecordRun;
  next.current_best = updateBest(next, run);
  return next;
}
