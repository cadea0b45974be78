import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Cleanup } from '../../../src/demo/cleanup.js';
import { LiveView } from '../../../src/demo/live-view.js';
import { DemoOutput } from '../../../src/demo/output.js';
import {
  type ClusterEnv,
  type DemoOptions,
  type DemoOutcome,
  type DemoParts,
  decide,
  INSTALL_COMMAND,
  oneWinner,
  runDemo,
} from '../../../src/demo/run.js';
import type { Candidate } from '../../../src/types/generated/candidate.js';
import type { CandidateObservation } from '../../../src/types/generated/metrics.js';

const env: ClusterEnv = {
  stateDir: '/s',
  clustersFile: '/s/clusters.yaml',
  fileSdDir: '/s/file-sd',
  prometheusUrl: 'http://127.0.0.1:9093',
  timeScale: 60,
  runDir: '/s/runs',
};

const observation = (
  name: string,
  value: number,
  state: 'stable' | 'warming' = 'stable',
): CandidateObservation => ({
  run_name: `topo-x-${name}-00000000`,
  verdict: { state, value: { value, low: value - 0.1, high: value + 0.1 }, evidence: ['test'] },
  stable_metrics: { seconds_per_rollout_full_run: value },
});

interface FakeLog {
  calls: string[];
}

// In-memory parts: baseline measures 40 s/rollout, candidate "c1" 35, "c2" 45; each needs three looks.
function fakeParts(log: FakeLog, clusterUp: boolean): DemoParts<{ runs: DemoOutcome[] }> {
  const looks = new Map<string, number>();
  const values: Record<string, number> = { baseline: 40, c1: 35, c2: 45 };
  let up = clusterUp;
  return {
    cluster: {
      status: async () => (up ? env : null),
      anyRunning: async () => up || log.calls.includes('partly running'),
      up: async () => {
        log.calls.push('cluster up');
        up = true;
        return env;
      },
      down: async () => {
        log.calls.push('cluster down');
        up = false;
      },
    },
    prepare: async () => ({
      experiment: {
        experiment_id: 'topology-opt-vavam-local-20261202',
        cluster: 'local',
        base_topology: '8gpu_64rollouts',
        fixed_inputs: { deploy: 'twin-balanced', driver: 'vavam' },
      },
      baseline: { name: 'baseline', topology: {} },
    }),
    submit: async (_e, candidate) => {
      log.calls.push(`submit ${candidate.name}`);
      return { candidate, runName: `topo-x-${candidate.name}-00000000`, jobId: String(log.calls.length) };
    },
    cancel: async (run) => {
      log.calls.push(`cancel ${run.candidate.name}`);
    },
    observe: async (_e, runs) =>
      runs.map((run) => {
        const n = (looks.get(run.candidate.name) ?? 0) + 1;
        looks.set(run.candidate.name, n);
        const value = values[run.candidate.name] ?? 50;
        const done = n >= 3;
        return {
          state: done ? 'stable' : 'warming',
          simulatedMinutes: n * 10,
          secondsPerRollout: value + 1,
          observation: done ? observation(run.candidate.name, value) : null,
          comment: `## ${run.candidate.name}\n\n\`\`\`mermaid\nxychart-beta\n  line [1, 2]\n\`\`\`\n`,
          done,
        };
      }),
    createRecord: () => ({ runs: [] }),
    apply: (record, outcome) => ({
      runs: [...record.runs.filter((r) => r.candidate.name !== outcome.candidate.name), outcome],
    }),
    recordJson: (record) => JSON.stringify(record.runs.map((r) => [r.candidate.name, r.decision])),
    recordMarkdown: (record) =>
      `# Record\n\n${record.runs.map((r) => `- ${r.candidate.name}: ${r.decision}`).join('\n')}\n`,
    suggest: async (_r, _p, count) => ({
      proposals: (['c1', 'c2'] as const)
        .slice(0, count)
        .map((name): Candidate => ({ name, parent: 'baseline', topology: {} })),
    }),
    finalReport: (record) =>
      `# Final report\n\nbest: ${record.runs.find((r) => r.decision === 'accepted' && r.candidate.name !== 'baseline')?.candidate.name}\n`,
  };
}

