// Decide, don't only measure, on the real stack: three twin runs under the local Slurm, scraped by the
// local Prometheus, each judged every 5 run-minutes through analyzeRun (the path of `topo analyze --at`)
// and compared with the baseline by decideCandidate. A clearly worse candidate must be decided — and
// shouldStopOnDecision must say to cancel it — before a clearly better one is `stable`.
// (The monitor's wiring of these pure functions into reconcile is the lead's; see docs/monitor.md.)
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideCandidate, gpuMinutes, shouldStopOnDecision } from '../../../src/analysis/decision.js';
import { parseOverrides } from '../../../src/sim/overrides.js';
import { createPrometheusClient } from '../../../src/telemetry/prometheus.js';
import { capacitySummary } from '../../../src/topology/capacity.js';
import type { Decision, Verdict } from '../../../src/types/generated/metrics.js';
import { analyzeRun } from '../../../src/usecases/analyze-run.js';
import { runTopo } from '../../support/cli.js';
import { type LocalClusterEnv, repoRoot, requireCluster } from '../../support/cluster.js';
import { requireTwinBundle, sbatchTwin } from '../../support/twin-job.js';
import { promQuery, waitFor } from '../sim/support.js';

const suffix = `${process.pid.toString(16)}${Date.now().toString(16).slice(-6)}`;
const RUN_MINUTES = 80;
const jobs: string[] = [];

function sbatch(cluster: LocalClusterEnv, name: string, overrides: string[]): string {
  const id = sbatchTwin(cluster, name, overrides);
  jobs.push(id);
  return id;
}

describe('sequential decision on twin runs under Slurm', () => {
  let cluster: LocalClusterEnv;
  beforeAll(() => {
    cluster = requireCluster();
    requireTwinBundle();
  });
  afterAll(() => {
    for (const id of jobs) execFileSync('scancel', [id]);
  });

  it('decides a clearly worse candidate, and says to stop it, before a clearly better one is stable', async () => {
    // on twin-balanced: 8gpu_12rollouts ≈ 5.8 s/rollout (baseline), 2gpu ≈ 9.9 (worse), 8gpu_64rollouts ≈ 2.4 (better)
    const presets = { baseline: '8gpu_12rollouts', worse: '2gpu', better: '8gpu_64rollouts' } as const;
    const runs = Object.entries(presets).map(([role, preset]) => {
      // 8 rollouts per scene: no run finishes its scenes inside the test's window
      const overrides = [
        'deploy=twin-balanced',
        `topology=${preset}`,
        'driver=vavam',
        'runtime.simulation_config.n_rollouts=8',
      ];
      const name = `dec-${role}-${suffix}`;
      const { topology } = parseOverrides(overrides, { repoRoot, gpusPerNode: 8 });
      sbatch(cluster, name, overrides);
      return { role, name, inFlight: capacitySummary(topology).inFlight };
    });
    const S = cluster.timeScale;
    // each run's first sample; then each look waits only until every run has that many run-minutes
    // of metrics (plus a few seconds of scrapes), so the test ends at the look that settles both
    const starts = new Map<string, number>();
    await waitFor(
      'the first sample of every run',
      async () => {
        for (const r of runs) {
          if (starts.has(r.name)) continue;
          const q = await promQuery(
            cluster.prometheusUrl,
            `min_over_time(timestamp(sum(alpasim_rollouts_total{run_name="${r.name}"}))[30m:1s])`,
          );
          if (q.length) starts.set(r.name, Number(q[0]?.value[1]));
        }
        return runs.every((r) => starts.has(r.name)) ? true : undefined;
      },
      240_000,
      2000,
    );
    const lastStart = Math.max(...starts.values());
    const reach = async (minute: number) => {
      const due = (lastStart + (minute * 60) / S + 3) * 1000;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    };
    const prometheus = createPrometheusClient({ baseUrl: cluster.prometheusUrl });
    const judge = async (name: string, minute: number, inFlight: number): Promise<Verdict> => {
      const at = (starts.get(name) as number) + (minute * 60) / S;
      const res = await analyzeRun({
        prometheus,
        runName: name,
        timeScale: S,
        stepSeconds: 1,
        nowTs: at,
        atTs: at,
        minutes: 30,
        inFlight,
      });
      return res.analysis.observation.verdict;
    };
    const [baseline, worse, better] = runs as [(typeof runs)[0], (typeof runs)[0], (typeof runs)[0]];
    let decidedAt: number | undefined;
    let decision: Decision | null = null;
    let stableAt: number | undefined;
    for (let m = 10; m <= RUN_MINUTES && (decidedAt === undefined || stableAt === undefined); m += 5) {
      await reach(m);
      const bv = await judge(baseline.name, m, baseline.inFlight);
      if (decidedAt === undefined) {
        const wv = await judge(worse.name, m, worse.inFlight);
        decision = decideCandidate(
          wv,
          { name: 'baseline', verdict: bv },
          { minImprovement: 0.02, previous: decision },
        );
        if (decision.state !== 'measuring') decidedAt = m;
      }
      if (stableAt === undefined && (await judge(better.name, m, better.inFlight)).state === 'stable')
        stableAt = m;
    }
    expect(decision?.state, JSON.stringify(decision)).toBe('worse');
    expect(decidedAt).toBeDefined();
    expect(stableAt, 'the better candidate never became stable').toBeDefined();
    expect(decidedAt as number).toBeLessThan(stableAt as number);
    expect(decision?.relative_change?.low).toBeGreaterThan(0);
    expect(shouldStopOnDecision([decision as Decision], { stopWhenDecided: true }).stop).toBe(true);
    expect(shouldStopOnDecision([decision as Decision], { stopWhenDecided: false }).stop).toBe(false);
    // stopped at the decision, the rest of the wall time (03:59 less the start-up) is saved
    const g = gpuMinutes({
      gpus: 8,
      minutesRunning: (decidedAt as number) + 5,
      runEndMinutes: 239,
      stopped: true,
    });
    expect(g.saved).toBeGreaterThan(8 * 150);

    // the CLI decides the same way for runs launched by hand: `topo analyze <run> --against <run>`
    // as of the look that decided, both read from Prometheus as of that moment
    const at = (starts.get(worse.name) as number) + ((decidedAt as number) * 60) / S;
    const common = ['--prometheus', cluster.prometheusUrl, '--time-scale', String(S), '--step', '1'];
    const cli = await runTopo(
      [
        'analyze',
        worse.name,
        '--against',
        baseline.name,
        ...common,
        '--minutes',
        '30',
        '--at',
        String(at),
        '--json',
      ],
      repoRoot,
    );
    expect(cli.code, cli.stderr).toBe(0);
    const doc = JSON.parse(cli.stdout);
    expect(doc.observation.decision.state).toBe('worse');
    expect(doc.observation.decision.against).toBe(baseline.name);
    expect(doc.observation.decision.relative_change.low).toBeGreaterThan(0);
    const text = await runTopo(
      ['analyze', worse.name, '--against', baseline.name, ...common, '--minutes', '30', '--at', String(at)],
      repoRoot,
    );
    expect(text.stdout).toMatch(new RegExp(`^### 🔴 .*worse than \`${baseline.name}\` by \\d`, 'm'));
    // a run against itself, or a malformed name, is a usage error (exit 2) that names the option
    const self = await runTopo(['analyze', worse.name, '--against', worse.name, ...common], repoRoot);
    expect(self.code).toBe(2);
    expect(self.stderr).toMatch(/--against names the run itself/);
    const bad = await runTopo(['analyze', worse.name, '--against', 'a\u0001b', ...common], repoRoot);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--against: /);
  });
});
