// Benchmark of one monitor pass over 30 live candidates (printed, not asserted): GitHub API
// calls, Prometheus queries, Slurm calls and wall time, for a first pass (every comment written) and
// a second pass at the same moment (nothing changed: no write). Ports are the in-memory fakes of the
// monitor pass's unit tests; Prometheus serves synthetic 5-second traces.

import { monitorPass } from '../src/monitor/pass.js';
import type { MonitorExperiment } from '../src/monitor/ports.js';
import type { Experiment } from '../src/types/generated/experiment.js';
import { PROFILES } from '../test/fixtures/traces/synthetic.js';
import { fakeWorld, runJob } from '../test/support/monitor-fakes.js';

const S = 1; // production: time scale 1, 5-second scrape
const now = 1_800_000_000;
const experiments: MonitorExperiment[] = [];
for (const e of ['a', 'b', 'c']) {
  const id = `topology-opt-vam-${e}-20260101`;
  const experiment: Experiment = {
    experiment_id: id,
    cluster: 'prod',
    base_topology: '8gpu_64rollouts',
    fixed_inputs: { deploy: 'prod', driver: 'vam' },
    max_parallel: 10,
  };
  experiments.push({
    experiment,
    timeScale: S,
    scrapeSeconds: 5,
    grafanaUrl: 'https://grafana.example',
    baseline: { name: 'baseline', value: { value: 3.3, low: 3.25, high: 3.35 } },
    candidates: Array.from({ length: 10 }, (_, i) => ({
      candidate: `c${i}`,
      runName: `topo-${id}-c${i}-0123abcd`,
      pr: experiments.length * 100 + i + 1,
      headSha: `sha${i}`,
      labels: [],
      requested: true,
    })),
  });
}
const world = fakeWorld(experiments, { now, timeScale: S });
let k = 0;
for (const exp of experiments)
  for (const c of exp.candidates) {
    const profile = PROFILES[k % PROFILES.length] as (typeof PROFILES)[number];
    // staggered starts: 20 to 110 minutes of run time so far
    runJob(world, c.runName, { ...profile, seed: k + 1 }, now - (20 + 3 * k) * 60, S, String(5000 + k));
    k++;
  }

async function pass(label: string) {
  const before = { ...world.counters };
  const t0 = performance.now();
  const report = await monitorPass(world.ports, { tickSeconds: 60, lagSeconds: 10 });
  const ms = performance.now() - t0;
  const d = (key: keyof typeof before) => world.counters[key] - before[key];
  const states = new Map<string, number>();
  for (const c of report.candidates) states.set(c.state, (states.get(c.state) ?? 0) + 1);
  console.log(
    `| ${label} | ${report.candidates.length} | ${d('githubReads')} | ${d('githubWrites')} | ${d('prometheusQueries')} | ${d('slurmCalls')} | ${ms.toFixed(0)} ms | ${[...states].map(([s, n]) => `${s} ${n}`).join(', ')} |`,
  );
}
console.log(
  '| pass | candidates | GitHub reads | GitHub writes | Prometheus queries | Slurm calls | wall time | states |',
);
console.log('|---|---|---|---|---|---|---|---|');
await pass('first (all new)');
await pass('second (same tick)');
world.setNow(now + 60);
await pass('next tick (metrics moved)');