function options(over: Partial<DemoOptions> = {}): DemoOptions {
  const dir = mkdtempSync(join(tmpdir(), 'demo-unit-'));
  const script = join(dir, 'mermaid.min.js');
  writeFileSync(script, '/* mermaid */');
  return {
    command: 'sbatch submit.sh deploy=twin-balanced topology=8gpu_64rollouts driver=vavam',
    rounds: 1,
    perRound: 3,
    maxSimulatedMinutes: 120,
    pollSeconds: 0,
    dateStamp: '20261202',
    isRoot: true,
    mermaidScript: script,
    ...over,
  };
}

function harness(clusterUp: boolean) {
  const log: FakeLog = { calls: [] };
  let text = '';
  const out = new DemoOutput(mkdtempSync(join(tmpdir(), 'demo-out-')));
  return {
    log,
    out,
    text: () => text,
    deps: (signal = new AbortController().signal) => ({
      parts: fakeParts(log, clusterUp),
      view: new LiveView((t) => {
        text += t;
      }, false),
      output: out,
      cleanup: new Cleanup(),
      signal,
    }),
  };
}

describe('runDemo', () => {
  it('runs the baseline and a round, records every outcome and writes every artifact', async () => {
    const h = harness(true);
    const result = await runDemo(options(), h.deps());
    expect(result.exitCode).toBe(0);
    expect(result.outcomes.map((o) => [o.candidate.name, o.decision])).toEqual([
      ['baseline', 'accepted'],
      ['c1', 'accepted'],
      ['c2', 'rejected'],
    ]);
    // Each judged job is cancelled once; the cluster that was already up stays up.
    expect(h.log.calls).toEqual([
      'submit baseline',
      'cancel baseline',
      'submit c1',
      'submit c2',
      'cancel c1',
      'cancel c2',
    ]);
    const files = result.files;
    for (const f of [
      'topologies/topology-opt-vavam-local-20261202/experiment.yaml',
      'topologies/topology-opt-vavam-local-20261202/baseline.yaml',
      'topologies/topology-opt-vavam-local-20261202/c1.yaml',
      'comments/baseline.md',
      'comments/c2.md',
      'experiments/topology-opt-vavam-local-20261202.json',
      'experiments/topology-opt-vavam-local-20261202.md',
      'experiments/topology-opt-vavam-local-20261202-report.md',
      'mermaid.min.js',
      'index.html',
    ]) {
      expect(files).toContain(f);
    }
    const html = readFileSync(join(h.out.dir, 'index.html'), 'utf8');
    expect(html).toContain('<section id="comment-c1">');
    expect(html).toContain('<pre class="mermaid">');
    expect(
      readFileSync(join(h.out.dir, 'experiments/topology-opt-vavam-local-20261202-report.md'), 'utf8'),
    ).toContain('best: c1');
    expect(h.text()).toContain('c2: rejected — 45.00 s/rollout is not better than baseline (40.00)');
  });

  it('brings the cluster up as root and takes it down at the end', async () => {
    const h = harness(false);
    const result = await runDemo(options({ rounds: 0 }), h.deps());
    expect(result.exitCode).toBe(0);
    expect(h.log.calls[0]).toBe('cluster up');
    expect(h.log.calls.at(-1)).toBe('cluster down');
  });

  it('completes a partly running cluster but leaves it running afterwards', async () => {
    const h = harness(false);
    h.log.calls.push('partly running');
    const result = await runDemo(options({ rounds: 0 }), h.deps());
    expect(result.exitCode).toBe(0);
    expect(h.log.calls).toContain('cluster up');
    expect(h.log.calls).not.toContain('cluster down');
    expect(h.text()).toContain('stays up afterwards');
  });

  it('stops at once without root when the cluster is down, printing the install command', async () => {
    const h = harness(false);
    const result = await runDemo(options({ isRoot: false }), h.deps());
    expect(result.exitCode).toBe(1);
    expect(h.log.calls).toEqual([]);
    expect(h.text()).toContain(INSTALL_COMMAND);
  });

  it('on an interruption cancels the running jobs and the cluster it started, exit 130', async () => {
    const h = harness(false);
    const abort = new AbortController();
    const deps = h.deps(abort.signal);
    const observe = deps.parts.observe;
    deps.parts.observe = async (...args) => {
      abort.abort('SIGINT');
      return observe(...args);
    };
    const result = await runDemo(options({ pollSeconds: 5 }), deps);
    expect(result.exitCode).toBe(130);
    expect(h.log.calls).toEqual(['cluster up', 'submit baseline', 'cancel baseline', 'cluster down']);
  });
});

