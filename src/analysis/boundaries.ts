// One-sided group-sequential boundaries with Lan–DeMets alpha spending, Pocock type. Pure.
//
// A decision is a one-sided claim (worse: the change is above 0; better: below −m; not-better:
// above −m; equivalent: both one-sided claims of ±m), looked at once a minute. Each claim spends
// its error α over the information fraction τ ∈ (0, 1] reached by `max_decision_minutes`:
//   α(τ) = α · ln(1 + (e − 1) · τ)                      (Lan & DeMets 1983, Pocock type)
// and the boundary c_k of look k is the z that makes the probability of a first crossing at look k
// equal α(τ_k) − α(τ_{k−1}) under the null, computed exactly for a Gaussian random walk by
// recursive numerical integration (Armitage, McPherson & Rowe 1969). The boundaries are computed for
// K equally spaced looks (one per minute of the horizon); looking at a subset of them only spends
// less of α, so a monitor that misses a minute stays valid.
const E1 = Math.E - 1;

/** Pocock-type spending: the error spent by information fraction τ. */
export function pocockSpending(alpha: number, tau: number): number {
  return alpha * Math.log(1 + E1 * Math.min(1, Math.max(0, tau)));
}

const cache = new Map<string, readonly number[]>();

/** Upper normal tail P(Z > z). */
function upperTail(z: number): number {
  // erfc by the Chebyshev fit of Numerical Recipes (erfcc, relative error < 1.2e-7)
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * x);
  const erfc =
    t *
    Math.exp(
      -x * x -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 +
                            t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  const p = erfc / 2;
  return z >= 0 ? p : 1 - p;
}

/**
 * The one-sided boundaries z_1 … z_K for K equally spaced looks at error α (Pocock-type spending):
 * the walk S_k = Σ of k standard normals crosses at look k when S_k ÷ √k > z_k.
 */
export function spendingBoundaries(K: number, alpha: number): readonly number[] {
  const key = `${K}:${alpha}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const h = 0.1; // grid step of S (the kernel's s.d. is 1)
  const lo = -8 * Math.sqrt(K) - 8;
  const n0 = Math.ceil(-lo / h);
  // density of S_k on the grid, restricted to paths not stopped yet; S_0 = 0
  let f = new Float64Array(0);
  const out: number[] = [];
  const phi = (x: number) => Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI);
  let spent = 0;
  for (let k = 1; k <= K; k++) {
    const target = pocockSpending(alpha, k / K) - spent;
    const hiS = 8 * Math.sqrt(k) + 8;
    const n = n0 + Math.ceil(hiS / h) + 1;
    const g = new Float64Array(n);
    if (k === 1) for (let i = 0; i < n; i++) g[i] = phi(lo + i * h);
    else
      for (let j = 0; j < f.length; j++) {
        const w = (f[j] as number) * h;
        if (w < 1e-300) continue;
        const sj = lo + j * h;
        const from = Math.max(0, Math.floor((sj - 9 - lo) / h));
        const to = Math.min(n - 1, Math.ceil((sj + 9 - lo) / h));
        for (let i = from; i <= to; i++) g[i] = (g[i] as number) + w * phi(lo + i * h - sj);
      }
    // crossing probability above b (in S units): the grid tail, and the b that makes it `target`
    const tail = (b: number) => {
      let p = 0;
      const start = Math.ceil((b - lo) / h);
      for (let i = Math.max(0, start); i < n; i++) p += (g[i] as number) * h;
      // the part of the first cell above b
      const i0 = start - 1;
      if (i0 >= 0 && i0 < n) p += (g[i0] as number) * (lo + start * h - b);
      return p;
    };
    let a = 0;
    let b = hiS;
    for (let it = 0; it < 60; it++) {
      const mid = (a + b) / 2;
      if (tail(mid) > target) a = mid;
      else b = mid;
    }
    const bound = (a + b) / 2;
    spent += tail(bound);
    out.push(bound / Math.sqrt(k));
    // paths at or above the boundary stopped
    const cut = Math.floor((bound - lo) / h);
    for (let i = Math.max(0, cut + 1); i < n; i++) g[i] = 0;
    f = g;
  }
  // the first look has no past: its tail is exact
  if (K >= 1) out[0] = zOfTail(pocockSpending(alpha, 1 / K));
  cache.set(key, out);
  return out;
}

/** The z with upper tail p. */
function zOfTail(p: number): number {
  let a = -10;
  let b = 10;
  for (let i = 0; i < 80; i++) {
    const m = (a + b) / 2;
    if (upperTail(m) > p) a = m;
    else b = m;
  }
  return (a + b) / 2;
}

export interface LookPosition {
  /** Run-minutes of data now. */
  minutes: number;
  /** Run-minute the steady data starts at (the first wave's end). */
  warmupEnd: number;
  /** The horizon, `max_decision_minutes`. */
  maxMinutes: number;
}

/**
 * The look's index among the K = `maxMinutes` equally spaced looks: the information fraction
 * τ = steady minutes now ÷ steady minutes at the horizon (information grows with steady data),
 * rounded down so that a look never claims more information than it has. Null past the horizon.
 */
export function lookIndex(p: LookPosition): { k: number; K: number; tau: number } | null {
  const K = Math.max(1, Math.round(p.maxMinutes));
  const span = Math.max(1, p.maxMinutes - p.warmupEnd);
  const tau = (p.minutes - p.warmupEnd) / span;
  if (tau > 1 + 1e-9) return null;
  return { k: Math.min(K, Math.max(1, Math.floor(tau * K))), K, tau: Math.max(0, tau) };
}

/** The one-sided boundary (in standard errors) of this look, at error α; null past the horizon. */
export function boundaryAt(p: LookPosition, alpha: number): number | null {
  const look = lookIndex(p);
  if (!look) return null;
  return spendingBoundaries(look.K, alpha)[look.k - 1] as number;
}
