// A round of candidates decided look by look by the monitor's own functions (src/analysis/
// decision.ts: decideCandidate against the reference, pruneByLeader against the leading candidate,
// shouldStopOnDecision), as the monitor's pass composes them: each running candidate against the
// reference (the recorded value of the baseline or the current best, as the record gives it), and one
// still open there against the leading candidate (the best usable projection among the others, frozen
// where that one stopped). A candidate stops when decided; one decided `better` that leads the round
// runs on until its projection is precise enough to be the next round's reference (a reference keeps
// running). Nothing here decides: it only calls what the monitor calls.
import {
  decideCandidate,
  leadingCandidate,
  pruneByLeader,
  shouldStopOnDecision,
  type VerdictLike,
} from '../../src/analysis/decision.js';
import { type CampaignPolicy, type RunOutcome, referenceReady } from '../../src/campaign/rounds.js';
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
}

export interface Reference {
  name: string;
  verdict: VerdictLike;
}

/** Looks every `look` run-minutes (the monitor's cadence) until every run stopped. */
export function decideRound(
  world: World,
  runs: readonly SimRun[],
  reference: Reference | null,
  policy: CampaignPolicy,
  look: number,
): Decided[] {
  const state = runs.map((run) => ({
    run,
    stoppedAt: run.oom ? 0 : (null as number | null),
    outcome: (run.oom ? 'failed' : 'undecided') as RunOutcome,
    decidedAt: null as number | null,
    decision: null as Decision | null,
    previous: null as Decision | null,
    /** Decided better and leading: runs on to become the next reference. */
    carrying: false,
  }));
  const ref = reference ? { name: 'reference', verdict: reference.verdict } : null;
  for (let m = look; m <= MAX_MINUTES + 1e-9; m += look) {
    const live = state.filter((s) => s.stoppedAt === null);
    if (live.length === 0) break;
    const views = state
      .filter((s) => !s.run.oom)
      .map((s) => ({ s, name: s.run.key, verdict: world.verdict(s.run, Math.min(m, s.stoppedAt ?? m)) }));
    const leader = leadingCandidate(views, ref?.verdict ?? null);
    for (const s of live) {
      if (world.crashedBy(s.run, m)) {
        s.stoppedAt = s.run.shape.crashAtMinutes ?? m;
        if (!s.carrying) s.outcome = 'failed';
        continue;
      }
      const v = views.find((x) => x.s === s)!.verdict;
      if (s.carrying) {
        if (referenceReady(v, policy) || m >= MAX_MINUTES) s.stoppedAt = m;
        continue;
      }
      let d: Decision;
      if (ref) {
        d = decideCandidate(v, ref, { minImprovement: policy.minImprovement, previous: s.previous });
        if (d.state === 'measuring' && leader && leader.s !== s)
          d = pruneByLeader(v, leader, { minImprovement: policy.minImprovement }) ?? d;
      } else {
        // no reference yet (the baseline failed): each run is a would-be reference, measured until
        // precise, unless the leader shows it cannot win
        const pruned =
          leader && leader.s !== s
            ? pruneByLeader(v, leader, { minImprovement: policy.minImprovement })
            : null;
        if (pruned) d = pruned;
        else {
          if (referenceReady(v, policy)) {
            s.stoppedAt = m;
            s.outcome = 'equivalent';
          } else if (m >= MAX_MINUTES) s.stoppedAt = m;
          continue;
        }
      }
      s.previous = d;
      if (d.state === 'measuring') {
        if (m >= MAX_MINUTES) s.stoppedAt = m;
        continue;
      }
      if (s.decidedAt === null) {
        s.decidedAt = m;
        s.decision = d;
        s.outcome = d.state === 'reference' ? 'undecided' : (d.state as RunOutcome);
      }
      if (d.state === 'better' && !referenceReady(v, policy)) {
        s.carrying = true;
        continue;
      }
      if (shouldStopOnDecision([d]).stop) s.stoppedAt = m;
    }
    // only the fastest of the runs decided better carries on to become the reference
    const carriers = state.filter((s) => s.carrying && s.stoppedAt === null);
    if (carriers.length > 1) {
      const value = (s: (typeof state)[number]) =>
        world.verdict(s.run, m).projected_full_run?.value ?? Number.POSITIVE_INFINITY;
      carriers.sort((a, b) => value(a) - value(b));
      for (const s of carriers.slice(1)) s.stoppedAt = m;
    }
  }
  return state.map((s) => {
    const stoppedAt = s.stoppedAt ?? MAX_MINUTES;
    return {
      run: s.run,
      stoppedAt,
      outcome: s.outcome,
      decidedAt: s.decidedAt,
      decision: s.decision,
      verdict: s.run.oom ? null : world.verdict(s.run, stoppedAt),
    };
  });
}

/**
 * The baseline measured alone until it can be the reference (or MAX_MINUTES, or its crash).
 * `decidedAt`: its first usable projection (when the campaign first knows its value).
 */
export function measureReference(world: World, run: SimRun, policy: CampaignPolicy, look: number): Decided {
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
    if (referenceReady(v, policy)) break;
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

/** A recorded reference as the record hands it to the monitor: its value, `stable`. */
export function recorded(name: string, v: VerdictLike | null): Reference | null {
  const p = v?.projected_full_run;
  return p
    ? { name, verdict: { state: 'stable', projected_full_run: p, minutes_of_data: v?.minutes_of_data } }
    : null;
}
