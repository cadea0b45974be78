// The one label rule: a pull request's `topology:<state>` label from all its candidates, the most
// urgent one showing (failed, then running, then queued, then stable). The monitor reads each
// candidate's state from its run; the submit action, before any run is judged, from the standing
// Requests (one with a job is running, one without waits). Pure.
import type { LabelState } from '../github/labels.js';
import type { CandidateState } from '../judge/state.js';
import {
  latestRequests,
  type OutcomeKind,
  type RunRequest,
  type RunState,
  standingRequests,
} from '../lifecycle/model.js';
import { checkConclusion, type MonitorCheckRun } from './check-conclusion.js';
import { parseCommentStamp } from './comment-throttle.js';
import { parseObservationBlock } from './observation-block.js';
import type { Standing } from './standing.js';

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

/** Outcomes of a Request whose run ran and ended: its final monitor comment still says what it is. */
const RAN: ReadonlySet<OutcomeKind> = new Set<OutcomeKind>(['finished', 'decided', 'stopped', 'failed']);

/** Whether a Request with this Outcome had a run that ran and ended. */
export const ranAndEnded = (kind: OutcomeKind | undefined): boolean => kind !== undefined && RAN.has(kind);

/** The latest Request of each candidate whose run ran and ended (it stays in the label and the check). */
export function ranRequests(state: RunState): RunRequest[] {
  return latestRequests(state).filter((r) => {
    const kind = state.outcomes[r.id]?.kind;
    return kind !== undefined && RAN.has(kind);
  });
}

/**
 * What a candidate whose run ended contributes, read back from its final monitor comment (the
 * stamp's state and standing, the observation's verdict), whatever Slurm still remembers of the
 * job: to the label (as the monitor judged it) and to the check run (its conclusion, its headline).
 */
export function endedCandidate(
  candidate: string,
  comment: string | undefined,
): (LabelledCandidate & { check: MonitorCheckRun }) | null {
  const stamp = parseCommentStamp(comment);
  if (!comment || !stamp || !['finished', 'stopped', 'failed'].includes(stamp.state)) return null;
  const observation = parseObservationBlock(comment);
  const conclusion = checkConclusion({ outcome: stamp.outcome } as Standing);
  const headline = comment
    .split('<details>')[0]
    ?.replace(/^<!--[^\n]*-->\n/, '')
    .trim();
  return {
    state: stamp.state as CandidateState,
    ...(observation ? { observation: { verdict: observation.verdict } } : {}),
    check: {
      title: `${candidate} ${stamp.state} (${stamp.outcome}), as its final comment says`,
      summary: headline || `\`${candidate}\` ${stamp.state}`,
      ...(conclusion ? { conclusion } : {}),
    },
  };
}

/**
 * The label from the pull request's standing Requests (submitted ones run, the others wait) and the
 * candidates whose runs ended (`ended`, endedCandidate): the rule the monitor applies to its views.
 */
export function requestsStateLabel(
  state: RunState,
  headSha: string,
  ended: readonly LabelledCandidate[] = [],
): LabelState | null {
  return pullStateLabel([
    ...standingRequests(state, headSha).map((r) => ({
      state: (state.runs[r.id] ? 'submitted' : 'queued') as CandidateState,
    })),
    ...ended,
  ]);
}
