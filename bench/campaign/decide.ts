// A round of candidates decided look by look by the monitor's own decision path (src/analysis/
// decide-look.ts decideLook: the reference, its closings, the pruner against the leading candidate;
// shouldStopOnDecision), as the monitor's pass calls it: each running candidate against the
// reference (the recorded value of the baseline or the current best, as the record gives it), and one
// still open there against the leading candidate (the best usable projection among the others, frozen
// where that one stopped). A candidate stops when decided; one decided `better` that leads the round
// runs on until its projection is precise enough to be the next round's reference (a reference keeps
// running). Nothing here decides: it only calls what the monitor calls.
import { decideLook } from '../../src/analysis/decide-look.js';
import {
  decisionOpen,
  leadingCandidate,
  shouldStopOnDecision,
  type VerdictLike,
} from '../../src/analysis/decision.js';
import { closeWithReference, referenceNeeded } from '../../src/analysis/reference-lifetime.js';
import { abandonReason, heldAgain, isHeld, runOutcome } from '../../src/campaign/held.js';
import {
  type CampaignPolicy,
  futileByForecast,
  type RunOutcome,
  referenceReady,
} from '../../src/campaign/rounds.js';
import type { Decision } from '../../src/types/generated/metrics.js';
import { MAX_MINUTES, type SimRun, type World } from './sim.js';

export interface Decided {
  run: SimRun;
  /** Run-minute it stopped at (0 for a run that ran out of memory at start-up). */
  stoppedAt: number;
  outcome: RunOutcome;
  /** Run-minute of its decision (null when none). */
  decidedAt: number | null;
  decision: Decision | null;
  /** Its verdict at the stop (the record's value). */
  verdict: VerdictLike | null;
  /** Why its decision was not reached (src/campaign/held.ts), or absent when it was. */
  held?: string;
  /** To be re-judged beside a reference that runs (abandoned, crashed, a guard's hold below −m). */
  rerun?: boolean;
  /** Its last decision against the reference (its relative change decides whether it is rerun). */
  vsReference?: Decision | null;
  /** After a failed baseline: the round decided between its candidates that this one leads. */
  leads?: boolean;
}

export interface Reference {
  name: string;
  verdict: VerdictLike;
}

/** Per-run state of a round while it is decided look by look. */
interface Live {
  run: SimRun;
  stoppedAt: number | null;
  outcome: RunOutcome;
  decidedAt: number | null;
  decision: Decision | null;
  previous: Decision | null;
  /** Decided better and leading: runs on to become the next reference (a recorded reference only). */
  carrying: boolean;
  /** Its last decision against the reference. */
  vsReference: Decision | null;
  /** Why its job was abandoned for a rerun (src/campaign/held.ts abandonReason). */
  abandoned: string | null;
  /** No reference (a failed baseline): it leads the round, every other candidate decided against it. */
  leads: boolean;
  /** Stopped by its decision's forecast (futileByForecast), or closed with its reference: no gain. */
  futile: boolean;
  /** Look since which its interval has lain wholly below −min_improvement without a decision. */
  heldSince: number | null;
  /** The detector marked its job or the reference's `drifting` at a look: no rerun settles on it. */
  driftSeen: boolean;
}

/**
 * The round's reference at a look: a recorded one (its value, fixed), or a run beside the candidates
 * read at the same run age as they are (so start-up effects and shared cluster effects cancel), frozen
 * where it stopped.
 */
export type ReferenceSource = Reference | { run: SimRun; stoppedAt: () => number | null };

/** The reference at a look, and whether its job ended before it (a recorded one never does). */
type RefAt = Reference & { ended: boolean };

function referenceAt(world: World, source: ReferenceSource | null, m: number): RefAt | null {
  if (!source) return null;
  if ('verdict' in source) return { name: 'reference', verdict: source.verdict, ended: false };
  const stop = source.stoppedAt();
  const at = Math.min(m, stop ?? m);
  return { name: 'reference', verdict: world.verdict(source.run, at), ended: stop !== null && m > stop };
}

type Leader = { s: Live; name: string; verdict: VerdictLike } | null;

/** What one look at the round knows. */
interface LookContext {
  m: number;
  ref: RefAt | null;
  leader: Leader;
  policy: CampaignPolicy;
  /** A recorded reference: the winner carries on until precise enough to be the next one. */
  carries: boolean;
  world: World;
  /** Every other candidate of the round has stopped. */
  alone: (s: Live) => boolean;
}

