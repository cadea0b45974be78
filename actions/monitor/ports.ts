// The monitor action's ports: experiments from the default-branch checkout (trusted), candidates
// from open pull requests read through the API as data (never checked out), Slurm per cluster,
// Prometheus per cluster, GitHub through src/github.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Octokit } from '../../src/github/client.js';
import { findStickyComments } from '../../src/github/sticky-comment.js';
import { slurmClientForCluster } from '../../src/slurm/for-cluster.js';
import type { SlurmClient } from '../../src/slurm/types.js';
import { createPrometheusClient, type PrometheusClient } from '../../src/telemetry/prometheus.js';
import { expandCandidate, expandPreset } from '../../src/topology/expand.js';
import { checkCandidate, checkClusters, checkExperiment, checkPreset } from '../../src/topology/files.js';
import { jobName, renderSubmission } from '../../src/topology/render.js';
import type { Cluster } from '../../src/types/generated/clusters.js';
import type { Experiment } from '../../src/types/generated/experiment.js';
import {
  githubMonitorPort,
  type MonitorCandidate,
  type MonitorExperiment,
  type MonitorPorts,
  slurmMonitorPort,
} from '../../src/usecases/reconcile.js';
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
}

/** Labels that mean "the user asked this candidate to run". */
const REQUESTED_LABELS = [
  'topology:submit',
  'topology:queued',
  'topology:running',
  'topology:stable',
  'topology:failed',
];

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

/** Candidates of each experiment from the open pull requests of this repository (forks are ignored). */
async function loadCandidates(octokit: Octokit, config: MonitorConfig, experiments: Map<string, Loaded>) {
  const byExperiment = new Map<string, MonitorCandidate[]>();
  const pulls = await octokit.paginate(octokit.rest.pulls.list, {
    owner: config.owner,
    repo: config.repo,
    state: 'open',
    per_page: 100,
  });
  for (const pr of pulls) {
    if (pr.head.repo?.full_name !== `${config.owner}/${config.repo}`) continue;
    const labels = pr.labels.map((l) => (typeof l === 'string' ? l : (l.name ?? '')));
    const files = await octokit.paginate(octokit.rest.pulls.listFiles, {
      owner: config.owner,
      repo: config.repo,
      pull_number: pr.number,
      per_page: 100,
    });
    for (const f of files) {
      const m = new RegExp(
        `^${config.topologiesDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/([^/]+)/([a-z0-9][a-z0-9-]{0,39})\\.yaml$`,
      ).exec(f.filename);
      if (!m || m[2] === 'experiment' || f.status === 'removed') continue;
      const loaded = experiments.get(m[1] as string);
      if (!loaded) continue;
      const content = await octokit.rest.repos.getContent({
        owner: config.owner,
        repo: config.repo,
        path: f.filename,
        ref: pr.head.sha,
      });
      const data = content.data as { content?: string; encoding?: string };
      if (!data.content) continue;
      const text = Buffer.from(data.content, (data.encoding as BufferEncoding) ?? 'base64').toString('utf8');
      const checked = checkCandidate(text, f.filename);
      if (!checked.value) continue; // the validate workflow reports it
      const expanded = expandCandidate(loaded.base, checked.value.topology);
      const list = byExperiment.get(m[1] as string) ?? [];
      list.push({
        candidate: checked.value.name,
        runName: jobName(loaded.experiment.experiment_id, checked.value.name, expanded),
        pr: pr.number,
        headSha: pr.head.sha,
        labels,
        topology: expanded,
        requested: labels.some((l) => REQUESTED_LABELS.includes(l)),
        ...(labels.includes('topology:queued')
          ? { requestedAt: await queuedSince(octokit, config, pr.number) }
          : {}),
      });
      byExperiment.set(m[1] as string, list);
    }
  }
  return byExperiment;
}

/**
 * When a queued candidate was (last) asked to run: the submit action rewrites its `submit` sticky
 * comment on every request, so the comment's edit time is the request time. Read only for queued
 * pull requests, so a pass over running candidates costs nothing extra.
 */
async function queuedSince(octokit: Octokit, config: MonitorConfig, pr: number): Promise<number | undefined> {
  const [first] = await findStickyComments(octokit, {
    owner: config.owner,
    repo: config.repo,
    issue_number: pr,
    purpose: 'submit',
    botLogin: config.botLogin,
  });
  const at = first ? Date.parse(first.updatedAt) : Number.NaN;
  return Number.isFinite(at) ? at : undefined;
}

/** Ports for one pass; `close()` ends the Slurm connections. */
export function buildMonitorPorts(
  octokit: Octokit,
  config: MonitorConfig,
): MonitorPorts & { close(): Promise<void> } {
  const experiments = loadExperiments(config);
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
      jobs: (id) => slurmMonitorPort(slurmFor(id)).jobs(id),
      cancel: (jobId, id) => slurmFor(id).cancel(jobId),
    },
    async submit(exp, c) {
      const { experiment, cluster, base } = clusterOf(exp.experiment.experiment_id);
      if (!c.topology) return undefined;
      const submission = renderSubmission(
        experiment,
        { name: c.candidate, expanded: c.topology, base },
        cluster,
      );
      const result = await submitCandidate(
        { slurm: slurmFor(experiment.experiment_id), log: config.log },
        {
          experimentId: experiment.experiment_id,
          cluster: experiment.cluster,
          submission,
          maxParallel: experiment.max_parallel,
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
    now: () => Date.now() / 1000,
    async close() {
      for (const c of slurm.values()) await c.close();
    },
  };
}
