import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Cleanup } from '../../../src/demo/cleanup.js';
import { LiveView } from '../../../src/demo/live-view.js';
import { DemoOutput } from '../../../src/demo/output.js';
import {
  bestLine,
  type ClusterEnv,
  causeLine,
  type DemoOptions,
  type DemoOutcome,
  type DemoParts,
  type DemoReference,
  decide,
  INSTALL_COMMAND,
  judgedValue,
  oneWinner,
  runDemo,
} from '../../../src/demo/run.js';
import type { Standing } from '../../../src/report/standing.js';
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
  /** The current best each look of the monitor was given. */
  references?: (string | null)[];
}

// In-memory parts: baseline measures 40 s/rollout, candidate "c1" 35, "c2" 45; each needs three looks.
function fakeParts(
  log: FakeLog,
  clusterUp: boolean,
): DemoParts<{ runs: DemoOutcome[]; references?: DemoReference[] }> {
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
    submit: async (_e, candidate, _env, role) => {
      const what = role ? ` (${role})` : '';
      log.calls.push(`submit ${candidate.name}${what}`);
      const runName = `topo-x-${candidate.name}-00000000${role ? '-0000beef' : ''}`;
      return { candidate, runName, jobId: String(log.calls.length), ...(role ? { role } : {}) };
    },
    cancel: async (run) => {
      log.calls.push(`cancel ${run.candidate.name}${run.role ? ` (${run.role})` : ''}`);
    },
    observe: async (_e, runs, _env, reference) =>
      runs.map((run) => {
        if (run.role) {
          // the round's reference job: it runs until the monitor (or the round's end) stops it
          const n = (looks.get(run.runName) ?? 0) + 1;
          looks.set(run.runName, n);
          const look = {
            state: 'running',
            simulatedMinutes: n * 10,
            secondsPerRollout: 40,
            observation: null,
          };
          return {
            ...look,
            comment: `## ${run.candidate.name} (reference)\n`,
            done: false,
            standing: null,
            check: null,
            label: null,
          };
        }
        log.references?.push(reference.current);
        const n = (looks.get(run.candidate.name) ?? 0) + 1;
        looks.set(run.candidate.name, n);
        const beside = runs.find((r) => r.role);
        const value = values[run.candidate.name] ?? 50;
        const done = n >= 3;
        const standing = !done
          ? null
          : run.candidate.name === 'baseline'
            ? ({ outcome: 'reference', minImprovement: 0.02 } as const)
            : ({
                outcome: value < 40 ? 'better' : 'worse',
                against: 'the baseline',
                change: { value: value / 40 - 1, low: value / 40 - 1.01, high: value / 40 - 0.99 },
                minImprovement: 0.02,
              } as const);
        return {
          state: done ? 'stopped' : 'warming',
          simulatedMinutes: n * 10,
          secondsPerRollout: value + 1,
          observation: done ? observation(run.candidate.name, value) : null,
          comment: `## ${run.candidate.name}\n\n\`\`\`mermaid\nxychart-beta\n  line [1, 2]\n\`\`\`\n`,
          done,
          standing,
          check: null,
          label: null,
          referenceJob: beside
            ? {
                name: 'the baseline `baseline`',
                run: {
                  runName: beside.runName,
                  pr: 1,
                  jobId: beside.jobId,
                  state: 'RUNNING',
                  grafanaUrl: null,
                  gpuMinutes: 80 * n,
                  stopping: done ? 'reference no longer needed: no open decision is left' : null,
                },
                note: null,
              }
            : null,
        };
      }),
    jobLog: async (run) => {
      log.calls.push(`log ${run.candidate.name}`);
      return ['twin: starting', 'twin: cannot read /s/twin.env: No such file or directory', 'twin: exiting'];
    },
    createRecord: () => ({ runs: [] }),
    // the fake record's best: the last accepted outcome (the real one is src/record/best.ts)
    references: (record) => {
      const ref = (o: DemoOutcome | undefined) => {
        const value = o?.observation?.verdict?.value;
        return o && value ? { name: o.candidate.name, value } : null;
      };
      const best = record.runs.filter((r) => r.decision === 'accepted').at(-1);
      return {
        baseline: ref(record.runs.find((r) => r.candidate.name === 'baseline')),
        best: ref(best),
        current: best?.candidate.name ?? null,
      };
    },
    apply: (record, outcome) => ({
      ...record,
      runs: [...record.runs.filter((r) => r.candidate.name !== outcome.candidate.name), outcome],
    }),
    applyReference: (record, reference) => ({
      ...record,
      references: [...(record.references ?? []), reference],
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
    // the round's reference job (a run of the current best) is submitted first and cancelled last
    expect(h.log.calls).toEqual([
      'submit baseline',
      'cancel baseline',
      'submit baseline (reference)',
      'submit c1',
      'submit c2',
      'cancel c1',
      'cancel c2',
      'cancel baseline (reference)',
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
    // the terminal words the decision as the check run's title (the monitor's standing)
    expect(h.text()).toContain('c2: rejected — Worse than the baseline by 12.5%');
    expect(h.text()).toContain('c1: accepted — Better than the baseline by 12.5%');
    expect(h.text()).toContain(
      'baseline: accepted — Reference run (baseline or current best): 40.00 s/rollout',
    );
  });

  it('runs each round beside a reference job of the current best, records it and prints its cost (issue 38 item 1)', async () => {
    const h = harness(true);
    const result = await runDemo(options(), h.deps());
    expect(result.exitCode).toBe(0);
    expect(result.references).toHaveLength(1);
    const [ref] = result.references;
    expect(ref).toMatchObject({
      round: 1,
      run: {
        candidate: { name: 'baseline' },
        runName: 'topo-x-baseline-00000000-0000beef',
        role: 'reference',
      },
      runMinutes: 30,
      gpuMinutes: 240,
      ended: 'decided',
      stopped: 'reference no longer needed: no open decision is left',
      candidates: ['c1', 'c2'],
    });
    expect(h.text()).toContain(
      'round 1: reference job topo-x-baseline-00000000-0000beef (the current best baseline beside c1, c2): 30 run-minutes, 240 GPU-minutes; stopped by the monitor: reference no longer needed: no open decision is left',
    );
    expect(h.text()).toMatch(
      /round 1: 240 GPU-minutes \(candidates 0, reference job 240\); run-minutes: c1 \?, c2 \?/,
    );
    expect(h.text()).toMatch(/baseline: 0 GPU-minutes \(candidates 0\); run-minutes: baseline \?/);
    expect(result.files).toContain('comments/reference-round-1.md');
    // the live view shows it as a row of its own
    expect(h.text()).toContain('baseline (reference): running');
  });

  it("decides each batch against the record's current best and prints it after each batch (one truth)", async () => {
    const h = harness(true);
    h.log.references = [];
    const result = await runDemo(options(), h.deps());
    expect(result.exitCode).toBe(0);
    // three looks at the baseline with no best yet, then three at c1 and c2 against the baseline
    expect(h.log.references).toEqual([null, null, null, ...Array(6).fill('baseline')]);
    expect(h.text()).toContain(
      'current best: baseline (40.00 s/rollout); no candidate beat the baseline so far',
    );
    expect(h.text()).toContain('current best: c1 (35.00 s/rollout)');
    expect(bestLine({ baseline: null, best: null, current: null }, 'baseline')).toBe(
      'current best: none yet (no accepted run with a value)',
    );
  });

  it("shows a decided candidate at its judgement's figure, not its reading or projection (issue 39 item 6)", () => {
    // old main: "9.16 s/rollout, verdict: better (8.90 s)" beside a decision that says 8.24
    const observation: CandidateObservation = {
      run_name: 'topo-x-c1-12345678-0000abcd',
      verdict: {
        state: 'stabilising',
        evidence: [],
        current_full_run: 9.16,
        projected_full_run: { value: 8.9, low: 8.5, high: 9.3 },
      },
      stable_metrics: { seconds_per_rollout_full_run: 9.16 },
      decision: {
        state: 'better',
        reference: { role: 'baseline', name: 'baseline', pr: null },
        min_improvement: 0.02,
        evidence: [],
        relative_change: { value: -0.176, low: -0.22, high: -0.13 },
        figure: { value: 8.24, low: 7.8, high: 8.7, reference_value: 10 },
      },
    };
    expect(judgedValue(observation)).toBe(8.24);
    const { decision: _, ...measuring } = observation;
    expect(judgedValue(measuring)).toBe(8.9);
    expect(judgedValue(null)).toBeNull();
  });

  it('a baseline without telemetry ends the demo non-zero, naming the job log line, never GPU memory (issue 24)', async () => {
    const h = harness(true);
    const deps = h.deps();
    deps.parts.observe = async (_e, runs) =>
      runs.map((run) => ({
        state: 'failed',
        simulatedMinutes: 30,
        secondsPerRollout: null,
        observation: {
          run_name: run.runName,
          stable_metrics: {},
          failure: {
            kind: 'no-telemetry',
            message: 'no metrics for run_name="x" 30 run-minutes after the job started',
          },
        } as CandidateObservation,
        comment: '## failed\n',
        done: true,
        standing: { outcome: 'failed', reason: 'no-telemetry: no metrics', minImprovement: 0.02 } as Standing,
        check: null,
        label: null,
      }));
    const suggest = deps.parts.suggest;
    deps.parts.suggest = async (...args) => {
      h.log.calls.push('suggest');
      return suggest(...args);
    };
    const result = await runDemo(options(), deps);
    expect(result.exitCode).toBe(1);
    expect(result.outcomes.map((o) => [o.candidate.name, o.decision])).toEqual([['baseline', 'failed']]);
    expect(h.log.calls).not.toContain('suggest');
    expect(h.log.calls).toContain('log baseline');
    expect(h.text()).toContain(
      'the demo measured nothing: baseline failed (no-telemetry: no metrics for run_name="x" 30 run-minutes after the job started); the log of Slurm job 1 says: twin: cannot read /s/twin.env: No such file or directory',
    );
    expect(h.text()).not.toMatch(/GPU memory|smaller preset/i);
  });

  it('a baseline out of GPU memory goes on to the suggester, which sizes around it', async () => {
    const h = harness(true);
    const deps = h.deps();
    const observe = deps.parts.observe;
    deps.parts.observe = async (e, runs, ...rest) => {
      if (runs[0]?.candidate.name !== 'baseline') return observe(e, runs, ...rest);
      return runs.map((run) => ({
        state: 'failed',
        simulatedMinutes: 5,
        secondsPerRollout: null,
        observation: {
          run_name: run.runName,
          stable_metrics: {},
          failure: { kind: 'gpu-oom', message: 'CUDA out of memory' },
        } as CandidateObservation,
        comment: '## failed\n',
        done: true,
        standing: {
          outcome: 'failed',
          reason: 'gpu-oom: CUDA out of memory',
          minImprovement: 0.02,
        } as Standing,
        check: null,
        label: null,
      }));
    };
    const result = await runDemo(options(), deps);
    expect(result.outcomes[0]?.decision).toBe('failed');
    expect(result.outcomes.map((o) => o.candidate.name)).toContain('c1');
    expect(h.log.calls).not.toContain('log baseline');
  });

  it('names the log line that states a cause, else the last one', () => {
    expect(causeLine(['a', 'Error: boom', 'b', ''])).toBe('Error: boom');
    expect(causeLine(['a', 'last', '  '])).toBe('last');
    expect(causeLine([])).toBeNull();
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

  it('an interruption during a round cancels its reference job too', async () => {
    const h = harness(true);
    const abort = new AbortController();
    const deps = h.deps(abort.signal);
    const observe = deps.parts.observe;
    deps.parts.observe = async (...args) => {
      if (args[1].some((r) => r.role)) abort.abort('SIGINT');
      return observe(...args);
    };
    const result = await runDemo(options({ pollSeconds: 5 }), deps);
    expect(result.exitCode).toBe(130);
    expect(h.log.calls).toContain('cancel baseline (reference)');
    expect(h.log.calls.filter((c) => c.startsWith('cancel c')).sort()).toEqual(['cancel c1', 'cancel c2']);
  });
});

describe('decide: the monitor’s standing, never a rule of its own', () => {
  const standing = (outcome: Standing['outcome']): Standing => ({
    outcome,
    against: 'the baseline',
    change: { value: -0.081, low: -0.1, high: -0.06 },
    minImprovement: 0.02,
    reason: 'the run ended before a decision',
  });
  it('accepts the reference and a candidate decided better, worded as the check title', () => {
    expect(decide(standing('reference'), observation('baseline', 40))).toEqual({
      decision: 'accepted',
      reason: 'Reference run (baseline or current best): 40.00 s/rollout',
    });
    expect(decide(standing('better'), observation('c1', 35))).toEqual({
      decision: 'accepted',
      reason: 'Better than the baseline by 8.1%',
    });
  });
  it('rejects worse, not-better and equivalent; fails a failed run', () => {
    for (const o of ['worse', 'not-better', 'equivalent'] as const)
      expect(decide(standing(o), observation('c', 40)).decision).toBe('rejected');
    expect(decide({ ...standing('failed'), reason: 'gpu-oom: CUDA out of memory' }, null)).toEqual({
      decision: 'failed',
      reason: 'Failed: gpu-oom: CUDA out of memory',
    });
  });
  it('a run that ended without a decision is stopped, never accepted by an interval rule (issue 25)', () => {
    // the old demo accepted a stable run whose value fell below the baseline's interval, while its
    // pull request's comment said it ended without a decision
    expect(decide(standing('undecided'), observation('c', 30))).toEqual({
      decision: 'stopped',
      reason: 'Ended without a decision (the run ended before a decision)',
    });
    expect(decide(null, null).decision).toBe('stopped');
  });
});

describe('oneWinner', () => {
  const outcome = (
    name: string,
    value: number,
    decision: DemoOutcome['decision'],
    change = value / 11 - 1,
  ): DemoOutcome => ({
    candidate: { name, topology: {} },
    run: { candidate: { name, topology: {} }, runName: `topo-x-${name}-0`, jobId: '1' },
    observation: {
      ...observation(name, value),
      decision: {
        state: decision === 'accepted' ? 'better' : 'worse',
        reference: { role: 'baseline', name: 'baseline', pr: null },
        relative_change: { value: change, low: change - 0.02, high: change + 0.02 },
        min_improvement: 0.02,
        evidence: [],
      },
    },
    decision,
    reason: `${value} beats baseline`,
  });
  it('keeps only the fastest of several accepted candidates of one round, by their decided change', () => {
    const result = oneWinner([
      outcome('a', 9.7, 'accepted', -0.06),
      outcome('b', 9.8, 'accepted', -0.09),
      outcome('c', 11, 'rejected'),
    ]);
    // b's own value is higher, but its decision says it is the faster one
    expect(result.map((o) => o.decision)).toEqual(['rejected', 'accepted', 'rejected']);
    expect(result[0]?.reason).toBe(
      '9.7 beats baseline, but b of the same round is faster (decided 9.0% faster than the same reference)',
    );
  });
  it('leaves a round with one accepted candidate as it is', () => {
    const batch = [outcome('a', 10.3, 'accepted'), outcome('c', 11, 'rejected')];
    expect(oneWinner(batch)).toEqual(batch);
  });
});
