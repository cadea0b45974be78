// The round's reference job in a pass (issue 38 item 1, issue 43 item 1), planned by `decide`: which
// job of the current best runs beside the candidates, whether an open decision still needs it (the
// one lifetime rule, src/analysis/reference-lifetime.ts), which live reference jobs to stop, and
// whether a reference Request is to be made (none stands and the candidates need one). Pure.
import { type OpenCandidate, referenceNeeded } from '../analysis/reference-lifetime.js';
import { REFERENCE_STOP, type ReferenceMode, referenceModeOf } from '../judge/reference.js';
import { isReferenceRequest } from '../lifecycle/model.js';
import { isLive } from '../slurm/types.js';
import { experimentSettings } from '../topology/settings.js';
import type {
  CandidateDecided,
  CandidatePass,
  ExperimentPass,
  Reference,
  ReferenceJobPlan,
} from './state.js';

/** What decide has settled when it plans the reference job: the reference, each candidate's view and stop. */
export interface Deciding {
  reference: Reference | null;
  decided(p: CandidatePass): CandidateDecided | undefined;
}

const isRef = (p: CandidatePass) => p.c.role === 'reference';

/** A candidate's run is over for the reference: it ended, stops this pass, or was never asked to run. */
function endedFor(p: CandidatePass, d: Deciding): boolean {
  if (d.decided(p)?.stop) return true;
  if (d.decided(p)?.view?.observation.failure) return true;
  if (p.job) return !isLive(p.job.status);
  return !p.c.requested;
}

/** The candidates decided against the reference: in the pass, not a reference job, not the reference itself. */
export function roundCandidates(e: ExperimentPass, d: Deciding): CandidatePass[] {
  const source = e.exp.referenceSource?.name ?? d.reference?.name;
  return e.candidates.filter(
    (p) => p.inPass && !p.acted?.left && !isRef(p) && p.c.candidate !== source && !!d.decided(p)?.view,
  );
}

/** An open candidate as the lifetime rule reads it: its latest decision against the reference. */
function openOf(p: CandidatePass, d: Deciding): OpenCandidate {
  return { name: p.c.candidate, decision: d.decided(p)?.view?.observation.decision ?? null };
}

const isFinal = (p: CandidatePass, d: Deciding) => {
  const state = d.decided(p)?.view?.observation.decision?.state;
  return !!state && state !== 'measuring';
};

/** The youngest open candidate's run-minutes: the reference is read up to its age (0 before its first sample). */
function youngest(open: readonly CandidatePass[], d: Deciding): number {
  const ages = open.map((p) => d.decided(p)?.view?.observation.verdict.minutes_of_data ?? 0);
  return ages.length ? Math.min(...ages) : 0;
}

/** The reference jobs of the experiment to stop: every live one but the pass's, and the pass's when not needed. */
function stopsOf(
  e: ExperimentPass,
  reference: Reference | null,
  job: CandidatePass | null,
  needed: boolean,
  reason: string,
) {
  return e.candidates
    .filter((p) => isRef(p) && p.inPass && !!p.job && isLive(p.job.status) && !p.acted?.left)
    .flatMap((p) => {
      if (p === job && needed) return [];
      const why =
        p === job
          ? reason
          : p.c.candidate !== reference?.name
            ? `the current best is now \`${reference?.name ?? 'none'}\`, not \`${p.c.candidate}\``
            : `another reference job of \`${p.c.candidate}\` stands for the round`;
      return [{ p, reason: `${REFERENCE_STOP}: ${why}` }];
    });
}

/**
 * Where a missing reference Request goes: the pull request of the earliest open candidate that needs
 * it, at that pull request's head; none when one stands (queued or running), when the experiment is
 * decided against its recorded run, or when a reference job of this best failed or was lost since the
 * round began (it is not run again: the candidates read what it measured, else the recorded run).
 */
function requestOf(e: ExperimentPass, open: CandidatePass[], mode: ReferenceMode) {
  const source = e.exp.referenceSource;
  if (mode !== 'beside' || !source || open.length === 0) return null;
  const refs = e.exp.candidates.filter(
    (c) =>
      c.role === 'reference' &&
      c.candidate === source.name &&
      c.request?.topologyHash === source.topologyHash,
  );
  const byTime = [...open].sort(
    (a, b) => (a.c.requestedAt ?? Number.POSITIVE_INFINITY) - (b.c.requestedAt ?? Number.POSITIVE_INFINITY),
  );
  const since = byTime[0]?.c.requestedAt ?? Number.POSITIVE_INFINITY;
  const standing = refs.some((c) => !c.outcome && (c.currentHeadSha ?? c.headSha) === c.headSha);
  const failed = refs.some(
    (c) => ['failed', 'lost'].includes(c.outcome?.kind ?? '') && (c.requestedAt ?? 0) >= since - 60_000,
  );
  // a pull request that carries a candidate of the best's own name holds no reference (one comment per
  // name); an earlier round's reference Request there is no such candidate: the new one follows it, as
  // a rerun's Request follows its held one (a rerun-only round has no other pull request to run it on)
  const home = byTime.find(
    (p) =>
      !e.exp.candidates.some((c) => c.pr === p.c.pr && c.candidate === source.name && !isReferenceRequest(c)),
  );
  if (standing || failed || !home) return null;
  return { pr: home.c.pr, headSha: home.c.currentHeadSha ?? home.c.headSha };
}

/** The pass's reference job plan (after each candidate's view is judged). */
export function planReferenceJob(e: ExperimentPass, d: Deciding): ReferenceJobPlan {
  const x = e.exp.experiment;
  const { mode, note } = referenceModeOf(x);
  const beside = d.reference?.beside;
  const job = beside ? (e.candidates.find((p) => isRef(p) && p.c.runName === beside.runName) ?? null) : null;
  const round = roundCandidates(e, d);
  const open = round.filter((p) => !endedFor(p, d));
  // the decided ones are passed as they are (the rule leaves them out); a run that ended undecided reads nothing
  const read = round.filter((p) => !endedFor(p, d) || isFinal(p, d));
  const need = referenceNeeded(
    read.map((p) => openOf(p, d)),
    {
      minImprovement: experimentSettings(x).minImprovement,
      minute: youngest(open, d),
      horizonMinutes: experimentSettings(x).maxDecisionMinutes,
    },
  );
  return {
    mode,
    note,
    job,
    need,
    stops: stopsOf(e, d.reference, job, need.needed, need.reason),
    request: need.needed ? requestOf(e, open, mode) : null,
  };
}