/** One look at one live candidate: crash, carrying, or its decision against the reference / leader. */
function lookAt(s: Live, v: VerdictLike, at: LookContext): void {
  const { m, ref, leader, policy, world } = at;
  if (world.crashedBy(s.run, m)) {
    s.stoppedAt = s.run.shape.crashAtMinutes ?? m;
    if (!s.carrying) s.outcome = 'failed';
    return;
  }
  if (s.carrying) {
    if (referenceReady(v, policy) || m >= MAX_MINUTES) s.stoppedAt = m;
    return;
  }
  const d = ref
    ? againstReference(s, m, v, ref, leader, policy)
    : betweenCandidates(s, v, { ...at, alone: at.alone(s) });
  if (!d) return;
  s.previous = d;
  // open: measuring, or the provisional winner (its full-run guard open: it runs on, undecided)
  if (decisionOpen(d)) {
    // no conclusion within the horizon is forecast: more run-minutes buy nothing
    if (ref && futileByForecast(d, m, MAX_MINUTES, policy.minImprovement)) s.futile = true;
    if (m >= MAX_MINUTES || s.futile) s.stoppedAt = m;
    return;
  }
  if (s.decidedAt === null) {
    s.decidedAt = m;
    s.decision = d;
    s.outcome = outcomeOf(d.state);
  }
  // only a final `better` carries on as the next reference; a provisional winner runs on undecided
  if (at.carries && d.state === 'better' && !referenceReady(v, policy)) {
    s.carrying = true;
    return;
  }
  if (shouldStopOnDecision([d]).stop) s.stoppedAt = m;
}

/**
 * Its decision against the reference (and, still open, against the round's leader), or null when
 * its job is abandoned for a rerun (src/campaign/held.ts abandonReason).
 */
function againstReference(
  s: Live,
  m: number,
  v: VerdictLike,
  ref: RefAt,
  leader: Leader,
  policy: CampaignPolicy,
): Decision | null {
  const minImprovement = policy.minImprovement;
  // against the reference only (the forecast's closing is read below, after the pruner)
  const look = { candidate: v, reference: ref, previous: s.previous };
  const d = decideLook(look, { minImprovement, futility: false }).decision;
  s.vsReference = d;
  if (v.state === 'drifting' || ref.verdict.state === 'drifting') s.driftSeen = true;
  s.heldSince = isHeld(d, minImprovement) ? (s.heldSince ?? m) : null;
  const why = abandonReason({
    decision: d,
    candidate: v,
    reference: ref.verdict,
    referenceEnded: ref.ended,
    heldMinutes: s.heldSince === null ? 0 : m - s.heldSince,
    minImprovement,
    attempt: attemptOf(s.run),
  });
  if (why || (ref.ended && closeWithReference(d, minImprovement))) {
    // abandoned for a rerun, or closed with its reference (it points at no gain)
    if (why) s.abandoned = why;
    else s.futile = true;
    s.stoppedAt = m;
    return null;
  }
  if (!decisionOpen(d) || !leader || leader.s === s) return d;
  return prunedBy(s, v, leader, minImprovement) ?? d;
}

/** `not-better` against the round's leader when it cannot beat it (the one path's pruner), else null. */
function prunedBy(s: Live, v: VerdictLike, leader: NonNullable<Leader>, minImprovement: number) {
  const look = { candidate: v, reference: null, leader, previous: s.previous };
  const d = decideLook(look, { minImprovement, futility: false }).decision;
  return d.state === 'measuring' ? null : d;
}

/** The campaign's outcome of a decision: the provisional winner counts as `better` (it runs on, as a winner does). */
function outcomeOf(state: Decision['state']): RunOutcome {
  if (state === 'better-at-equal-age') return 'better';
  if (state === 'reference' || state === 'faster-drift-not-ruled-out' || state === 'measuring')
    return 'undecided';
  return state;
}

/**
 * No reference (the baseline failed): the round decides between its candidates, all of the same
 * run age. One the leader shows cannot win is `not-better`, one within ±min_improvement of it
 * `equivalent`; the leader runs until every other is decided against it and its own projection is
 * usable, and then leads the round (the winner is decided between them, not the fastest young
 * projection). Null while nothing is decided for this one.
 */
