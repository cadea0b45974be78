// The run state's bound (pure). It lives in ONE bot comment, so it must fit one: what may still act
// is kept whole (open Requests, and the latest Request of each candidate: the monitor shows it, the
// record reads it), the other ended Requests become a one-line summary each, the newest ENDED_KEEP
// of them (the full history is in the check runs and, once the pull request closes, in the record).
// A state that would still not fit is never cut: the write that would grow it (a new Request) is
// refused, with room reserved so that every open Request can always get its Run and its Outcome.
import {
  type EndedRequest,
  latestRequests,
  type Outcome,
  type RunRecord,
  type RunRequest,
  type RunState,
  withRequest,
} from './model.js';
import { encodedRunStateLength } from './state-block.js';

/** Ended Requests kept in the summary (newest first kept). */
export const ENDED_KEEP = 40;

/**
 * Characters the encoded state block may take: GitHub's comment limit (65,536) less the marker,
 * the explanation and a table of the latest runs (src/github/run-state.ts fits the table to what is left).
 */
export const STATE_BLOCK_BUDGET = 52_000;

/** A write the state cannot hold even compacted: refused, nothing written. */
export class RunStateFullError extends Error {
  override name = 'RunStateFullError';
}

/**
 * The normal form: Requests that ended and are not the latest of their candidate move to the
 * summary; the summary keeps its newest ENDED_KEEP entries, the older ones only counted by kind.
 */
export function compactRunState(state: RunState): RunState {
  const latest = new Set(latestRequests(state).map((r) => r.id));
  const requests: RunRequest[] = [];
  const moved: EndedRequest[] = [];
  for (const r of state.requests) {
    const outcome = state.outcomes[r.id];
    if (!outcome || latest.has(r.id)) requests.push(r);
    else moved.push(endedOf(r, outcome, state.runs[r.id]));
  }
  if (moved.length === 0 && state.ended.length <= ENDED_KEEP) return state;
  const whole = new Set(requests.map((r) => r.id));
  const ended = [...state.ended, ...moved].sort(byEnd);
  const forgotten = { ...state.forgotten };
  const drop = Math.max(0, ended.length - ENDED_KEEP);
  for (const e of ended.slice(0, drop)) forgotten[e.kind] = (forgotten[e.kind] ?? 0) + 1;
  return {
    version: 2,
    requests,
    runs: pick(state.runs, whole),
    outcomes: pick(state.outcomes, whole),
    ended: ended.slice(drop),
    forgotten,
  };
}

function endedOf(r: RunRequest, outcome: Outcome, run: RunRecord | undefined): EndedRequest {
  const jobId = outcome.jobId ?? run?.jobId;
  return {
    id: r.id,
    experiment: r.experiment,
    candidate: r.candidate,
    runName: r.runName,
    kind: outcome.kind,
    at: outcome.at,
    ...(jobId ? { jobId } : {}),
  };
}

const byEnd = (a: EndedRequest, b: EndedRequest) =>
  Date.parse(a.at) - Date.parse(b.at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function pick<T>(record: Record<string, T>, ids: ReadonlySet<string>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).filter(([id]) => ids.has(id)));
}

/** The compacted state, with summary entries dropped (oldest first) until it fits; else RunStateFullError. */
export function fitRunState(state: RunState, budget = STATE_BLOCK_BUDGET): RunState {
  let out = compactRunState(state);
  while (encodedRunStateLength(out) > budget && out.ended.length > 0) {
    const [oldest, ...rest] = out.ended as [EndedRequest, ...EndedRequest[]];
    out = {
      ...out,
      ended: rest,
      forgotten: { ...out.forgotten, [oldest.kind]: (out.forgotten[oldest.kind] ?? 0) + 1 },
    };
  }
  const size = encodedRunStateLength(out);
  if (size > budget)
    throw new RunStateFullError(
      `the run state would take ${size} characters with ${out.requests.length} Requests kept whole; it holds at most ${budget}`,
    );
  return out;
}

/**
 * The largest Run and Outcome an open Request can still get, reserved when a Request is admitted:
 * src/lifecycle/model.ts bounds the evidence kept, so this is the most any later write adds.
 */
const RESERVED_OUTCOME: Outcome = {
  kind: 'superseded',
  at: '2026-01-01T00:00:00.000Z',
  jobId: '1234567890_1234567890',
  evidence: ['"'.repeat(119), '"'.repeat(119)],
};
const RESERVED_RUN: RunRecord = { jobId: '1234567890_1234567890', submittedAt: '2026-01-01T00:00:00.000Z' };

/**
 * Adds a Request when the state can hold it AND a Run and an Outcome for every open Request
 * afterwards (so ending them never needs a cut); RunStateFullError otherwise, saying what to do.
 */
export function admitRequest(state: RunState, request: RunRequest, budget = STATE_BLOCK_BUDGET): RunState {
  const next = withRequest(state, request);
  if (next === state) return state;
  let reserved = compactRunState(next);
  for (const r of reserved.requests) {
    if (reserved.outcomes[r.id]) continue;
    reserved = {
      ...reserved,
      runs: { ...reserved.runs, [r.id]: RESERVED_RUN },
      outcomes: { ...reserved.outcomes, [r.id]: RESERVED_OUTCOME },
    };
  }
  const open = next.requests.filter((r) => !next.outcomes[r.id]).length;
  try {
    fitRunState({ ...reserved, ended: [] }, budget);
  } catch (e) {
    if (!(e instanceof RunStateFullError)) throw e;
    throw new RunStateFullError(
      `this pull request already has ${open - 1} open Requests (and ${next.requests.length - open} finished candidates kept whole): the bot state, one comment, cannot hold another one and still record how each ends. Cancel some (\`/topo cancel <candidate>\`) or move candidates to another pull request`,
    );
  }
  return fitRunState(next, budget);
}
