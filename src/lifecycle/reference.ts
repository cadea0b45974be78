// The round's reference job as a Request (issue 38 item 1): one job of the experiment's current best
// (the default branch's, from the record; its baseline before there is a best), asked for by the bot
// beside the candidates of a round. It needs no permission beyond the `/topo submit` (or the
// autopilot's Request) that starts the round: its topology is the default branch's, never the pull
// request's. It lives in the run state of the pull request whose round started it, pinned to that
// pull request's head, so a push, `/topo cancel` and the close end it with the candidates. Pure.

import { RUN_LABEL, runNameFor } from '../topology/run-name.js';
import { byRequestTime, isReferenceRequest, type Outcome, type RunRecord, type RunRequest } from './model.js';

/** What a reference job runs: the record's best (else baseline) and its file on the default branch. */
export interface ReferenceSource {
  /** The candidate's name (the record's current best, else its baseline). */
  name: string;
  /** Its candidate file on the default branch, repository-relative. */
  path: string;
  /** hash8 of its expanded topology, as the record keeps it: the Request is pinned to it. */
  topologyHash: string;
}

/**
 * The round's reference Request for an experiment the monitor reads (the bot's, in pull request `pr` at
 * `headSha`): null when the experiment has no reference source (no baseline recorded yet). Both the
 * GitHub monitor's ports and `topo watch`'s ask through it; each keeps only where it stores the Request.
 */
export function roundReferenceRequest(
  exp: { experiment: { experiment_id: string }; referenceSource?: ReferenceSource | null },
  at: { pr: number; headSha: string; login: string; requestedAt: string; label: string },
): RunRequest | null {
  const source = exp.referenceSource;
  return source ? referenceRequest({ experiment: exp.experiment.experiment_id, source, ...at }) : null;
}

/** A new reference Request in pull request `pr` at `headSha`, with a label (and run name) of its own. */
export function referenceRequest(x: {
  experiment: string;
  source: ReferenceSource;
  pr: number;
  headSha: string;
  /** The bot's login: the bot asks for it. */
  login: string;
  requestedAt: string;
  label: string;
}): RunRequest {
  if (!RUN_LABEL.test(x.label)) throw new Error(`run label ${JSON.stringify(x.label)} is not 8 hex digits`);
  const base = `topo-${x.experiment}-${x.source.name}-${x.source.topologyHash}`;
  return {
    id: x.label,
    experiment: x.experiment,
    candidate: x.source.name,
    path: x.source.path,
    pr: x.pr,
    headSha: x.headSha,
    topologyHash: x.source.topologyHash,
    runName: runNameFor(base, x.label),
    login: x.login,
    requestedAt: x.requestedAt,
    role: 'reference',
  };
}

/** A Request with what the pull request's state holds of it (any pull request of the repository). */
export interface HeldRequest {
  request: RunRequest;
  run?: RunRecord;
  outcome?: Outcome;
  /** The head of the pull request that holds it (a Request of another head is superseded). */
  headSha: string;
}

/**
 * The reference Request of `experiment` that stands for `source` now (the oldest, in any open pull
 * request): no Outcome yet, for its pull request's current head, of the same topology. Rounds of one
 * experiment that overlap in time share it, so a new one is made only when none stands.
 */
export function standingReference(
  held: readonly HeldRequest[],
  experiment: string,
  source: Pick<ReferenceSource, 'name' | 'topologyHash'>,
): HeldRequest | null {
  const standing = held.filter(
    (h) =>
      isReferenceRequest(h.request) &&
      h.request.experiment === experiment &&
      h.request.candidate === source.name &&
      h.request.topologyHash === source.topologyHash &&
      h.request.headSha === h.headSha &&
      !h.outcome,
  );
  return standing.sort((a, b) => byRequestTime(a.request, b.request))[0] ?? null;
}