describe('decide', () => {
  const best = { name: 'baseline', observation: observation('baseline', 40) };
  it('accepts the baseline and a faster candidate, rejects a slower one', () => {
    expect(decide(observation('baseline', 40), null, true).decision).toBe('accepted');
    expect(decide(observation('c1', 35), best, true).decision).toBe('accepted');
    expect(decide(observation('c2', 41), best, true).decision).toBe('rejected');
  });
  it('follows the detector comparison when there is one', () => {
    const o = {
      ...observation('c1', 39.9),
      comparison: { against: 'baseline', outcome: 'indistinguishable' as const },
    };
    expect(decide(o, best, true)).toEqual({
      decision: 'rejected',
      reason: '39.90 s/rollout is indistinguishable from baseline (40.00)',
    });
  });
  it('fails a crashed run and stops one without a verdict', () => {
    const crashed = {
      ...observation('c3', 40),
      failure: { kind: 'gpu-oom' as const, message: 'CUDA out of memory on GPU 4' },
    };
    expect(decide(crashed, best, true)).toEqual({
      decision: 'failed',
      reason: 'gpu-oom: CUDA out of memory on GPU 4',
    });
    expect(decide(observation('c4', 40, 'warming'), best, false).decision).toBe('stopped');
  });
});

describe('oneWinner', () => {
  const outcome = (name: string, value: number, decision: DemoOutcome['decision']): DemoOutcome => ({
    candidate: { name, topology: {} },
    run: { candidate: { name, topology: {} }, runName: `topo-x-${name}-0`, jobId: '1' },
    observation: observation(name, value),
    decision,
    reason: `${value} beats baseline`,
  });
  it('keeps only the fastest of several accepted candidates of one round', () => {
    const result = oneWinner([
      outcome('a', 10.3, 'accepted'),
      outcome('b', 9.8, 'accepted'),
      outcome('c', 11, 'rejected'),
    ]);
    expect(result.map((o) => o.decision)).toEqual(['rejected', 'accepted', 'rejected']);
    expect(result[0]?.reason).toBe('10.3 beats baseline, but b of the same round is faster (9.80 s/rollout)');
  });
  it('leaves a round with one accepted candidate as it is', () => {
    const batch = [outcome('a', 10.3, 'accepted'), outcome('c', 11, 'rejected')];
    expect(oneWinner(batch)).toEqual(batch);
  });
});

describe('decide without a stable interval', () => {
  const best = { name: 'baseline', observation: observation('baseline', 40) }; // interval 39.9–40.1
  const ended = (value: number): CandidateObservation => ({
    run_name: 'topo-x-c-0',
    verdict: { state: 'stabilising', evidence: [] },
    stable_metrics: { seconds_per_rollout_full_run: value },
    comparison: { against: 'baseline', outcome: 'not-comparable' },
  });
  it('accepts a finished run only below the lower bound of the best interval', () => {
    expect(decide(ended(39.5), best, true)).toEqual({
      decision: 'accepted',
      reason: '39.50 s/rollout beats baseline (40.00), below its interval (no stable verdict of its own)',
    });
    expect(decide(ended(39.95), best, true).decision).toBe('rejected');
  });
});
