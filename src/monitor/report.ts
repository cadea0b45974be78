// What a pass reports: each judged candidate (grouped by pull request, in the pass's order) with its
// state, verdict, view and what the pass did to it, and the errors (each experiment's in order,
// then each pull request's). The action's outputs and job summary, `/topo status` and the demo read it.
import type { CandidateState } from '../judge/state.js';
import type { CandidateView } from '../report/pr-comment.js';
import type { CandidateObservation } from '../types/generated/metrics.js';
import { judged, type PassState } from './state.js';

export interface CandidateReport {
  experimentId: string;
  candidate: string;
  runName: string;
  pr: number;
  state: CandidateState;
  verdict: CandidateObservation['verdict']['state'];
  /** Its comment was written this pass. */
  changed: boolean;
  /** The job id submitted this pass. */
  submitted?: string;
  /** The job id cancelled this pass on a stop. */
  cancelled?: string;
  view: CandidateView;
}

export interface PassReport {
  candidates: CandidateReport[];
  errors: string[];
  /** What the pass went on without (Slurm accounting unreachable): said, never a failure of the pass. */
  warnings: string[];
}

export function passReport(state: PassState): PassReport {
  const byPull = new Map<number, CandidateReport[]>();
  for (const e of state.experiments) {
    if (e.failed) continue;
    for (const { p, view } of judged(e)) {
      const report: CandidateReport = {
        experimentId: e.id,
        candidate: p.c.candidate,
        runName: p.c.runName,
        pr: p.c.pr,
        state: view.state,
        verdict: view.observation.verdict.state,
        changed: p.published?.changed ?? false,
        submitted: p.acted?.submitted,
        ...(p.acted?.cancelled ? { cancelled: p.acted.cancelled } : {}),
        view,
      };
      byPull.set(p.c.pr, [...(byPull.get(p.c.pr) ?? []), report]);
    }
  }
  return {
    candidates: [...byPull.values()].flat(),
    errors: [...state.experiments.flatMap((e) => e.errors), ...state.pullErrors],
    warnings: state.experiments.flatMap((e) =>
      e.accountingUnreachable
        ? [
            `${e.id}: Slurm accounting unreachable (${e.accountingUnreachable}): live jobs read from squeue; ended jobs the controller forgot are unknown this pass`,
          ]
        : [],
    ),
  };
}
