// The one label rule: a pull request's `topology:<state>` label from all its candidates, the most
// urgent one showing (failed, then running, then queued, then stable). The monitor reads each
// candidate's state from its run; the submit action, before any run is judged, from the standing
// Requests (one with a job is running, one without waits). Pure.
import type { LabelState } from '../github/labels.js';
import { type RunState, standingRequests } from '../lifecycle/model.js';
import type { CandidateState } from './pr-comment.js';

/** What a candidate contributes to its pull request's label. */
export interface LabelledCandidate {
  state: CandidateState | null;
  /** Whether its verdict has a value (a finished or stopped run with one still shows `stable`). */
  observation?: { verdict: { value?: unknown } };
}

function candidateLabel({ state, observation }: LabelledCandidate): LabelState | null {
  switch (state) {
    case null:
      return null;
    case 'queued':
      return 'queued';
    case 'submitted':
    case 'starting':
    case 'warming':
    case 'stabilising':
      return 'running';
    case 'stable':
      return 'stable';
    case 'finished':
    case 'stopped':
      return observation?.verdict.value ? 'stable' : null;
    case 'failed':
      return 'failed';
  }
}

/** The state label of a pull request from all its candidates: the most urgent one shows. */
export function pullStateLabel(candidates: readonly LabelledCandidate[]): LabelState | null {
  const labels = new Set(candidates.map(candidateLabel));
  for (const l of ['failed', 'running', 'queued', 'stable'] as const) if (labels.has(l)) return l;
  return null;
}

/** The label from the pull request's standing Requests alone: submitted ones run, the others wait. */
export function requestsStateLabel(state: RunState, headSha: string): LabelState | null {
  return pullStateLabel(
    standingRequests(state, headSha).map((r) => ({ state: state.runs[r.id] ? 'submitted' : 'queued' })),
  );
}
