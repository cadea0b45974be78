// In-memory ports for the monitor pass's unit tests and benchmark: a GitHub that stores comments,
// checks and labels and counts calls, a Slurm with jobs, and a Prometheus that serves synthetic traces.
import type { RunRequest } from '../../src/lifecycle/model.js';
import type {
  LabelState,
  MonitorCandidate,
  MonitorCheck,
  MonitorExperiment,
  MonitorJob,
  MonitorPorts,
} from '../../src/monitor/ports.js';
import type { PrometheusClient, PromResult, PromSeries } from '../../src/telemetry/prometheus.js';
import {
  anyRunSelector,
  QUANTITIES,
  type Quantity,
  queryCatalog,
  runSelector,
} from '../../src/telemetry/queries.js';
import { simulateTrace, type Trace, type TraceProfile } from '../fixtures/traces/synthetic.js';

export interface Counters {
  githubReads: number;
  githubWrites: number;
  slurmCalls: number;
  prometheusQueries: number;
  submits: number;
  cancels: number;
}

export interface FakeWorld {
  ports: MonitorPorts;
  counters: Counters;
  /** The comment last written on each pull request (of its only candidate, in most tests). */
  comments: Map<number, string>;
  /** Each candidate's own comment, by `<pr>/<candidate>`: what the monitor reads back. */
  candidateComments: Map<string, string>;
  checks: Map<number, MonitorCheck>;
  /** Every check run write, in order. */
  checkWrites: Array<{ pr: number; headSha: string; check: MonitorCheck }>;
  /** Every state label write that changed something, in order. */
  labelWrites: Array<{ pr: number; state: LabelState | null }>;
  labels: Map<number, string[]>;
  jobs: MonitorJob[];
  setNow(ts: number): void;
  /** run_name → trace and the unix time of its run-minute 0. */
  traces: Map<string, { trace: Trace; ts0: number }>;
}

/** The experiment, head commit and epoch of the lifecycle tests' candidates. */
export const T0 = 1_800_000_000;
export const EXPERIMENT_ID = 'topology-opt-vam-local-20260101';
export const HEAD_SHA = 'a'.repeat(40);

/**
 * A candidate of pull request `pr` with a standing Request written at T0 + pr (run label
 * `0000000<pr>`), at the head commit HEAD_SHA.
 */
export function requestedCandidate(
  name: string,
  pr: number,
  over: Partial<MonitorCandidate> = {},
): MonitorCandidate {
  const id = `0000000${pr}`;
  const request: RunRequest = {
    id,
    experiment: EXPERIMENT_ID,
    candidate: name,
    path: `topologies/${EXPERIMENT_ID}/${name}.yaml`,
    pr,
    headSha: HEAD_SHA,
    topologyHash: '0123abcd',
    runName: `topo-${EXPERIMENT_ID}-${name}-0123abcd-${id}`,
    login: 'alice',
    requestedAt: new Date((T0 + pr) * 1000).toISOString(),
  };
  return {
    candidate: name,
    runName: request.runName,
    pr,
    headSha: HEAD_SHA,
    currentHeadSha: HEAD_SHA,
    labels: [],
    requested: false,
    requestedAt: Date.parse(request.requestedAt),
    request,
    ...over,
  };
}

const EMPTY: PromResult = { resultType: 'matrix', series: [], empty: true, nonFinite: 0, warnings: [] };

