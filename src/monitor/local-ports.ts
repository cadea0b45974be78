// The monitor's ports for a checkout without GitHub (`topo watch`): the same pass, stages and judge
// as the action, over the watched runs of one experiment. The pull requests' comments and run state
// are a local state file instead (the watch's memory, so a second `topo watch` resumes where the
// first stopped): each run's comment (the judge reads its last verdict and who stopped it back from
// it) and the round's reference Requests with their Runs and Outcomes. Only a reference job is ever
// submitted here; a candidate is submitted by `topo submit`. Pure apart from the callbacks given.
import type { Outcome, RunRecord, RunRequest } from '../lifecycle/model.js';
import { roundReferenceRequest } from '../lifecycle/reference.js';
import type { PrometheusClient } from '../telemetry/prometheus.js';
import { newRunLabel } from '../topology/run-name.js';
import type { Cluster } from '../types/generated/clusters.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { Topology } from '../types/generated/topology.js';
import type { MonitorCandidate, MonitorExperiment, MonitorPorts } from './ports.js';

/** A watched run: its candidate, its run name (fixed when the watch begins) and its expanded topology. */
export interface WatchedRun {
  candidate: string;
  runName: string;
  /** Stands for its pull request (no two watched runs share one). */
  pr: number;
  topology?: Topology;
  /** When it was submitted (ms since the epoch): first come, first served. */
  requestedAt?: number;
}

/** A reference Request the watch made, with what it knows of it. */
export interface HeldReference {
  request: RunRequest;
  run?: RunRecord;
  outcome?: Outcome;
  /** Recorded in the experiment's reference runs (once it ended). */
  recorded?: boolean;
}

/** What the watch remembers between passes and between two `topo watch`es (the state file). */
export interface LocalWatchState {
  schema_version: 1;
  /** Each run's comment, by run name. */
  comments: Record<string, string>;
  references: HeldReference[];
}

export const emptyWatchState = (): LocalWatchState => ({ schema_version: 1, comments: {}, references: [] });

export interface LocalPortsInput {
  experiment: Experiment;
  cluster: Cluster;
  /** The runs' time compression (the cluster's time_scale unless overridden). */
  timeScale: number;
  prometheus: PrometheusClient;
  /** Scrape interval of the cluster's Prometheus, seconds. */
  scrapeSeconds: number;
  slurm: MonitorPorts['slurm'];
  runs: readonly WatchedRun[];
  /** The record's references as the monitor reads them from the default branch (read every pass). */
  references(): Pick<MonitorExperiment, 'baseline' | 'best' | 'referenceSource' | 'betweenRun'>;
  /** The reference source's expanded topology (its file in the checkout), when it can be read. */
  topologyOf?(path: string): Topology | undefined;
  /** Submits a reference Request (its source's file under its run name), as the monitor's submit port does. */
  submitReference(request: RunRequest): ReturnType<MonitorPorts['submit']>;
  state: LocalWatchState;
  /** Called after every change of the state (to write the file). */
  save(state: LocalWatchState): void;
  /** Who asks for the reference job (the bot on GitHub; the user here). */
  login: string;
  now(): number;
}

/** The ports of one watch; its pull request numbers are the watched runs'. */
export function localMonitorPorts(input: LocalPortsInput): MonitorPorts {
  const { state } = input;
  // the run each (pull request, candidate) stands for this pass: comments are kept by run name
  const runOf = new Map<string, string>();
  const key = (pr: number, candidate: string) => `${pr}/${candidate}`;
  const held = (id: string) => state.references.find((h) => h.request.id === id);
  return {
    async experiments() {
      const candidates = [...input.runs.map(watchedCandidate), ...referenceCandidates(input)];
      runOf.clear();
      for (const c of candidates) runOf.set(key(c.pr, c.candidate), c.runName);
      return [experimentOf(input, candidates)];
    },
    slurm: input.slurm,
    submit: async (_exp, c) =>
      c.request && c.role === 'reference' ? input.submitReference(c.request) : undefined,
    prometheus: input.prometheus,
    github: {
      readComment: async (pr, candidate) => state.comments[runOf.get(key(pr, candidate)) ?? ''],
      async writeComment(pr, candidate, body) {
        const run = runOf.get(key(pr, candidate));
        if (!run) return;
        state.comments[run] = body;
        input.save(state);
      },
      writeCheck: async () => {},
      setLabel: async () => true,
    },
    lifecycle: {
      async recordRun(_pr, id, run) {
        const h = held(id);
        if (h) h.run = run;
        input.save(state);
      },
      async recordOutcome(_pr, id, outcome) {
        const h = held(id);
        if (h) h.outcome = outcome;
        input.save(state);
      },
      async requestReference(exp, pr, headSha) {
        const request = roundReferenceRequest(exp, {
          pr,
          headSha,
          login: input.login,
          requestedAt: new Date(input.now() * 1000).toISOString(),
          label: newRunLabel(),
        });
        if (!request) return null;
        state.references.push({ request });
        input.save(state);
        return request;
      },
    },
    now: input.now,
  };
}

/** The run's head: a checkout has no pull request head; every watched run stands at this one. */
export const LOCAL_HEAD = '0'.repeat(40);

function watchedCandidate(r: WatchedRun): MonitorCandidate {
  return {
    candidate: r.candidate,
    runName: r.runName,
    pr: r.pr,
    headSha: LOCAL_HEAD,
    labels: [],
    ...(r.topology ? { topology: r.topology } : {}),
    requested: false,
    ...(r.requestedAt !== undefined ? { requestedAt: r.requestedAt } : {}),
  };
}

/** The reference Requests the watch made that have not ended, as the action reads them from a run state. */
function referenceCandidates(input: LocalPortsInput): MonitorCandidate[] {
  return input.state.references.map(({ request, run, outcome }) => {
    const topology = input.topologyOf?.(request.path);
    return {
      candidate: request.candidate,
      runName: request.runName,
      pr: request.pr,
      headSha: request.headSha,
      currentHeadSha: LOCAL_HEAD,
      labels: [],
      requested: false,
      requestedAt: Date.parse(request.requestedAt),
      request,
      role: 'reference',
      ...(topology ? { topology } : {}),
      ...(run ? { run } : {}),
      ...(outcome ? { outcome } : {}),
    };
  });
}

function experimentOf(input: LocalPortsInput, candidates: MonitorCandidate[]): MonitorExperiment {
  const { cluster } = input;
  return {
    experiment: input.experiment,
    timeScale: input.timeScale,
    scrapeSeconds: input.scrapeSeconds,
    grafanaUrl: cluster.grafana_url ?? null,
    prometheus: input.prometheus,
    ...(cluster.gpus_per_node ? { gpusPerNode: cluster.gpus_per_node } : {}),
    ...input.references(),
    candidates,
  };
}
