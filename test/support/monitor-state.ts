// Monitor pass states built in memory, for the stages' unit tests: an experiment, its candidates
// and jobs as `read` leaves them, runs analysed as `observe` leaves them, and ports that record
// every call (and fail the test on the ones a stage must not make).
import type { RunAnalysis } from '../../src/analysis/observe.js';
import type {
  MonitorCandidate,
  MonitorExperiment,
  MonitorJob,
  MonitorPorts,
} from '../../src/monitor/ports.js';
import { candidatePass, clockOf, experimentPass, jobsByRunName } from '../../src/monitor/read.js';
import {
  type ExperimentPass,
  newPassState,
  type PassOptions,
  type PassState,
} from '../../src/monitor/state.js';
import type { Experiment } from '../../src/types/generated/experiment.js';
import type { Interval, Verdict } from '../../src/types/generated/metrics.js';
import { EXPERIMENT_ID, T0 } from './monitor-fakes.js';

export { EXPERIMENT_ID, requestedCandidate, T0 } from './monitor-fakes.js';

/** Now in the stage tests: 200 s after T0. */
export const NOW = T0 + 200;

/** A recorded baseline at 3.6 s per rollout (±0.05). */
export const BASELINE: NonNullable<MonitorExperiment['baseline']> = {
  name: 'baseline',
  value: { value: 3.6, low: 3.55, high: 3.65 },
};

export function experimentOf(
  candidates: MonitorCandidate[],
  over: Partial<Experiment> = {},
  refs: Pick<MonitorExperiment, 'baseline' | 'best'> = {},
): MonitorExperiment {
  return {
    experiment: {
      experiment_id: EXPERIMENT_ID,
      cluster: 'local',
      base_topology: '8gpu_64rollouts',
      fixed_inputs: { deploy: 'twin-balanced', driver: 'vam', slurm: { time: '04:00:00' } },
      max_parallel: 3,
      ...over,
    },
    timeScale: 60,
    scrapeSeconds: 1,
    ...refs,
    candidates,
  };
}

/** A RUNNING job of `runName` started `ago` seconds before NOW. */
export function runningJob(runName: string, jobId: string, ago = 60): MonitorJob {
  return {
    jobId,
    name: runName,
    state: 'RUNNING',
    status: 'running',
    submitTs: NOW - ago - 10,
    startTs: NOW - ago,
    held: { seconds: ago, gpuMinutes: null },
  };
}

/** The state `read` leaves for these experiments and jobs (as of NOW, tick 5 s, no lag). */
export function readState(
  experiments: Array<{ exp: MonitorExperiment; jobs?: MonitorJob[] }>,
  options: PassOptions = { tickSeconds: 5, lagSeconds: 0 },
): PassState {
  const state = newPassState(options);
  state.experiments = experiments.map(({ exp, jobs = [] }) => {
    const e = experimentPass(exp, clockOf(exp, options, NOW));
    e.jobs = jobs;
    const byRun = jobsByRunName(jobs);
    e.candidates = exp.candidates.map((c) => candidatePass(c, byRun.get(c.runName)));
    return e;
  });
  return state;
}

/** A run's analysis as `observe` leaves it: a verdict with a projection, `minutes` of data. */
export function analysisOf(
  runName: string,
  verdict: Partial<Verdict> & { projected_full_run?: Interval },
  minutes = 30,
): RunAnalysis {
  return {
    observation: {
      run_name: runName,
      verdict: { state: 'stabilising', evidence: [], minutes_of_data: minutes, ...verdict } as Verdict,
      stable_metrics: {},
    },
    startTs: NOW - 50,
    lastTs: NOW,
    chart: { fullRun: [], rate5m: [] },
    opportunities: [],
  };
}

/** Marks every judged candidate of `e` observed (no comment yet), with the given analyses by candidate. */
export function observeWith(e: ExperimentPass, analyses: Record<string, RunAnalysis> = {}): void {
  for (const p of e.candidates.filter((x) => x.inPass))
    p.observed = { analysis: analyses[p.c.candidate], ended: false };
}

export interface Call {
  port: string;
  args: unknown[];
}

/**
 * Ports that record each call in `calls`; `over` replaces any of them. The ones not given for a
 * stage that must not use them can be made to throw with `forbid`.
 */
export function recordingPorts(
  over: Partial<Omit<MonitorPorts, 'slurm' | 'github' | 'lifecycle'>> & {
    slurm?: Partial<MonitorPorts['slurm']>;
    github?: Partial<MonitorPorts['github']>;
  } = {},
  forbid = false,
): MonitorPorts & { calls: Call[] } {
  const calls: Call[] = [];
  const rec =
    <A extends unknown[], R>(port: string, answer: (...args: A) => R) =>
    (...args: A): R => {
      if (forbid) throw new Error(`this stage may not call ${port}`);
      calls.push({ port, args });
      return answer(...args);
    };
  return {
    calls,
    experiments: rec('experiments', over.experiments ?? (async () => [])),
    slurm: {
      jobs: rec('slurm.jobs', over.slurm?.jobs ?? (async () => [])),
      cancel: rec('slurm.cancel', over.slurm?.cancel ?? (async () => {})),
    },
    submit: rec('submit', over.submit ?? (async () => undefined)),
    prometheus: {
      baseUrl: 'http://prometheus.test',
      instant: rec(
        'prometheus.instant',
        over.prometheus?.instant ?? (async () => Promise.reject(new Error('no'))),
      ),
      range: rec('prometheus.range', over.prometheus?.range ?? (async () => Promise.reject(new Error('no')))),
    },
    github: {
      readComment: rec('github.readComment', over.github?.readComment ?? (async () => undefined)),
      writeComment: rec('github.writeComment', over.github?.writeComment ?? (async () => {})),
      writeCheck: rec('github.writeCheck', over.github?.writeCheck ?? (async () => {})),
      setLabel: rec('github.setLabel', over.github?.setLabel ?? (async () => true)),
    },
    lifecycle: {
      recordRun: rec('lifecycle.recordRun', async () => {}),
      recordOutcome: rec('lifecycle.recordOutcome', async () => {}),
    },
    now: () => NOW,
  };
}

/** The ports called, in order (`slurm.cancel 12`, `submit alpha`, `github.writeComment #3 alpha`, …). */
export function callLog(calls: readonly Call[]): string[] {
  return calls.map(({ port, args }) => {
    if (port === 'submit') return `submit ${(args[1] as MonitorCandidate).candidate}`;
    if (port === 'github.readComment' || port === 'github.writeComment')
      return `${port} #${args[0]} ${args[1]}`;
    if (port.startsWith('github.') || port.startsWith('lifecycle.')) return `${port} #${args[0]}`;
    return `${port} ${args[0] ?? ''}`.trim();
  });
}