function betweenCandidates(
  s: Live,
  v: VerdictLike,
  { m, leader, policy, alone }: Omit<LookContext, 'alone'> & { alone: boolean },
): Decision | null {
  const minImprovement = policy.minImprovement;
  if (leader && leader.s !== s) {
    const pruned = prunedBy(s, v, leader, minImprovement);
    if (pruned) return pruned;
    const look = { candidate: v, reference: leader, previous: s.previous };
    const d = decideLook(look, { minImprovement, futility: false }).decision;
    return d.state === 'equivalent' || d.state === 'worse' ? d : null;
  }
  if (leader?.s === s && alone && usableProjection(v)) {
    s.leads = true;
    s.stoppedAt = m;
  } else if (m >= MAX_MINUTES) s.stoppedAt = m;
  return null;
}

/** Only the fastest of the runs decided better carries on to become the reference. */
function stopExtraCarriers(world: World, state: Live[], m: number): void {
  const carriers = state.filter((s) => s.carrying && s.stoppedAt === null);
  if (carriers.length < 2) return;
  const value = (s: Live) => world.verdict(s.run, m).projected_full_run?.value ?? Number.POSITIVE_INFINITY;
  carriers.sort((a, b) => value(a) - value(b));
  for (const s of carriers.slice(1)) s.stoppedAt = m;
}

/**
 * Looks every `look` run-minutes (the monitor's cadence) until every run stopped. `reference`: a
 * recorded one (the winner carries on until precise enough to be the next one), or a run beside the
 * candidates (`decideBeside`).
 */
export function decideRound(
  world: World,
  runs: readonly SimRun[],
  reference: ReferenceSource | null,
  policy: CampaignPolicy,
  look: number,
  onLook?: (m: number, state: Live[]) => void,
): Decided[] {
  const state: Live[] = runs.map((run) => ({
    run,
    stoppedAt: run.oom ? 0 : null,
    outcome: run.oom ? 'failed' : 'undecided',
    decidedAt: null,
    decision: null,
    previous: null,
    carrying: false,
    vsReference: null,
    abandoned: null,
    leads: false,
    futile: false,
    heldSince: null,
    driftSeen: false,
  }));
  const carries = !!reference && 'verdict' in reference;
  for (let m = look; m <= MAX_MINUTES + 1e-9; m += look) {
    const live = state.filter((s) => s.stoppedAt === null);
    if (live.length === 0) break;
    const ref = referenceAt(world, reference, m);
    const views = state
      .filter((s) => !s.run.oom)
      .map((s) => ({ s, name: s.run.key, verdict: world.verdict(s.run, Math.min(m, s.stoppedAt ?? m)) }));
    const leader = leadingCandidate(views, ref?.verdict ?? null);
    const alone = (s: Live) => state.every((o) => o === s || o.stoppedAt !== null);
    const at: LookContext = { m, ref, leader, policy, carries, world, alone };
    for (const s of live) lookAt(s, views.find((x) => x.s === s)!.verdict, at);
    stopExtraCarriers(world, state, m);
    onLook?.(m, state);
  }
  return state.map((s) => decidedOf(world, s, policy));
}

/** Its job of the candidate: 1 the first, n+1 the rerun `#n` (sim.ts World.run). */
function attemptOf(run: SimRun): number {
  const n = /#(\d+)$/.exec(run.id)?.[1];
  return n ? Number(n) + 1 : 1;
}

/** A run's end of the round: its outcome (src/campaign/held.ts runOutcome: held decisions are no decision). */
function decidedOf(world: World, s: Live, policy: CampaignPolicy): Decided {
  const stoppedAt = s.stoppedAt ?? MAX_MINUTES;
  const common = {
    run: s.run,
    stoppedAt,
    decidedAt: s.decidedAt,
    decision: s.decision,
    verdict: s.run.oom ? null : world.verdict(s.run, stoppedAt),
    vsReference: s.vsReference,
    ...(s.leads ? { leads: true } : {}),
  };
  // a crash (not out of memory) is no decision: rerun when it pointed at a gain
  if (s.outcome === 'failed')
    return {
      ...common,
      outcome: 'failed',
      ...(s.run.oom
        ? {}
        : { held: `its job crashed at run-minute ${s.run.shape.crashAtMinutes}`, rerun: true }),
    };
  const held = {
    minImprovement: policy.minImprovement,
    horizonMinutes: MAX_MINUTES,
    attempt: attemptOf(s.run),
    drifting: s.driftSeen,
  };
  // abandoned for a rerun: a rerun held again settles by the campaign's rule (heldAgain)
  if (s.abandoned)
    return s.vsReference && heldAgain(s.vsReference, held)
      ? { ...common, decision: s.vsReference, outcome: 'better' }
      : { ...common, outcome: 'undecided', held: s.abandoned, rerun: true };
  // no reference (a failed baseline): decided between the candidates, nothing is held; stopped by
  // its forecast: within the decisions' noise of the reference, settled as no gain
  if (!s.vsReference || s.futile) return { ...common, outcome: s.leads ? 'better' : s.outcome };
  const last = s.decision ?? s.previous;
  const o = runOutcome(last, held);
  return {
    ...common,
    ...(o.outcome === 'better' && !s.decision ? { decision: last } : {}),
    outcome: o.outcome,
    ...(o.held ? { held: o.held } : {}),
    ...(o.rerun ? { rerun: true } : {}),
  };
}

