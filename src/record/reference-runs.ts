// The record's reference jobs (issue 38 item 1): each job of the current best run beside a round's
// candidates (`reference: beside`) is recorded as a run of its own, charged with the GPU-minutes its
// Slurm allocation held; and the between-run term of a recorded reference is estimated from repeated
// runs of one topology (the runs and these jobs). Pure.
import type { BetweenRun } from '../analysis/decision.js';
import type { CandidateObservation, Interval } from '../types/generated/metrics.js';
import type { ExperimentRecord, ReferenceRun } from '../types/generated/record.js';

export type { ReferenceRun };

/** What is known of a reference job when it is recorded (a closed pull request, the demo, `topo watch`). */
export interface ReferenceJobSeen {
  of: string;
  runName: string;
  jobId: string | null;
  pullRequest: number | null;
  /** Its monitor comment's observation, when it has one of this run. */
  observation?: CandidateObservation | null;
  /** Slurm's allocation in run-minutes (elapsed × GPUs, time-scaled), when the comment has none. */
  heldGpuMinutes?: number | null;
  ended: string | null;
  candidates: string[];
  at: string | null;
}

/**
 * The record's entry for a reference job: charged with the GPU-minutes its comment says it used (the
 * monitor writes them when it stops it), else what Slurm says its allocation held. Pure.
 */
export function referenceRunEntry(x: ReferenceJobSeen): ReferenceRun {
  const used = x.observation?.decision?.gpu_minutes_used;
  const held = x.heldGpuMinutes == null ? null : Math.round(x.heldGpuMinutes);
  return {
    of: x.of,
    run_name: x.runName,
    job_id: x.jobId,
    pull_request: x.pullRequest,
    gpu_minutes: typeof used === 'number' ? used : held,
    ended: x.ended,
    candidates: [...new Set(x.candidates)],
    verdict: x.observation?.verdict ?? null,
    recorded_at: x.at,
  };
}

/**
 * The record with `run` among its reference runs, keyed by its run name: applying it twice equals
 * applying it once, and runs of different names commute (what compare-and-swap retries rely on). A
 * field the new entry leaves out keeps what the record held.
 */
export function applyReferenceRun(record: ExperimentRecord, run: ReferenceRun): ExperimentRecord {
  const list = record.reference_runs ?? [];
  const before = list.find((r) => r.run_name === run.run_name);
  const merged: ReferenceRun = structuredClone({ ...before, ...run });
  return {
    ...record,
    reference_runs: [...list.filter((r) => r.run_name !== run.run_name), merged],
  };
}

/** GPU-minutes the reference jobs held, all together (what the record charges for them). */
export function referenceGpuMinutes(record: Pick<ExperimentRecord, 'reference_runs'>): number {
  return (record.reference_runs ?? []).reduce((a, r) => a + (r.gpu_minutes ?? 0), 0);
}

/** Repeats of one topology give a between-run spread from this many degrees of freedom on. */
export const BETWEEN_RUN_MIN_DF = 3;

/** A run's projected full-run value on the log scale, with its own (within-run) variance. */
function logValue(p: Interval | null | undefined): { y: number; within: number } | null {
  if (!p || !(p.value > 0) || !(p.low > 0) || !(p.high >= p.low)) return null;
  const se = (Math.log(p.high) - Math.log(p.low)) / (2 * 1.96);
  return { y: Math.log(p.value), within: se * se };
}

/** Each topology's measured runs (record runs and reference jobs), by topology hash. */
function byTopology(record: ExperimentRecord): Map<string, Array<{ y: number; within: number }>> {
  const groups = new Map<string, Array<{ y: number; within: number }>>();
  const add = (hash: string | null | undefined, p: Interval | null | undefined) => {
    const v = logValue(p);
    if (!hash || !v) return;
    groups.set(hash, [...(groups.get(hash) ?? []), v]);
  };
  const hashOf = (name: string) => record.runs.find((r) => r.name === name)?.topology?.hash;
  for (const r of record.runs)
    if (r.status !== 'failed') add(r.topology?.hash, r.verdict?.projected_full_run);
  for (const r of record.reference_runs ?? []) add(hashOf(r.of), r.verdict?.projected_full_run);
  return groups;
}

/**
 * The spread of one topology's value between runs at different times, from the record's repeated
 * runs (a topology run again as a reference job): the pooled variance of their log values less the
 * part their own intervals explain. Null while the repeats give fewer than BETWEEN_RUN_MIN_DF degrees
 * of freedom (the decision then states the assumed term).
 */
export function betweenRunOf(record: ExperimentRecord): BetweenRun | null {
  let df = 0;
  let squares = 0;
  let within = 0;
  let runs = 0;
  let topologies = 0;
  for (const values of byTopology(record).values()) {
    if (values.length < 2) continue;
    const mean = values.reduce((a, v) => a + v.y, 0) / values.length;
    squares += values.reduce((a, v) => a + (v.y - mean) ** 2, 0);
    within += values.reduce((a, v) => a + v.within, 0) * ((values.length - 1) / values.length);
    df += values.length - 1;
    runs += values.length;
    topologies++;
  }
  if (df < BETWEEN_RUN_MIN_DF) return null;
  const logSd = Math.sqrt(Math.max(0, (squares - within) / df));
  return {
    logSd,
    text: `estimated from ${runs} runs of ${topologies} topolog${topologies === 1 ? 'y' : 'ies'} in the record (${df} degrees of freedom): ${Math.round(logSd * 1000) / 10}%`,
  };
}
