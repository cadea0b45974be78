// One job model from two sources: the controller (squeue) knows every live job and the ended ones it
// still holds (MinJobAge); accounting (sacct) knows ended jobs for longer, but never a held job
// (Eligible=Unknown) and a new job only once slurmdbd has it.
import { isLive, isWaiting, type SlurmJob } from './types.js';

/**
 * The controller's jobs, plus the ended ones only accounting still knows. A job both list is the
 * controller's (it has restarts and the output file; sacct has neither). `accounting` must be read
 * BEFORE `controller`: a job accounting calls live that the newer controller listing does not hold
 * is gone (a controller that lost its state, a record slurmdbd never closed), never live.
 * Accounting lists every allocation (`sacct -D`): a requeued job's earlier ones are folded into the
 * job (its held seconds and GPU-minutes), never listed as jobs of their own.
 */
export function mergeJobListings(
  controller: readonly SlurmJob[],
  accounting: readonly SlurmJob[],
): SlurmJob[] {
  const { latest, byJob } = allocationsOf(accounting);
  const held = new Map(controller.map((j) => [j.id, j]));
  const onlyAccounted = latest.filter((j) => {
    if (isLive(j.status)) return false;
    const same = held.get(j.id);
    // A controller that lost its state numbers jobs from 1 again: an id it holds with another
    // submit time is another, newer job, and the accounted one is kept beside it.
    return !same || (same.submitTime !== null && j.submitTime !== null && same.submitTime !== j.submitTime);
  });
  return [...controller, ...onlyAccounted].map((j) => withEarlier(j, byJob.get(allocationKey(j)) ?? []));
}

/** One job's allocations share its id and name (each has its own start; a requeue may renew the submit time). */
function allocationKey(j: SlurmJob): string {
  return `${j.id}\n${j.name}`;
}

/** When the allocation started, for ordering; a waiting job's start is a forecast: after every held one. */
function startOf(j: SlurmJob): string {
  return isWaiting(j.status) || j.startTime === null ? '~' : j.startTime;
}

/** Accounting's rows by job (id and name), and each job's latest allocation (newest submit, then start). */
function allocationsOf(rows: readonly SlurmJob[]): { latest: SlurmJob[]; byJob: Map<string, SlurmJob[]> } {
  const byJob = new Map<string, SlurmJob[]>();
  for (const r of rows) byJob.set(allocationKey(r), [...(byJob.get(allocationKey(r)) ?? []), r]);
  const order = (j: SlurmJob) => `${j.submitTime ?? ''} ${j.startTime ?? '~'}`;
  const latest = [...byJob.values()].map((all) => all.reduce((a, b) => (order(b) > order(a) ? b : a)));
  return { latest, byJob };
}

/**
 * The job with the held seconds and GPU-minutes of its earlier allocations added: accounting's rows
 * of its id and name that started, and ended, before its own allocation started.
 */
function withEarlier(job: SlurmJob, rows: readonly SlurmJob[]): SlurmJob {
  const own = startOf(job);
  const before = rows.filter((r) => r.startTime !== null && r.endTime !== null && r.startTime < own);
  if (before.length === 0) return job;
  const sum = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : a + b);
  return {
    ...job,
    heldSeconds: before.reduce((total, e) => sum(total, e.heldSeconds), job.heldSeconds),
    gpuMinutes: before.reduce((total, e) => sum(total, e.gpuMinutes), job.gpuMinutes),
  };
}
