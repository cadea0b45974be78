// Decide, don't only measure, on the real stack: three twin runs under the local Slurm, scraped by the
// local Prometheus, each judged every 5 run-minutes of the candidate through analyzeRun with
// `against` (THE path of `topo analyze <run> --against <run> --at`: one read of both runs as of one
// moment, one decision, the reference aged to the candidate's run age as the monitor ages it). A
// clearly worse candidate must be decided, and shouldStopOnDecision must say to cancel it, before a
// clearly better one is `stable`; and the CLI, asked about the deciding moment, gives that very
// decision (old main: the test decided the two runs' separate readings with decideCandidate, a path
// the CLI never takes, and the two disagreed at the deciding look).
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gpuMinutes, shouldStopOnDecision } from '../../../src/analysis/decision.js';
import { parseOverrides } from '../../../src/sim/overrides.js';
import { createPrometheusClient } from '../../../src/telemetry/prometheus.js';
import { capacitySummary } from '../../../src/topology/capacity.js';
import type { Decision } from '../../../src/types/generated/metrics.js';
import { type AnalyzeRunInput, analyzeRun } from '../../../src/usecases/analyze-run.js';
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
    const momentOf = (name: string, minute: number) => (starts.get(name) as number) + (minute * 60) / S;
    // a look waits until the clock reached its moments and Prometheus holds every run's samples up to
    // the latest of them, so a later read of a moment (the CLI's below) reads the very same data
    const reach = async (minute: number) => {
      const due = (lastStart + (minute * 60) / S + 3) * 1000;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      await waitFor(
        `every run's samples up to run-minute ${minute}`,
        async () => {
          for (const r of runs) {
            const q = await promQuery(
              cluster.prometheusUrl,
              `max(timestamp(alpasim_rollouts_total{run_name="${r.name}"}))`,
            );
            if (!(Number(q[0]?.value[1]) >= lastStart + (minute * 60) / S)) return undefined;
          }
          return true;
        },
        60_000,
        500,
      );
    };
    const prometheus = createPrometheusClient({ baseUrl: cluster.prometheusUrl });
    const read = (name: string, minute: number, inFlight: number, against?: string) => {
      const at = momentOf(name, minute);
      const input: AnalyzeRunInput = {
        prometheus,
        runName: name,
        timeScale: S,
        stepSeconds: 1,
        nowTs: at,
        atTs: at,
        minutes: 30,
        inFlight,
        ...(against ? { against } : {}),
      };
      return analyzeRun(input);
    };
    const [baseline, worse, better] = runs as [(typeof runs)[0], (typeof runs)[0], (typeof runs)[0]];
    let decidedAt: number | undefined;
    let decision: Decision | null = null;
    let stableAt: number | undefined;
    for (let m = 10; m <= RUN_MINUTES && (decidedAt === undefined || stableAt === undefined); m += 5) {
      await reach(m);
      if (decidedAt === undefined) {
        decision = (await read(worse.name, m, worse.inFlight, baseline.name)).judgement.decision;
        if (decision && decision.state !== 'measuring') decidedAt = m;
      }
      if (
        stableAt === undefined &&
        (await read(better.name, m, better.inFlight)).judgement.observation.verdict.state === 'stable'
      )
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
    const at = momentOf(worse.name, decidedAt as number);
    const common = ['--prometheus', cluster.prometheusUrl, '--time-scale', String(S), '--step', '1'];
    const asked = ['--minutes', '30', '--in-flight', String(worse.inFlight), '--at', String(at)];
    const cli = await runTopo(
      ['analyze', worse.name, '--against', baseline.name, ...common, ...asked, '--json'],
      repoRoot,
    );
    expect(cli.code, cli.stderr).toBe(0);
    const doc = JSON.parse(cli.stdout);
    expect(doc.observation.decision, JSON.stringify(doc.observation.decision)).toEqual(decision);
    expect(doc.observation.decision.state).toBe('worse');
    expect(doc.observation.decision.reference).toEqual({ role: 'run', name: baseline.name, pr: null });
    expect(doc.observation.decision.relative_change.low).toBeGreaterThan(0);
    const text = await runTopo(
      ['analyze', worse.name, '--against', baseline.name, ...common, ...asked],
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
