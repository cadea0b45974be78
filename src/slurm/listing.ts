// One job model from two sources: the controller (squeue) knows every live job and the ended ones it
// still holds (MinJobAge); accounting (sacct) knows ended jobs for longer, but never a held job
// (Eligible=Unknown) and a new job only once slurmdbd has it.
import { isLive, type SlurmJob } from './types.js';

/**
 * The controller's jobs, plus the ended ones only accounting still knows, by job id. The controller
 * wins for every job it lists (it has restarts and the output file; sacct has neither). `accounting`
 * must be read BEFORE `controller`: a job accounting calls live that the newer controller listing
 * does not hold is gone (a controller that lost its state, a record slurmdbd never closed), never live.
 */
export function mergeJobListings(
  controller: readonly SlurmJob[],
  accounting: readonly SlurmJob[],
): SlurmJob[] {
  const ids = new Set(controller.map((j) => j.id));
  const endedElsewhere = accounting.filter((j) => !ids.has(j.id) && !isLive(j.state));
  return [...controller, ...endedElsewhere];
}
