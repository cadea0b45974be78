// The autopilot bench (issue 42 item 2, issue 43; printed, not asserted): per twin profile and seed,
// the autopilot's campaign (topo's loop with each turn planned by the autopilot's planStep over the
// runs as a monitor pass reads them; bench/campaign/autopilot.ts) beside the campaign bench's `topo`
// (the loop's own planRound) and the seed's manual rule on the same world: right conclusions (within
// 2% of the space's best), GPU-hours per right conclusion, rounds, GPU-hours, wall-clock hours, the
// winner's gain over the baseline (true steady values), and where the autopilot's rounds leave
// topo's. GitHub API requests per hour are the real monitor's: `topo demo --autopilot` prints them.
//
// Run: npm run bench -- autopilot (AUTOPILOT_SEEDS=N, default 4, from AUTOPILOT_SEED0, default 100:
// seeds never tuned on; AUTOPILOT_PROFILE=<name|file.yaml>; shipped profiles and bench/profiles/*.yaml
// by default).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { DEFAULT_POLICY } from '../src/campaign/rounds.js';
import { repoRoot } from '../src/sim/profile.js';
import { expandPreset } from '../src/topology/expand.js';
import type { Topology } from '../src/types/generated/topology.js';
import type { TwinProfile } from '../src/types/generated/twin-profile.js';
import { autopilotPlanner, roundsDiverge } from './campaign/autopilot.js';
import { perRight } from './campaign/goals.js';
import { type Context, type MethodResult, manualCampaign, topoCampaign } from './campaign/methods.js';
import { World } from './campaign/sim.js';
import { benchProfiles, groundTruth, type Point } from './campaign/space.js';

const SEEDS = Number(process.env.AUTOPILOT_SEEDS ?? 4);
const SEED0 = Number(process.env.AUTOPILOT_SEED0 ?? 100);
const BUDGET = 120;
const WITHIN = 0.02;
const BASE_POINT: Point = { renderer: 0, driver: 8, physics: 4, total: 64, workers: 8 };
const METHODS = ['topo', 'autopilot', 'manual'] as const;
type Method = (typeof METHODS)[number];

interface Figures {
  right: boolean;
  rounds: number;
  gpuHours: number;
  wallHours: number;
  gain: number;
}

/** A campaign's figures: right (its answer within 2% of the best), rounds, GPU-hours, wall-clock, the true gain. */
function figures(r: MethodResult, optimum: number): Figures {
  const first = r.ledger.incumbent[0];
  const last = r.ledger.final();
  return {
    right: !!last && last.seconds <= optimum * (1 + WITHIN),
    rounds: r.rounds,
    gpuHours: r.ledger.total(),
    wallHours: r.ledger.end() / 60,
    gain: first && last ? 1 - last.seconds / first.seconds : 0,
  };
}

const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '—');
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

function contextOf(profile: TwinProfile, base: Topology, seed: number): Context {
  return {
    world: new World(profile, seed),
    base,
    basePoint: BASE_POINT,
    policy: DEFAULT_POLICY,
    cluster: {
      gpusPerNode: profile.gpu.count,
      gpuMemoryGiB: profile.gpu.memory_gb,
      cpusPerNode: profile.cpu.cores,
    },
    budget: BUDGET,
    look: 5,
    experimentId: 'topology-opt-bench-twin-20261202',
  };
}

/** The three campaigns of one seed, each on a fresh world of that seed. */
async function seedRun(profile: TwinProfile, base: Topology, seed: number) {
  const topo = await topoCampaign(contextOf(profile, base, seed));
  const ctx = contextOf(profile, base, seed);
  const pilot = await topoCampaign(ctx, autopilotPlanner(ctx));
  const manual = manualCampaign(contextOf(profile, base, seed));
  return { topo, autopilot: pilot, manual, diverge: roundsDiverge(topo, pilot) };
}

/** One profile over the seeds: a row per seed, then each method's right share and GPU-h per right. */
async function profileRows(name: string, profile: TwinProfile, base: Topology, seeds: number[]) {
  const optimum = groundTruth(base, profile).optimum;
  console.log(`\n## ${name}\n`);
  console.log(
    '| seed | right topo / autopilot / manual | rounds topo / autopilot | GPU-h topo / autopilot / manual | wall h topo / autopilot | gain topo / autopilot | autopilot’s rounds |',
  );
  console.log('|---|---|---|---|---|---|---|');
  const all: Record<Method, Figures[]> = { topo: [], autopilot: [], manual: [] };
  let diverged = 0;
  for (const seed of seeds) {
    const run = await seedRun(profile, base, seed);
    const f = Object.fromEntries(METHODS.map((m) => [m, figures(run[m], optimum)])) as Record<
      Method,
      Figures
    >;
    for (const m of METHODS) all[m].push(f[m]);
    if (run.diverge) diverged++;
    const yes = (x: Figures) => (x.right ? 'yes' : 'no');
    console.log(
      `| ${seed} | ${yes(f.topo)} / ${yes(f.autopilot)} / ${yes(f.manual)} | ${f.topo.rounds} / ${f.autopilot.rounds} | ${f1(f.topo.gpuHours)} / ${f1(f.autopilot.gpuHours)} / ${f1(f.manual.gpuHours)} | ${f1(f.topo.wallHours)} / ${f1(f.autopilot.wallHours)} | ${pct(f.topo.gain)} / ${pct(f.autopilot.gain)} | ${run.diverge ? `leave topo's: ${run.diverge}` : "topo's"} |`,
    );
  }
  const summary = METHODS.map((m) => {
    const rows = all[m];
    const per = perRight(
      rows.map((r) => r.gpuHours),
      rows.map((r) => r.right),
    );
    return `${m} ${f1(per)} GPU-h per right (right ${pct(rows.filter((r) => r.right).length / rows.length)})`;
  });
  console.log(
    `\nautopilot ${name}: ${summary.join(', ')}; ${seeds.length - diverged} of ${seeds.length} seeds run topo's rounds`,
  );
  return diverged;
}

async function main(): Promise<number> {
  const t0 = Date.now();
  const root = repoRoot(process.env.TOPO_REPO_ROOT ?? process.cwd());
  const base = expandPreset(
    parse(readFileSync(join(root, 'topologies/presets/8gpu_64rollouts.yaml'), 'utf8')) as Topology,
  );
  const seeds = [...Array(SEEDS).keys()].map((i) => SEED0 + i);
  console.log(
    `autopilot bench: baseline 8gpu_64rollouts; seeds ${seeds[0]}-${seeds.at(-1)}; budget ${BUDGET} GPU-hours; the campaign policy's parallel ${DEFAULT_POLICY.parallel}, stop after ${DEFAULT_POLICY.stopAfter}`,
  );
  let diverged = 0;
  for (const p of benchProfiles(root, process.env.AUTOPILOT_PROFILE))
    diverged += await profileRows(p.name, p.profile, base, seeds);
  console.log(
    `\nautopilot bench: ${((Date.now() - t0) / 1000).toFixed(0)} s; ${diverged} campaign(s) leave topo's rounds`,
  );
  return 0;
}

process.exitCode = await main();
