// The error of the decision's estimate and the drift of a run, from its rollouts. Pure.
//
// A rollout's duration varies for two kinds of reasons. Independent ones (the scene, the noise of
// one slot) average out like 1 ÷ √n. Shared ones (congestion, a periodic slowdown, a drift) move
// every rollout in flight at once, so rollouts that ran at the same time are not independent: their
// unit is a block of starts about half a rollout long (rollouts whose starts are that far apart
// overlap by at most half their time). The shared variation splits again into a transient (start-up
// and congestion fading: a bias that equal run age removes, src/analysis/decision.ts) and stationary
// variation, which stays in the error at every time scale the data can show. Second differences of
// neighbouring block means take smooth transients and a linear drift out of the spread; the larger
// of the block scales L, 2L, 4L… with enough blocks is kept (autocorrelation at every scale).
import { linearFit, mean, round } from './series.js';

/** One batch of rollouts that ended together (src/analysis/rollouts.ts RolloutBatch). */
export interface DurationBatch {
  end: number;
  n: number;
  duration: number;
  start: number;
}

/** What the standard error rests on (the evidence names it; `enough: false` → no claim). */
export interface ErrorBasis {
  /** Independent blocks of starts (half a mean duration long) with ended rollouts. */
  blocks: number;
  block_minutes: number;
  /** Ended rollouts after the first wave. */
  rollouts: number;
  /** How the error was taken: `independent rollouts` or `blocks of starts (shared variation)`. */
  method: string;
  /** Enough independent blocks for the error's own estimate (≥ MIN_ERROR_BLOCKS). */
  enough: boolean;
}

/** Fewer independent blocks of starts than this: the standard error is not worth the name, no claim. */
export const MIN_ERROR_BLOCKS = 4;

/** Rollout-level drift: relative change of the durations per hour of start time, with its s.e. */
export interface RolloutDrift {
  slope_relative_per_hour: number;
  se: number;
  /** Start (run-minute) after the transient, where the fit begins (MSER truncation of the blocks). */
  from_minute: number;
}

interface Block {
  k: number;
  n: number;
  mean: number;
}

/** Batches whose rollouts have nearly all ended: started at least the 90th-percentile duration ago. */
function settled(steady: readonly DurationBatch[], now: number): DurationBatch[] {
  const ds = steady.flatMap((b) => Array<number>(Math.min(b.n, 50)).fill(b.duration)).sort((a, b) => a - b);
  const q90 = ds[Math.floor(0.9 * (ds.length - 1))] ?? 0;
  return steady.filter((b) => b.start <= now - q90);
}

function blocksOf(batches: readonly DurationBatch[], L: number, t0: number): Block[] {
  const m = new Map<number, { s: number; n: number }>();
  for (const b of batches) {
    const k = Math.floor((b.start - t0) / L);
    const x = m.get(k) ?? { s: 0, n: 0 };
    x.s += b.n * b.duration;
    x.n += b.n;
    m.set(k, x);
  }
  return [...m.entries()].sort((a, b) => a[0] - b[0]).map(([k, x]) => ({ k, n: x.n, mean: x.s / x.n }));
}

/**
 * A rollout's own variance σ²: the batches' spread around their block's mean (a batch of n_b has
 * variance σ² ÷ n_b), so that a transient or a drift across blocks is not counted as noise.
 */
function withinBlockVariance(steady: readonly DurationBatch[], L: number, t0: number): number | null {
  const means = new Map(blocksOf(steady, L, t0).map((b) => [b.k, b.mean]));
  let ss = 0;
  for (const b of steady)
    ss += b.n * (b.duration - (means.get(Math.floor((b.start - t0) / L)) as number)) ** 2;
  const df = steady.length - means.size;
  return df > 0 ? ss / df : null;
}

/**
 * Variance of the grand mean from the blocks' shared component: second differences of neighbouring
 * block means estimate var(block mean) free of smooth trends; less the independent part σ² ÷ n_b, the
 * rest is shared, and its blocks count once each. Null with fewer than 5 blocks.
 */
