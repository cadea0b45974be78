// The calibrated model's own proposal: a beam search over the knobs the tuning rules turn (a service's
// instances, the rollouts in flight, the runtime workers), each step one rule-shaped change, scored by
// the model's predicted seconds per rollout. Where the rules see one bottleneck at a time, the model
// sees the next one coming: it proposes the combination it predicts best (e.g. more rollouts in
// flight together with the workers and the driver replicas to serve them). Every step keeps the
// proposal rules (validity, the memory lines). Pure.
import { steadyState } from '../sim/model.js';
import { topologyHash } from '../topology/expand.js';
import type { Topology } from '../types/generated/topology.js';
import { changeText, type Move, type MoveContext, retarget } from './moves.js';
import type { Calibration } from './predict.js';
import {
  activeServices,
  clone,
  gpusOf,
  inFlight,
  nrWorkers,
  replicas,
  setGpus,
  setReplicas,
} from './topology-ops.js';

/** Topologies kept per depth, and the depth (changes combined). */
const BEAM = 4;
const DEPTH = 3;

interface Step {
  topology: Topology;
  what: string;
}

/** One rule-shaped change of every knob, each keeping the rollouts in flight (or setting them). */
function neighbours(t: Topology, ctx: MoveContext, util: number[]): Step[] {
  const out: Step[] = [];
  const total = inFlight(t);
  const idlest = [...Array(ctx.gpusPerNode).keys()].sort((a, b) => (util[a] ?? 0) - (util[b] ?? 0));
  for (const svc of activeServices(t)) {
    const gpus = gpusOf(t, svc);
    if (gpus) {
      // one more container on the least busy GPU that does not hold one already (the renderer
      // scales only this way; other services may also take more replicas)
      const where = idlest.find((g) => !gpus.includes(g)) ?? idlest[0];
      if (where !== undefined) {
        const more = clone(t);
        setGpus(more, svc, [...gpus, where]);
        retarget(more, svc, total);
        out.push({
          topology: more,
          what: `${svc} ${gpus.length} → ${gpus.length + 1} containers (GPU ${where})`,
        });
      }
    }
    if (svc === 'renderer') continue;
    const r = replicas(t, svc);
    for (const next of [r + 1, Math.ceil(r * 1.5), r - 1]) {
      if (next < 1 || next === r) continue;
      const u = clone(t);
      setReplicas(u, svc, next);
      retarget(u, svc, total);
      out.push({ topology: u, what: `${svc} ${changeText('replicas_per_container', r, next)}` });
    }
  }
  for (const factor of [1.25, 1.5, 0.8]) {
    const target = Math.max(1, Math.round(total * factor));
    const u = clone(t);
    for (const svc of activeServices(u)) retarget(u, svc, target);
    if (inFlight(u) !== total)
      out.push({ topology: u, what: `rollouts in flight ${total} → ${inFlight(u)}` });
  }
  const w = nrWorkers(t);
  const cap = Math.max(1, Math.min(total, Math.floor(ctx.cpusPerNode / 2)));
  for (const next of [Math.ceil(w * 1.5), w * 2, Math.floor(w * 0.75)]) {
    if (next < 1 || next === w || next > cap) continue;
    const u = clone(t);
    u.runtime ??= {};
    u.runtime.nr_workers = next;
    out.push({ topology: u, what: changeText('runtime.nr_workers', w, next) });
  }
  return out;
}

export interface SearchOptions {
  /** Problems of a topology the proposals must not have (proposalProblems and the validator). */
  problems: (t: Topology) => string[];
  /** Hashes never to propose (tried, refused). */
  exclude: ReadonlySet<string>;
}

/**
 * Up to `count` compound proposals the calibrated model predicts fastest, reached from the parent in
 * at most DEPTH rule-shaped changes, each valid and within the memory lines at every step.
 */
export function searchPredicted(
  parent: Topology,
  cal: Calibration,
  ctx: MoveContext,
  options: SearchOptions,
  count = 2,
): Move[] {
  const model = (t: Topology) => steadyState(t, cal.profile);
  const start = model(parent).secondsPerRollout;
  if (!Number.isFinite(start)) return [];
  const fits = (t: Topology) => ctx.predict(t).every((p) => p.gib <= ctx.memoryLimit * ctx.gpuMemoryGiB);
  const seen = new Map<string, { topology: Topology; seconds: number; steps: string[] }>();
  let beam = [{ topology: parent, steps: [] as string[], util: model(parent).gpuUtilization }];
  seen.set(topologyHash(parent), { topology: parent, seconds: start, steps: [] });
  for (let depth = 0; depth < DEPTH; depth++) {
    const next: { topology: Topology; steps: string[]; util: number[]; seconds: number }[] = [];
    for (const node of beam) {
      for (const step of neighbours(node.topology, ctx, node.util)) {
        const h = topologyHash(step.topology);
        if (seen.has(h) || !fits(step.topology) || options.problems(step.topology).length > 0) continue;
        const ss = model(step.topology);
        if (!Number.isFinite(ss.secondsPerRollout)) continue;
        const steps = [...node.steps, step.what];
        seen.set(h, { topology: step.topology, seconds: ss.secondsPerRollout, steps });
        next.push({ topology: step.topology, steps, util: ss.gpuUtilization, seconds: ss.secondsPerRollout });
      }
    }
    next.sort((a, b) => a.seconds - b.seconds);
    beam = next.slice(0, BEAM);
    if (beam.length === 0) break;
  }
  const best = [...seen.entries()]
    .filter(([h, v]) => v.steps.length > 1 && !options.exclude.has(h) && v.seconds < start)
    .sort((a, b) => a[1].seconds - b[1].seconds)
    .slice(0, count);
  return best.map(([, v]) => {
    const gain = 1 - v.seconds / start;
    return {
      kind: 'model-search' as const,
      topology: v.topology,
      priority: 0.9,
      change: v.steps.join('; '),
      hypothesis: `The twin's model calibrated on ${cal.runs.length} measured run(s) (${cal.runs.join(', ')}) predicts this combination fastest among ${seen.size} topologies within ${DEPTH} rule-shaped changes of the parent: ${v.steps.join(', then ')}. Each change alone moves the bottleneck; together they keep every service fed.`,
      expectedEffect: `seconds per rollout down by about ${Math.round(gain * 1000) / 10}% (the model's prediction; see the interval), queue depths spread over the services.`,
    } satisfies Move;
  });
}
