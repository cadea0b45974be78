// Benchmark of the stabilisation detector (printed, not asserted). Over a trace set whose runs are
// simulated to their end (234 run-minutes, the default 03:59 wall time less start-up): run-minutes
// until the first `stable`/`cyclic` verdict and the error of its value against the run's final
// full-run seconds per rollout, next to the seed's rule (read the full-run average at 45 minutes).
// Run: npm run build && node scripts/bench.mjs detector  (or bundle this file with esbuild and run it)
import { detect } from '../src/analysis/detector.js';
import { median } from '../src/analysis/series.js';
import { PROFILES, simulateTrace, type Trace, truncate } from '../test/fixtures/traces/synthetic.js';
import { twinTrace } from '../test/fixtures/traces/twin.js';

const traces: Trace[] = [];
for (const seed of [1, 2, 3])
  for (const p of PROFILES)
    traces.push(simulateTrace({ ...p, seed: (p.seed ?? 1) * 100 + seed, name: `${p.name}#${seed}` }));
const twinCases = [
  { profile: 'twin-balanced', preset: '8gpu_64rollouts' },
  { profile: 'twin-renderer-bound', preset: '8gpu_64rollouts' },
  { profile: 'twin-driver-bound', preset: '8gpu_12rollouts' },
  { profile: 'twin-cyclic', preset: '8gpu_64rollouts' },
  { profile: 'twin-balanced', preset: '2gpu' },
  { profile: 'twin-balanced', preset: '8gpu_no_replicas' },
];
for (const seed of [1, 2]) for (const c of twinCases) traces.push(twinTrace({ ...c, seed }));

interface Row {
  name: string;
  final: number;
  stableAt: number | null;
  state: string;
  ourError: number | null;
  covered: boolean | null;
  seedError: number;
}
const rows: Row[] = [];
const started = Date.now();
let evaluations = 0;
for (const trace of traces) {
  if (!Number.isFinite(trace.finalFullRun)) continue;
  let row: Row | undefined;
  for (let t = 1; t <= trace.endMinutes; t++) {
    const v = detect(truncate(trace, t));
    evaluations++;
    if (v.state === 'stable' || v.state === 'cyclic') {
      const value = v.value?.value as number;
      row = {
        name: trace.profile.name,
        final: trace.finalFullRun,
        stableAt: t,
        state: v.state,
        ourError: value / trace.finalFullRun - 1,
        covered:
          (v.value?.low as number) <= trace.finalFullRun && trace.finalFullRun <= (v.value?.high as number),
        seedError: 0,
      };
      break;
    }
  }
  const at45 = trace.fullRun.filter((p) => p.t <= 45 && Number.isFinite(p.v)).at(-1)?.v ?? Number.NaN;
  row ??= {
    name: trace.profile.name,
    final: trace.finalFullRun,
    stableAt: null,
    state: 'never',
    ourError: null,
    covered: null,
    seedError: 0,
  };
  row.seedError = at45 / trace.finalFullRun - 1;
  rows.push(row);
}
const ms = Date.now() - started;
const pct = (x: number | null) => (x === null ? '—' : `${(100 * x).toFixed(2)}%`);
console.log(
  '| trace | final s/rollout | stable at (run-min) | verdict | error of verdict | CI covers final | seed rule @45 min error |',
);
console.log('|---|---|---|---|---|---|---|');
for (const r of rows)
  console.log(
    `| ${r.name} | ${r.final.toFixed(3)} | ${r.stableAt ?? 'never'} | ${r.state} | ${pct(r.ourError)} | ${r.covered === null ? '—' : r.covered ? 'yes' : 'no'} | ${pct(r.seedError)} |`,
  );
const reached = rows.filter((r) => r.stableAt !== null);
const abs = (xs: number[]) => xs.map(Math.abs);
const ours = abs(reached.map((r) => r.ourError as number));
const seeds = abs(rows.map((r) => r.seedError));
console.log('');
console.log(
  `traces: ${rows.length}, reached a verdict: ${reached.length}, interval covers the final value: ${reached.filter((r) => r.covered).length}`,
);
console.log(
  `run-minutes until stable: median ${median(reached.map((r) => r.stableAt as number))}, worst ${Math.max(...reached.map((r) => r.stableAt as number))}`,
);
console.log(
  `|error| of the verdict vs the final full-run value: median ${pct(median(ours))}, worst ${pct(Math.max(...ours))}`,
);
console.log(
  `|error| of the seed's rule (full-run read at 45 min): median ${pct(median(seeds))}, worst ${pct(Math.max(...seeds))}`,
);
console.log(`${evaluations} detector evaluations in ${ms} ms (${(ms / evaluations).toFixed(2)} ms each)`);