function sharedVariance(blocks: readonly Block[], sigma2: number, n: number): number | null {
  if (blocks.length < 5) return null;
  let ss = 0;
  let c = 0;
  for (let i = 1; i + 1 < blocks.length; i++) {
    const [a, b, d] = [blocks[i - 1], blocks[i], blocks[i + 1]] as [Block, Block, Block];
    ss += (a.mean - 2 * b.mean + d.mean) ** 2;
    c++;
  }
  const v = ss / c / 6;
  const shared = Math.max(0, v - sigma2 * mean(blocks.map((x) => 1 / x.n)));
  const w = blocks.reduce((s, x) => s + x.n * x.n, 0) / (n * n);
  return shared * w;
}

/**
 * The standard error of the mean duration W and its basis: the i.i.d. one (σ ÷ √n over the batches)
 * plus the shared variation between blocks of starts, the largest over the scales with enough blocks.
 */
export function durationError(
  steady: readonly DurationBatch[],
  W: number,
  n: number,
  now: number,
  step: number,
): { se: number; basis: ErrorBasis } {
  const L = Math.max(2 * step, W / 2);
  const t0 = Math.min(...steady.map((b) => b.start));
  const sigma2 = withinBlockVariance(steady, L, t0) ?? W * W;
  const iid2 = sigma2 / n;
  const done = settled(steady, now);
  const base = blocksOf(done, L, t0);
  // the transient (MSER on the block means) is a bias that equal run age removes, not noise
  const from = t0 + (base[mserStart(base)]?.k ?? 0) * L;
  const stationary = done.filter((b) => b.start >= from);
  let shared = 0;
  for (let scale = L; ; scale *= 2) {
    const blocks = blocksOf(stationary, scale, from);
    const v = sharedVariance(
      blocks,
      sigma2,
      stationary.reduce((a, b) => a + b.n, 0),
    );
    if (v === null) break;
    shared = Math.max(shared, v);
  }
  const enough = base.length >= MIN_ERROR_BLOCKS;
  return {
    se: Math.sqrt(iid2 + shared),
    basis: {
      blocks: base.length,
      block_minutes: round(L, 2),
      rollouts: n,
      method: shared > 0 ? 'blocks of starts (shared variation)' : 'independent rollouts',
      enough,
    },
  };
}

/**
 * MSER truncation of the block means (the classical initial-transient rule): the first block k that
 * minimises the variance of the rest over its count squared; never past a third of the blocks (on a
 * drift MSER keeps cutting the early part, and the slope left over is too short to see the drift).
 */
function mserStart(blocks: readonly Block[]): number {
  let best = 0;
  let bestScore = Number.POSITIVE_INFINITY;
  for (let d = 0; d <= Math.floor(blocks.length / 3); d++) {
    const rest = blocks.slice(d);
    const m = mean(rest.map((b) => b.mean));
    const score = rest.reduce((a, b) => a + (b.mean - m) ** 2, 0) / rest.length ** 2;
    if (score < bestScore) {
      bestScore = score;
      best = d;
    }
  }
  return best;
}

/**
 * The run's drift at the rollout level: the durations of settled batches against their start, after
 * the transient (MSER on the block means), relative to W per hour, with its standard error from the
 * block means (shared variation counts once per block). Null with fewer than 4 blocks after it.
 */
export function rolloutDrift(
  steady: readonly DurationBatch[],
  W: number,
  now: number,
  step: number,
): RolloutDrift | null {
  const done = settled(steady, now);
  if (!done.length || !(W > 0)) return null;
  const L = Math.max(2 * step, W / 2);
  const t0 = Math.min(...done.map((b) => b.start));
  const blocks = blocksOf(done, L, t0);
  const rest = blocks.slice(mserStart(blocks));
  if (rest.length < 4) return null;
  const fit = linearFit(
    rest.map((b) => t0 + (b.k + 0.5) * L),
    rest.map((b) => b.mean / W),
  );
  if (!Number.isFinite(fit.seB)) return null;
  return {
    slope_relative_per_hour: round(60 * fit.b, 4),
    se: round(60 * fit.seB, 4),
    from_minute: round(t0 + (rest[0] as Block).k * L, 2),
  };
}
