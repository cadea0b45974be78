// The monitor action's ports: experiments from the default-branch checkout (trusted), candidates
// from open pull requests read through the API as data (never checked out), Slurm per cluster,
// Prometheus per cluster, GitHub through src/github.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Octokit } from '../../src/github/client.js';
import { setStateLabel } from '../../src/github/labels.js';
import { openPullRunStates, updateRunState } from '../../src/github/run-state.js';
import { latestRequests, withOutcome, withRun } from '../../src/lifecycle/model.js';
import { slurmClientForCluster } from '../../src/slurm/for-cluster.js';
import type { SlurmClient } from '../../src/slurm/types.js';
import { createPrometheusClient, type PrometheusClient } from '../../src/telemetry/prometheus.js';
import { expandPreset } from '../../src/topology/expand.js';
import { checkClusters, checkExperiment, checkPreset } from '../../src/topology/files.js';
import type { Cluster } from '../../src/types/generated/clusters.js';
import type { Experiment } from '../../src/types/generated/experiment.js';
import { prepareCandidateAt, withRunName } from '../../src/usecases/prepare.js';
import {
  githubMonitorPort,
  type MonitorCandidate,
  type MonitorExperiment,
  type MonitorPorts,
  slurmMonitorPort,
} from '../../src/usecases/reconcile.js';
import { refuseOrphanedRequest, refuseRequest } from '../../src/usecases/refuse.js';
import { submitCandidate } from '../../src/usecases/submit.js';

export interface MonitorConfig {
  workspace: string;
  topologiesDir: string;
  clustersFile: string;
  owner: string;
  repo: string;
  botLogin: string;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** Only this pull request (the `/topo status` pass). */
  onlyPull?: number;
}

const repoOf = (config: MonitorConfig) => ({
  owner: config.owner,
  repo: config.repo,
  botLogin: config.botLogin,
});

interface Loaded {
  experiment: Experiment;
  cluster: Cluster;
  base: ReturnType<typeof expandPreset>;
}

function loadExperiments(config: MonitorConfig): Map<string, Loaded> {
  const clustersPath = join(config.workspace, config.clustersFile);
  const clusters = checkClusters(readFileSync(clustersPath, 'utf8'), clustersPath);
  if (!clusters.value)
    throw new Error(
      `${clustersPath}: ${clusters.issues.map((i) => `line ${i.line}: ${i.message}`).join('; ')}`,
    );
  const root = join(config.workspace, config.topologiesDir);
  const out = new Map<string, Loaded>();
  for (const dir of readdirSync(root, { withFileTypes: true })) {
    const file = join(root, dir.name, 'experiment.yaml');
    if (!dir.isDirectory() || !existsSync(file)) continue;
    const checked = checkExperiment(readFileSync(file, 'utf8'), file);
    if (!checked.value) {
      config.log(`skipping ${file}: ${checked.issues.map((i) => `line ${i.line}: ${i.message}`).join('; ')}`);
      continue;
    }
    const cluster = clusters.value.clusters[checked.value.cluster];
    if (!cluster) {
      config.log(`skipping ${file}: cluster ${checked.value.cluster} is not in ${config.clustersFile}`);
      continue;
    }
    const presetFile = join(root, 'presets', `${checked.value.base_topology}.yaml`);
    const preset = existsSync(presetFile)
      ? checkPreset(readFileSync(presetFile, 'utf8'), presetFile).value
      : undefined;
    if (!preset) {
      config.log(`skipping ${file}: preset ${checked.value.base_topology} not found or invalid`);
      continue;
    }
    out.set(checked.value.experiment_id, {
      experiment: checked.value,
      cluster,
      base: expandPreset(preset, checked.value),
    });
  }
  return out;
}

/**
 * Candidates of each experiment: the standing Requests in the bot-owned run state of the open pull
 * requests (never labels, never the PR's own files alone). A Request's candidate is re-read at the
 * Request's head and checked against the default branch before it may be submitted.
 */
async function loadCandidates(octokit: Octokit, config: MonitorConfig, experiments: Map<string, Loaded>) {
  const byExperiment = new Map<string, MonitorCandidate[]>();
  const { pulls, corrupt } = await openPullRunStates(octokit, {
    owner: config.owner,
    repo: config.repo,
    botLogin: config.botLogin,
  });
  for (const c of corrupt) config.log(`pull request #${c.pr}: ${c.message}: its runs are left alone`);
  for (const pull of pulls) {
    if (config.onlyPull !== undefined && pull.pr !== config.onlyPull) continue;
    for (const request of latestRequests(pull.state)) {
      const loaded = experiments.get(request.experiment);
      if (!loaded) {
        await refuseOrphanedRequest(octokit, repoOf(config), config, pull, request, config.log);
        continue;
      }
      const list = byExperiment.get(request.experiment) ?? [];
      list.push({
        candidate: request.candidate,
        runName: request.runName,
        pr: pull.pr,
        headSha: request.headSha,
        currentHeadSha: pull.headSha,
        labels: pull.labels,
        requested: false,
        requestedAt: Date.parse(request.requestedAt),
        request,
        ...(pull.state.runs[request.id] ? { run: pull.state.runs[request.id] } : {}),
        ...(pull.state.outcomes[request.id] ? { outcome: pull.state.outcomes[request.id] } : {}),
      });
      byExperiment.set(request.experiment, list);
    }
    // Labels only show state: with no Request, a topology:* label (added by hand) goes.
    if (pull.state.requests.length === 0 && pull.labels.some((l) => l.startsWith('topology:')))
      await setStateLabel(
        octokit,
        { owner: config.owner, repo: config.repo, issue_number: pull.pr },
        null,
        pull.labels,
      );
  }
  return byExperiment;
}

