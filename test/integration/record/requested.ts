// The bot's lifecycle comment as `/topo submit` (and the monitor) would have written it for a pull
// request's candidates: the record records only candidates with a Request in the pull request.
import { createHash } from 'node:crypto';
import { renderRunStateComment } from '../../../src/github/run-state.js';
import { stickyMarker } from '../../../src/github/sticky-comment.js';
import type { GitHubServer, Pull, Repo } from '../../../src/github-local/index.js';
import {
  emptyRunState,
  type OutcomeKind,
  type RunState,
  withOutcome,
  withRequest,
  withRun,
} from '../../../src/lifecycle/model.js';

export interface RequestedRun {
  candidate: string;
  runName: string;
  /** The Outcome the run already has (the monitor's, when it ended); none: still open. */
  ended?: OutcomeKind | null;
  /** Its Slurm job, when it was submitted. */
  jobId?: string;
}

const hex8 = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8);

/** The state with one Request per run (its label derived from the run name). */
export function requestedState(experiment: string, pull: Pull, runs: readonly RequestedRun[]): RunState {
  let s = emptyRunState();
  for (const [i, r] of runs.entries()) {
    const id = /-([0-9a-f]{8})-([0-9a-f]{8})$/.exec(r.runName)?.[2] ?? hex8(r.runName);
    const at = new Date(Date.UTC(2026, 0, 1, 10, i)).toISOString();
    s = withRequest(s, {
      id,
      experiment,
      candidate: r.candidate,
      path: `topologies/${experiment}/${r.candidate}.yaml`,
      pr: pull.number,
      headSha: pull.head.sha,
      topologyHash: /-([0-9a-f]{8})(-[0-9a-f]{8})?$/.exec(r.runName)?.[1] ?? hex8(`${r.runName}/hash`),
      runName: r.runName,
      login: 'alice',
      requestedAt: at,
    });
    if (r.jobId) s = withRun(s, id, { jobId: r.jobId, submittedAt: at });
    const ended = r.ended === undefined ? 'finished' : r.ended;
    if (ended) s = withOutcome(s, id, { kind: ended, at, evidence: ['written by the test'] });
  }
  return s;
}

/** Posts the bot's lifecycle comment holding `runs` (default: each finished). */
export function postRequests(
  gh: GitHubServer,
  repo: Repo,
  pull: Pull,
  experiment: string,
  runs: readonly RequestedRun[],
): RunState {
  const state = requestedState(experiment, pull, runs);
  gh.comment(repo, pull.number, gh.botLogin, `${stickyMarker('lifecycle')}\n${renderRunStateComment(state)}`);
  return state;
}
