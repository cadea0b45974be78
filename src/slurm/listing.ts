// One job model from two sources: the controller (squeue) knows every live job and the ended ones it
// still holds (MinJobAge); accounting (sacct) knows ended jobs for longer, but never a held job
// (Eligible=Unknown) and a new job only once slurmdbd has it.
import { isLive, type SlurmJob } from './types.js';

/**
 * The controller's jobs, plus the ended ones only accounting still knows. A job both list is the
 * controller's (it has restarts and the output file; sacct has neither). `accounting` must be read
 * BEFORE `controller`: a job accounting calls live that the newer controller listing does not hold
 * is gone (a controller that lost its state, a record slurmdbd never closed), never live.
 */
export function mergeJobListings(
  controller: readonly SlurmJob[],
  accounting: readonly SlurmJob[],
): SlurmJob[] {
  const held = new Map(controller.map((j) => [j.id, j]));
  const onlyAccounted = accounting.filter((j) => {
    if (isLive(j.status)) return false;
    const same = held.get(j.id);
    // A controller that lost its state numbers jobs from 1 again: an id it holds with another
    // submit time is another, newer job, and the accounted one is kept beside it.
    return !same || (same.submitTime !== null && j.submitTime !== null && same.submitTime !== j.submitTime);
  });
  return [...controller, ...onlyAccounted];
}
