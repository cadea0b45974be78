// Compare a candidate's projected full-run value with the baseline or the current best. Pure.
// Lower seconds per rollout is better; the ratio's interval comes from the two 95% intervals
// (half-widths read as 1.96 σ, combined in quadrature on the log scale).
import type { Comparison, Interval } from '../types/generated/metrics.js';
import { round } from './series.js';

export function compare(
  candidate: Interval | null | undefined,
  against: Interval | null | undefined,
  againstName: string,
): Comparison {
  if (!candidate || !against || !(candidate.value > 0) || !(against.value > 0))
    return { against: againstName, ratio: null, difference_s: null, outcome: 'not-comparable' };
  const relSigma = (i: Interval) => Math.max(i.high - i.value, i.value - i.low, 0) / 1.96 / i.value;
  const sc = relSigma(candidate);
  const sa = relSigma(against);
  const ratio = candidate.value / against.value;
  const sLog = Math.sqrt(sc * sc + sa * sa);
  const rLow = ratio * Math.exp(-1.96 * sLog);
  const rHigh = ratio * Math.exp(1.96 * sLog);
  const diff = candidate.value - against.value;
  const sDiff = Math.sqrt((sc * candidate.value) ** 2 + (sa * against.value) ** 2);
  const outcome = rHigh < 1 ? 'better' : rLow > 1 ? 'worse' : 'indistinguishable';
  return {
    against: againstName,
    ratio: { value: round(ratio, 4), low: round(rLow, 4), high: round(rHigh, 4) },
    difference_s: {
      value: round(diff, 4),
      low: round(diff - 1.96 * sDiff, 4),
      high: round(diff + 1.96 * sDiff, 4),
    },
    outcome,
  };
}

/** One line for people: "faster than baseline: 12.3% fewer seconds per rollout (ratio 0.877, 95% CI 0.84–0.92)". */
export function describeComparison(c: Comparison): string {
  if (c.outcome === 'not-comparable' || !c.ratio)
    return `not comparable with ${c.against} yet (no projected value on one side)`;
  const word =
    c.outcome === 'better' ? 'faster than' : c.outcome === 'worse' ? 'slower than' : 'indistinguishable from';
  const pct = round(100 * (c.ratio.value - 1), 1);
  const change = pct <= 0 ? `${-pct}% fewer` : `${pct}% more`;
  return `${word} ${c.against}: ${change} seconds per rollout (ratio ${c.ratio.value}, 95% CI ${c.ratio.low}–${c.ratio.high})`;
}
