// Seeded pseudo-random numbers (mulberry32): the twin is deterministic for a seed.
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Standard normal (Box-Muller). */
  normal(): number;
  /** Log-normal factor with mean 1 and the given coefficient of variation. */
  factor(cv: number): number;
}

export function createRng(seed: number): Rng {
  let a = seed >>> 0 || 0x9e3779b9;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = (): number => {
    const u = Math.max(next(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
  };
  return {
    next,
    normal,
    factor(cv) {
      if (cv <= 0) return 1;
      const s2 = Math.log(1 + cv * cv);
      return Math.exp(Math.sqrt(s2) * normal() - s2 / 2);
    },
  };
}
