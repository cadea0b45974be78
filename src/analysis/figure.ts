// THE figure of a run: the seconds per rollout every surface shows for it (comment, check, record,
// report, site, dashboard, CLI, demo) and the record's best is ranked by. Pure.
//
// A decided run shows what its decision says: its reference's figure × (1 + the decided change),
// with the decision's interval (`decision.figure`, computed by the judge when it decides and kept
// with the decision). So a candidate decided `better` is below its reference on every surface, and
// the ratio any surface shows is the decision's. A run without a decision (the baseline, a failed,
// undecided or still measuring run) shows its own value, as decisions read it when it is their
// reference (the detector's projection, else its decision estimate, else its last reading).
//
// The anchor (anchoredDecision, the one owner of this derivation): the change is measured at equal
// run age, where the start-up both runs carry cancels, so it is applied to the reference's STEADY
// figure: its own settled decision's figure once it has one, else its steady estimate (the
// detector's projection or the decision estimate), never a full-run reading, which carries start-up.
// A decision against a live run that is still settling (the pruner's leading candidate) is
// re-anchored once that run settles: the judge re-derives it from the leader's figure at each pass,
// and the record on every read and write (src/record/migrate.ts). Pruned against a leader read at
// 9.08 s early that settled at 8.27 s, a loser +35.6% slower is shown at 11.21 s, not 12.32 s.

import type { DecidedFigure, Decision, Interval } from '../types/generated/metrics.js';
import { decisionProjection, isFinalDecision, type VerdictLike } from './decision.js';

const round4 = (x: number) => Math.round(x * 10000) / 10000;

export interface Figure extends Interval {
  /**
   * `decision`: from its decision against `reference`; else its own value: `projection` (the
   * detector's, what decisions read of a reference), `estimate` (the decision estimate) or
   * `reading` (the last full-run reading, start-up included).
   */
  basis: 'decision' | 'projection' | 'estimate' | 'reading';
  /** The reference the decision read: its name, the figure the decision anchored on, the change. */
  reference?: { name: string; value: number; change: Interval };
}

/** A decision that settled the run (src/analysis/decision.ts isFinalDecision: not `measuring`, the provisional `better-at-equal-age` or `reference`). */
export const isDecided = (d: Decision | null | undefined): d is Decision => isFinalDecision(d);

/**
 * A candidate's seconds per rollout as its decision says: the reference's value × (1 + the
 * decision's relative change), its interval the decision's.
 */
export function decidedFigure(reference: number, change: Interval): DecidedFigure {
  const at = (x: number) => round4(reference * (1 + x));
  return {
    value: at(change.value),
    low: at(change.low),
    high: at(change.high),
    reference_value: round4(reference),
  };
}

/**
 * A run's own value, from its verdict: as decisions read it when it is their reference (the
 * detector's projection, else its stable value), else its decision estimate, else the last reading.
 */
export function ownFigureOf(
  verdict: (VerdictLike & { value?: Interval | null }) | null | undefined,
  reading: number | null | undefined,
): Figure | null {
  const projected = verdict?.projected_full_run ?? verdict?.value ?? null;
  const i = projected ?? decisionProjection(verdict);
  if (i) return { value: i.value, low: i.low, high: i.high, basis: projected ? 'projection' : 'estimate' };
  return reading == null ? null : { value: reading, low: reading, high: reading, basis: 'reading' };
}

/** The figure a decided decision carries; null for a decision that settled nothing or has none. */
export function decisionFigure(d: Decision | null | undefined): Figure | null {
  const f = d?.figure;
  if (!isDecided(d) || !f || !d.relative_change) return null;
  return {
    value: f.value,
    low: f.low,
    high: f.high,
    basis: 'decision',
    reference: { name: d.reference.name, value: f.reference_value, change: d.relative_change },
  };
}

/** A decision against a live run that is itself still settling (the pruner's leading candidate). */
export function againstLiveRun(d: Decision | null | undefined): boolean {
  return d?.reference.role === 'leading candidate';
}

/**
 * What a decision against a run is anchored on: the run's steady figure (its settled decision's, or
 * its projection or decision estimate); null for a full-run reading, start-up included.
 */
export function steadyAnchor(f: Figure | null | undefined): number | null {
  return f && f.basis !== 'reading' && f.value > 0 ? f.value : null;
}

/**
 * THE derivation of a decided run's figure: the decision with its figure anchored on its
 * reference's steady figure `anchor` (× (1 + the change)). A decision that carries a figure keeps it,
 * unless it was decided against a live run: that one follows its reference's figure as it settles.
 */
export function anchoredDecision(d: Decision, anchor: number | null): Decision {
  if (!isDecided(d) || !d.relative_change || anchor === null) return d;
  if (d.figure && (!againstLiveRun(d) || d.figure.reference_value === round4(anchor))) return d;
  return { ...d, figure: decidedFigure(anchor, d.relative_change) };
}

/** THE figure of a run: its decision's, else its own (see the top of this file). */
export function runFigure(x: {
  decision?: Decision | null;
  verdict?: (VerdictLike & { value?: Interval | null }) | null;
  reading?: number | null;
}): Figure | null {
  return decisionFigure(x.decision) ?? ownFigureOf(x.verdict, x.reading);
}
