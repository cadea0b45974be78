// The floor's strongest reader (bench/floor.bench.ts): an estimator of a run's steady seconds per
// rollout that knows the world's noise model, everything but the steady value itself. A rollout of
// the trace family lasts base × (1 + congestion at its start) × cycle at its start × exp(σ Z) (× 1.3
// and 3σ on a noisy worker), base = in flight × steady ÷ 60; so log(duration ÷ known factors) is
// normal around log(base) with a known σ. It fits log(base) by maximum likelihood over every rollout
// started by the look: completed ones observed, the ones still in flight right-censored at their age.
// No reading of the run can do much better; it reads the rollouts directly, not through a scrape.
import { type Completion, completions } from '../trace-family.js';
import { rateFactor, type SimRun, type World } from './sim.js';

/** Φ, the standard normal CDF (Abramowitz and Stegun 7.1.26, absolute error below 1.5e-7). */
export function phi(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const poly =
    t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-x * x);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/** φ(z) ÷ (1 − Φ(z)), Mills' asymptotic series in the far tail where 1 − Φ loses its digits. */
function hazard(z: number): number {
  if (z > 5) return z + 1 / z - 2 / z ** 3;
  return Math.exp((-z * z) / 2) / Math.sqrt(2 * Math.PI) / phi(-z);
}

interface Obs {
  /** log(duration ÷ the known factors at its start), or of its age so far when censored. */
  x: number;
  sigma: number;
  censored: boolean;
}

const events = new Map<string, Completion[]>();

function eventsOf(world: World, r: SimRun): Completion[] {
  const key = `${world.profile.name}/${world.seed}/${r.id}`;
  let e = events.get(key);
  if (!e) {
    e = completions(world.spec(r));
    events.set(key, e);
  }
  return e;
}

/** The rollouts in flight at t: every start (minute 0 per slot, then each completion) not yet ended. */
function inFlightAt(done: Completion[], r: SimRun): Array<{ start: number; worker: number }> {
  const W = r.shape.workers;
  const order = (a: { start: number; worker: number }, b: { start: number; worker: number }) =>
    a.worker - b.worker || a.start - b.start;
  const starts = [
    ...Array.from({ length: r.inFlight }, (_, slot) => ({ start: 0, worker: slot % W })),
    ...done.map((e) => ({ start: e.t, worker: e.worker })),
  ].sort(order);
  const ended = done.map((e) => ({ start: e.t - e.d, worker: e.worker })).sort(order);
  const open: Array<{ start: number; worker: number }> = [];
  let j = 0;
  for (const s of starts) {
    const e = ended[j];
    if (e && e.worker === s.worker && Math.abs(e.start - s.start) < 1e-6) j++;
    else open.push(s);
  }
  if (open.length !== r.inFlight)
    throw new Error(`oracle: ${open.length} rollouts in flight, expected ${r.inFlight}`);
  return open;
}

function observations(world: World, r: SimRun, t: number): Obs[] {
  const s = r.shape;
  if (s.scenes || s.wallClock || s.driftPerHour || s.suite)
    throw new Error(`oracle: shape ${s.name} has effects the model does not divide out`);
  const factor = (start: number, worker: number) => {
    const cong = s.congestion * Math.max(0, 1 - start / s.congestionMinutes);
    const cyc = s.cycle ? 1 + s.cycle.amplitude * Math.sin((2 * Math.PI * start) / s.cycle.periodMinutes) : 1;
    return (1 + cong) * cyc * (worker < (s.noisyWorkers ?? 0) ? 1.3 : 1);
  };
  const sigma = (worker: number) => (worker < (s.noisyWorkers ?? 0) ? 3 : 1) * s.jitter;
  const done = eventsOf(world, r).filter((e) => e.t <= t);
  const out: Obs[] = done.map((e) => ({
    x: Math.log(e.d / factor(e.t - e.d, e.worker)),
    sigma: sigma(e.worker),
    censored: false,
  }));
  for (const o of inFlightAt(done, r))
    if (t > o.start)
      out.push({
        x: Math.log((t - o.start) / factor(o.start, o.worker)),
        sigma: sigma(o.worker),
        censored: true,
      });
  return out;
}

/** The censored normal likelihood's maximum in μ (its score falls with μ: bisection). */
function censoredMean(obs: Obs[]): number {
  const score = (mu: number) =>
    obs.reduce((g, o) => {
      const z = (o.x - mu) / o.sigma;
      return g + (o.censored ? hazard(z) : z) / o.sigma;
    }, 0);
  let lo = Math.min(...obs.map((o) => o.x)) - 5;
  let hi = Math.max(...obs.map((o) => o.x)) + 5;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (score(mid) > 0) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** The run's steady seconds per rollout estimated from its rollouts up to run-minute t (none completed: undefined). */
export function modelEstimate(world: World, r: SimRun, t: number): number | undefined {
  const obs = observations(world, r, t);
  if (!obs.some((o) => !o.censored)) return undefined;
  const base = Math.exp(censoredMean(obs));
  return (base * 60) / r.inFlight / rateFactor(world.shape, r.inFlight, r.shape.workers, base);
}