/**
 * A round with its reference run beside the candidates (a new job of the reference's topology,
 * started with them): each candidate is decided against the reference's verdict at the same run age.
 * The reference runs while the round's decisions need it (src/analysis/reference-lifetime.ts
 * referenceNeeded: an open candidate without an interval yet, pointing at a gain, or forecast to
 * settle); a candidate still open after it stopped (it crashed) is decided against where it stopped.
 * Returns the candidates and the reference's own job.
 */
export function decideBeside(
  world: World,
  runs: readonly SimRun[],
  referenceRun: SimRun,
  policy: CampaignPolicy,
  look: number,
): { decided: Decided[]; reference: Decided } {
  let refStop: number | null = null;
  const source: ReferenceSource = { run: referenceRun, stoppedAt: () => refStop };
  const decided = decideRound(world, runs, source, policy, look, (m, state) => {
    if (refStop !== null) return;
    if (world.crashedBy(referenceRun, m)) refStop = referenceRun.shape.crashAtMinutes ?? m;
    else {
      const open = state
        .filter((s) => s.stoppedAt === null)
        .map((s) => ({ name: s.run.id, decision: s.previous }));
      const need = referenceNeeded(open, {
        minImprovement: policy.minImprovement,
        minute: m,
        horizonMinutes: MAX_MINUTES,
      });
      if (!need.needed) {
        refStop = m;
        // the candidates it leaves open point at no gain: closed with it, not run on against it
        for (const s of state)
          if (s.stoppedAt === null && closeWithReference(s.previous, policy.minImprovement)) {
            s.stoppedAt = m;
            s.futile = true;
          }
      }
    }
  });
  const stoppedAt = refStop ?? MAX_MINUTES;
  return {
    decided,
    reference: {
      run: referenceRun,
      stoppedAt,
      outcome: 'equivalent',
      decidedAt: null,
      decision: null,
      verdict: world.verdict(referenceRun, stoppedAt),
    },
  };
}

/**
 * The baseline measured alone until it can be the reference (or MAX_MINUTES, or its crash).
 * `decidedAt`: its first usable projection (when the campaign first knows its value).
 */
export function measureReference(
  world: World,
  run: SimRun,
  policy: CampaignPolicy,
  look: number,
  /** When it is measured enough (default: precise enough to be a recorded reference). */
  ready: (v: VerdictLike) => boolean = (v) => referenceReady(v, policy),
): Decided {
  if (run.oom)
    return { run, stoppedAt: 0, outcome: 'failed', decidedAt: null, decision: null, verdict: null };
  let m = look;
  let known: number | null = null;
  for (; m <= MAX_MINUTES; m += look) {
    if (world.crashedBy(run, m)) {
      const at = run.shape.crashAtMinutes ?? m;
      return { run, stoppedAt: at, outcome: 'failed', decidedAt: null, decision: null, verdict: null };
    }
    const v = world.verdict(run, m);
    if (known === null && v.projected_full_run && !['warming', 'no-data', 'unhealthy'].includes(v.state))
      known = m;
    if (ready(v)) break;
  }
  const stoppedAt = Math.min(m, MAX_MINUTES);
  return {
    run,
    stoppedAt,
    outcome: 'equivalent',
    decidedAt: known ?? stoppedAt,
    decision: null,
    verdict: world.verdict(run, stoppedAt),
  };
}

/** A verdict with a usable projection: what the suggester's evidence needs of a run. */
export function usableProjection(v: VerdictLike): boolean {
  return !!v.projected_full_run && !['warming', 'no-data', 'unhealthy'].includes(v.state);
}

/** A recorded reference as the record hands it to the monitor: its value, `stable`. */
export function recorded(name: string, v: VerdictLike | null): Reference | null {
  const p = v?.projected_full_run;
  return p
    ? { name, verdict: { state: 'stable', projected_full_run: p, minutes_of_data: v?.minutes_of_data } }
    : null;
}
