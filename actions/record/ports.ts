// The record action's ports (src/usecases/record.ts RecordDeps): the clusters.yaml of the
// default-branch checkout, a Slurm client for the experiment's cluster (to cancel its live jobs),
// and Prometheus to read a run again: the `prometheus-url` input's, else the cluster's.
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { recordedAtClose } from '../../src/commands/recorded.js';
import type { Octokit } from '../../src/github/client.js';
import { slurmClientForCluster } from '../../src/slurm/for-cluster.js';
import { createPrometheusClient } from '../../src/telemetry/prometheus.js';
import { checkClusters } from '../../src/topology/files.js';
import type { Cluster } from '../../src/types/generated/clusters.js';
import type { Experiment } from '../../src/types/generated/experiment.js';
import { observeAgain, type RecordDeps } from '../../src/usecases/record.js';

export interface RecordConfig {
  owner: string;
  repo: string;
  defaultBranch: string;
  botLogin: string;
  topologiesDir: string;
  /** Absolute, or '' for no Slurm or Prometheus access. */
  clustersFile: string;
  /** The `prometheus-url` input: '' for the cluster's, 'none' for never. */
  prometheusUrl: string;
  timeScale: number;
  log: (line: string) => void;
  warn: (line: string) => void;
}

/** The `clusters-file` input, relative to the workspace; '' when none. */
export function clustersFileOf(input: string, workspace: string): string {
  return input ? (isAbsolute(input) ? input : join(workspace, input)) : '';
}

export function recordPorts(octokit: Octokit, config: RecordConfig): RecordDeps {
  const { owner, repo, botLogin } = config;
  const clusterOf = (experiment: Experiment) =>
    experiment.cluster ? loadCluster(config, experiment.cluster) : undefined;
  return {
    octokit,
    owner,
    repo,
    defaultBranch: config.defaultBranch,
    botLogin,
    log: config.log,
    closeCommands: recordedAtClose({ octokit, owner, repo, botLogin }),
    topologiesDir: config.topologiesDir,
    clusterOf,
    slurmFor: async (experiment) => {
      const cluster = clusterOf(experiment);
      return cluster && experiment.cluster
        ? slurmClientForCluster(experiment.cluster, cluster, { env: process.env })
        : undefined;
    },
    observe: config.prometheusUrl === 'none' ? undefined : observeWith(config, clusterOf),
  };
}

/** The experiment's cluster in clusters.yaml, read at each use; none when the file is missing or invalid. */
function loadCluster(config: RecordConfig, name: string): Cluster | undefined {
  const file = config.clustersFile;
  if (!file || !existsSync(file)) return undefined;
  const checked = checkClusters(readFileSync(file, 'utf8'), file);
  if (!checked.value) {
    config.warn(
      `${file} is not valid (${checked.issues[0]?.message ?? 'schema'}): no Slurm or Prometheus access`,
    );
    return undefined;
  }
  return checked.value.clusters[name];
}

/** Reads a run again from the `prometheus-url` input's Prometheus, else from its cluster's. */
function observeWith(
  config: RecordConfig,
  clusterOf: (experiment: Experiment) => Cluster | undefined,
): NonNullable<RecordDeps['observe']> {
  return async (runName, experiment, topology, job) => {
    const url = config.prometheusUrl || clusterOf(experiment)?.prometheus_url;
    if (!url) return undefined;
    const prometheus = createPrometheusClient({ baseUrl: url, timeoutMs: 15_000, retries: 1 });
    return observeAgain(prometheus, runName, experiment, {
      timeScale: clusterOf(experiment)?.time_scale ?? config.timeScale,
      topology,
      ...(job ? { job } : {}),
    });
  };
}