/** Ports for one pass; `close()` ends the Slurm connections. */
export function buildMonitorPorts(
  octokit: Octokit,
  config: MonitorConfig,
): MonitorPorts & { close(): Promise<void> } {
  const experiments = loadExperiments(config);
  const stateTarget = (pr: number) => ({
    owner: config.owner,
    repo: config.repo,
    issue_number: pr,
    botLogin: config.botLogin,
  });
  const slurm = new Map<string, SlurmClient>();
  const prom = new Map<string, PrometheusClient>();
  const clusterOf = (id: string) => {
    const l = experiments.get(id);
    if (!l) throw new Error(`unknown experiment ${id}`);
    return l;
  };
  const slurmFor = (id: string) => {
    const { experiment, cluster } = clusterOf(id);
    let c = slurm.get(experiment.cluster);
    if (!c) {
      c = slurmClientForCluster(experiment.cluster, cluster, { env: config.env });
      slurm.set(experiment.cluster, c);
    }
    return c;
  };
  const promFor = (name: string, cluster: Cluster) => {
    let p = prom.get(name);
    if (!p) {
      p = createPrometheusClient({ baseUrl: cluster.prometheus_url });
      prom.set(name, p);
    }
    return p;
  };
  return {
    async experiments() {
      const candidates = await loadCandidates(octokit, config, experiments);
      return [...experiments.values()].map(
        (l): MonitorExperiment => ({
          experiment: l.experiment,
          timeScale: l.cluster.time_scale ?? 1,
          scrapeSeconds: (l.cluster.time_scale ?? 1) > 1 ? 1 : 5,
          grafanaUrl: l.cluster.grafana_url ?? null,
          prometheus: promFor(l.experiment.cluster, l.cluster),
          candidates: candidates.get(l.experiment.experiment_id) ?? [],
        }),
      );
    },
    slurm: {
      jobs: (id) => slurmMonitorPort(slurmFor(id), [...experiments.keys()]).jobs(id),
      cancel: (jobId, id) => slurmFor(id).cancel(jobId),
    },
    async submit(exp, c) {
      // Only a standing Request is ever submitted, re-validated at its head against the default branch.
      if (!c.request) return undefined;
      const { experiment } = clusterOf(exp.experiment.experiment_id);
      const prepared = await prepareCandidateAt(
        octokit,
        { owner: config.owner, repo: config.repo },
        c.request.headSha,
        c.request.path,
        {
          workspace: config.workspace,
          clustersFile: config.clustersFile,
          topologiesDir: config.topologiesDir,
        },
      );
      if (!prepared.ok || prepared.candidate.experimentId !== experiment.experiment_id) {
        const errors = prepared.ok
          ? [`${c.request.path} now belongs to experiment ${prepared.candidate.experimentId}`]
          : prepared.errors;
        config.log(`${c.runName}: refused: ${errors.join('; ')}`);
        await refuseRequest(octokit, repoOf(config), c.request, errors, new Date().toISOString());
        c.requested = false; // refused: this pass shows it neither as queued nor labels it
        return undefined;
      }
      const result = await submitCandidate(
        { slurm: slurmFor(experiment.experiment_id), log: config.log },
        {
          experimentId: experiment.experiment_id,
          cluster: experiment.cluster,
          submission: withRunName(prepared.candidate.submission, c.request.runName),
          maxParallel: experiment.max_parallel,
          knownExperimentIds: [...experiments.keys()],
        },
      );
      config.log(`${c.runName}: ${result.status}`);
      return result.status === 'submitted' || result.status === 'existing'
        ? { jobId: result.jobId }
        : undefined;
    },
    prometheus: {
      baseUrl: 'per-experiment',
      instant: () => Promise.reject(new Error('every experiment carries its cluster’s Prometheus')),
      range: () => Promise.reject(new Error('every experiment carries its cluster’s Prometheus')),
    },
    github: githubMonitorPort(octokit, { owner: config.owner, repo: config.repo, botLogin: config.botLogin }),
    lifecycle: {
      recordRun: async (pr, requestId, run) => {
        await updateRunState(octokit, stateTarget(pr), (s) => withRun(s, requestId, run));
      },
      recordOutcome: async (pr, requestId, outcome) => {
        await updateRunState(octokit, stateTarget(pr), (s) => withOutcome(s, requestId, outcome));
      },
    },
    now: () => Date.now() / 1000,
    async close() {
      for (const c of slurm.values()) await c.close();
    },
  };
}
