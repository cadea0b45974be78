// The floor's oracle (issue 43 item 3): how few GPU-hours could any method spend and still conclude
// right ≥ 95% of the time, whatever it chooses? An oracle is told the space's best topology (no
// method is) and runs only it and the baseline, beside each other, with no incident, for t
// run-minutes each. It then concludes the faster of the two by the detector's projected full run
// (the most lenient reading: no min_improvement to clear, no interval, no search). It prints its own
// error rate per t over the seeds: where even it errs more than 5% of the time, no method reading
// these runs (which must also find the best, and decide with confidence) is right ≥ 95% at that cost.
//
// Run: FLOOR_PROFILE=twin-driver-bound FLOOR_SEEDS=20 FLOOR_SEED0=200 npm run bench -- floor
// (FLOOR_PROFILE: a comma list; default the shipped profiles).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from '../src/sim/profile.js';
import { expandPreset } from '../src/topology/expand.js';
import type { Topology } from '../src/types/generated/topology.js';
import { clean } from './campaign/bound.js';
import { GPUS, type SimRun, STARTUP, World } from './campaign/sim.js';
import { benchProfiles, build, groundTruth } from './campaign/space.js';

const SEEDS = Number(process.env.FLOOR_SEEDS ?? 20);
const SEED0 = Number(process.env.FLOOR_SEED0 ?? 200);
const WITHIN = 0.02;
const MINUTES = [10, 15, 20, 25, 30, 40, 50, 60, 75, 90, 120];

/** The oracle at run-minute t: right (its pick within 2% of the best), and what its jobs held. */
function oracleAt(world: World, base: SimRun, best: SimRun, t: number, optimum: number): boolean {
  const value = (r: SimRun) => world.verdict(r, t).projected_full_run?.value;
  const b = base.oom ? undefined : value(base);
  const o = value(best);
  // no projection of the best yet: it keeps the baseline (or, out of memory, has no answer)
  const pick = o === undefined ? (base.oom ? null : base) : b === undefined || o < b ? best : base;
  return !!pick && pick.truth.secondsPerRollout <= (1 + WITHIN) * optimum;
}

function profileRows(name: string, profile: ReturnType<typeof benchProfiles>[0]['profile'], base: Topology) {
  const truth = groundTruth(base, profile);
  const wrong = MINUTES.map(() => 0);
  const hours = MINUTES.map(() => 0);
  for (let seed = SEED0; seed < SEED0 + SEEDS; seed++) {
    const world = new World(profile, seed);
    const baseline = clean(world.run(base));
    const best = clean(world.run(build(base, truth.optimumPoint)));
    for (const [i, t] of MINUTES.entries()) {
      if (!oracleAt(world, baseline, best, t, truth.optimum)) wrong[i]!++;
      // each job: its start-up and t run-minutes (an out-of-memory baseline: its start-up only)
      const jobs = (baseline.oom ? STARTUP : STARTUP + t) + STARTUP + t;
      hours[i]! += (GPUS * jobs) / 60 / SEEDS;
    }
  }
  console.log(`## ${name}: the oracle told the best (${SEEDS} seeds, ${SEED0}-${SEED0 + SEEDS - 1})\n`);
  console.log('| run-minutes each | GPU-h | oracle wrong |');
  console.log('|---|---|---|');
  for (const [i, t] of MINUTES.entries())
    console.log(
      `| ${t} | ${hours[i]!.toFixed(1)} | ${wrong[i]} of ${SEEDS} (${((100 * wrong[i]!) / SEEDS).toFixed(0)}%) |`,
    );
  const ok = MINUTES.findIndex((_, i) => wrong[i]! <= 0.05 * SEEDS);
  console.log(
    `\nfloor ${name}: the oracle is right ≥ 95% from ${ok < 0 ? 'never within 120 run-minutes' : `${hours[ok]!.toFixed(1)} GPU-h (${MINUTES[ok]} run-minutes each)`}\n`,
  );
}

const root = repoRoot(process.env.TOPO_REPO_ROOT ?? process.cwd());
const base = expandPreset(
  parse(readFileSync(join(root, 'topologies/presets/8gpu_64rollouts.yaml'), 'utf8')) as Topology,
);
const wanted = (process.env.FLOOR_PROFILE ?? '').split(',').filter(Boolean);
const all = wanted.length
  ? wanted.flatMap((w) => benchProfiles(root, w))
  : benchProfiles(root).filter((p) => p.shipped);
for (const p of all) profileRows(p.name, p.profile, base);