export function fakeWorld(
  experiments: MonitorExperiment[],
  opts: { now: number; timeScale: number },
): FakeWorld {
  const counters: Counters = {
    githubReads: 0,
    githubWrites: 0,
    slurmCalls: 0,
    prometheusQueries: 0,
    submits: 0,
    cancels: 0,
  };
  const comments = new Map<number, string>();
  const candidateComments = new Map<string, string>();
  const checks = new Map<number, MonitorCheck>();
  const checkWrites: FakeWorld['checkWrites'] = [];
  const labelWrites: FakeWorld['labelWrites'] = [];
  const labels = new Map<number, string[]>();
  const jobs: MonitorJob[] = [];
  const traces = new Map<string, { trace: Trace; ts0: number }>();
  let now = opts.now;
  let nextJob = 1000;

  // a query of the experiment's runs, or of one run (`topo analyze`, the record: `only`)
  const quantityOf = (q: string): { quantity?: Quantity; only?: string } => {
    for (const exp of experiments) {
      const sel = `run_name=~"topo-${exp.experiment.experiment_id.replace(/\./g, '\\\\.')}-.*"`;
      const cat = queryCatalog(sel, { timeScale: opts.timeScale, scrapeSeconds: exp.scrapeSeconds });
      for (const k of QUANTITIES) if (cat[k].rule === q || cat[k].fallback === q) return { quantity: k };
      for (const run of traces.keys())
        for (const one of [anyRunSelector(run), runSelector(run)]) {
          const c = queryCatalog(one, { timeScale: opts.timeScale, scrapeSeconds: exp.scrapeSeconds });
          for (const k of QUANTITIES)
            if (c[k].rule === q || c[k].fallback === q) return { quantity: k, only: run };
        }
    }
    return {};
  };

  const prometheus: PrometheusClient = {
    baseUrl: 'http://fake-prometheus',
    async instant() {
      counters.prometheusQueries++;
      return EMPTY;
    },
    async range(query, start, end, step) {
      counters.prometheusQueries++;
      const { quantity, only } = quantityOf(query);
      const series: PromSeries[] = [];
      for (const [run, { trace, ts0 }] of traces) {
        if (only && run !== only) continue;
        const field: Partial<Record<Quantity, keyof Trace>> = {
          secondsPerRolloutAvg: 'fullRun',
          secondsPerRolloutRate5m: 'rate5m',
          rolloutsTotal: 'completed',
          rolloutsFailed: 'failed',
          elapsed: 'elapsed',
        };
        const key = quantity ? field[quantity] : undefined;
        const toTs = (t: number) => ts0 + (t * 60) / opts.timeScale;
        if (key) {
          const pts = (trace[key] as { t: number; v: number }[])
            .map((p) => [toTs(p.t), p.v] as [number, number])
            .filter(
              ([ts]) =>
                ts >= start &&
                ts <= end &&
                Math.abs((ts - start) / step - Math.round((ts - start) / step)) < 1e-6,
            );
          if (pts.length) series.push({ labels: { run_name: run }, points: pts });
        }
        if (quantity === 'queueDepthMax' || quantity === 'queueDepthMin') {
          const v = quantity === 'queueDepthMax' ? 50 : 40;
          const last = trace.completed.at(-1);
          if (last && toTs(0) <= end)
            series.push({
              labels: { run_name: run, service: 'sensorsim' },
              points: [[Math.min(end, toTs(last.t)), v]],
            });
        }
        if (quantity === 'targetsUp') {
          const last = trace.completed.at(-1);
          if (last && toTs(0) <= end)
            series.push({ labels: { run_name: run }, points: [[Math.min(end, toTs(last.t)), 4]] });
        }
      }
      return { ...EMPTY, series, empty: series.length === 0 };
    },
  };

  const ports: MonitorPorts = {
    async experiments() {
      return experiments;
    },
    slurm: {
      async jobs(id) {
        counters.slurmCalls++;
        // what Slurm's elapsed says each held, as of now (a job without a start held nothing)
        return jobs
          .filter((j) => j.name.startsWith(`topo-${id}-`))
          .map((j) => ({
            ...j,
            ...(j.startTs
              ? { held: { seconds: Math.max(0, (j.endTs ?? now) - j.startTs), gpuMinutes: null } }
              : {}),
          }));
      },
      async cancel(jobId) {
        counters.slurmCalls++;
        counters.cancels++;
        const j = jobs.find((x) => x.jobId === jobId);
        if (j && (j.state === 'RUNNING' || j.state === 'PENDING')) {
          Object.assign(j, { state: 'CANCELLED', status: 'cancelled' });
          j.endTs = now;
        }
      },
    },
    async submit(_exp, c: MonitorCandidate) {
      counters.submits++;
      counters.slurmCalls++;
      const existing = jobs.find((j) => j.name === c.runName);
      if (existing) return { jobId: existing.jobId };
      const job: MonitorJob = {
        jobId: String(nextJob++),
        name: c.runName,
        state: 'PENDING',
        status: 'queued',
        submitTs: now,
      };
      jobs.push(job);
      return { jobId: job.jobId };
    },
    prometheus,
    github: {
      async readComment(pr, candidate) {
        counters.githubReads++;
        return candidateComments.get(`${pr}/${candidate}`);
      },
      async writeComment(pr, candidate, body) {
        counters.githubWrites++;
        candidateComments.set(`${pr}/${candidate}`, body);
        comments.set(pr, body);
      },
      async writeCheck(pr, headSha, check) {
        counters.githubReads++; // upsertCheckRun lists the ref's checks first
        counters.githubWrites++;
        checks.set(pr, check);
        checkWrites.push({ pr, headSha, check });
      },
      async setLabel(pr, state: LabelState | null, current) {
        const want = state ? [`topology:${state}`] : [];
        const have = (labels.get(pr) ?? current).filter((l) => l.startsWith('topology:'));
        const changed = want.join() !== have.join();
        if (changed) {
          counters.githubWrites += Math.max(1, have.length);
          labels.set(pr, want);
          labelWrites.push({ pr, state });
        }
        return changed;
      },
    },
    now: () => now,
  };
  return {
    ports,
    counters,
    comments,
    candidateComments,
    checks,
    checkWrites,
    labelWrites,
    labels,
    jobs,
    traces,
    setNow: (ts) => (now = ts),
  };
}

/** Starts a job for a candidate whose metrics follow `profile`, started `ago` real seconds before now. */
export function runJob(
  world: FakeWorld,
  runName: string,
  profile: TraceProfile,
  startTs: number,
  timeScale: number,
  jobId: string,
): void {
  world.jobs.push({
    jobId,
    name: runName,
    state: 'RUNNING',
    status: 'running',
    submitTs: startTs - 10,
    startTs,
  });
  // telemetry starts after the start-up (5 run-minutes)
  world.traces.set(runName, { trace: simulateTrace(profile), ts0: startTs + (5 * 60) / timeScale });
}
