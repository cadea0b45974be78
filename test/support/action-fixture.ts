// What the action tests on the local cluster share: a unique twin experiment, the default-branch
// checkout the actions read their trusted configuration from, the state labels, and the clean-up.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { type ClientForClusterOptions, slurmClientForCluster } from '../../src/slurm/for-cluster.js';
import { isLive, type SlurmClient } from '../../src/slurm/types.js';
import type { ClustersFile } from '../../src/types/generated/clusters.js';
import { repoRoot } from './cluster.js';
import type { GitHubServer, Repo } from './github-server/index.js';

/** A suffix that keeps concurrent test files' experiment ids (and Slurm job names) apart. */
export function uniqueSuffix(): string {
  return `${process.pid.toString(36)}${Date.now().toString(36).slice(-5)}`.replace(/[^a-z0-9]/g, '');
}

/** An experiment on the twin (8gpu_64rollouts, a 10-minute wall time). */
export function twinExperimentYaml(
  experimentId: string,
  o: { cluster?: string; maxParallel?: number } = {},
): string {
  return `experiment_id: ${experimentId}
cluster: ${o.cluster ?? 'local'}
base_topology: 8gpu_64rollouts
max_parallel: ${o.maxParallel ?? 1}
fixed_inputs:
  deploy: twin-balanced
  driver: vavam
  scenes: public_2601
  scene_count: 913
  rollouts_per_scene: 1
  slurm:
    time: "00:10:00"
`;
}

/** A candidate that changes the runtime's worker count. */
export function workersCandidate(name: string, workers: number): string {
  return `name: ${name}\nhypothesis: more event loops\ntopology:\n  runtime:\n    nr_workers: ${workers}\n`;
}

/** The default branch's checkout: the experiment, its preset and the clusters file. */
export function defaultBranchWorkspace(
  prefix: string,
  o: { experimentId: string; experimentYaml: string; clustersFile: string },
): string {
  const workspace = mkdtempSync(join(tmpdir(), `topo-${prefix}-ws-`));
  mkdirSync(join(workspace, 'topologies', o.experimentId), { recursive: true });
  mkdirSync(join(workspace, 'topologies', 'presets'), { recursive: true });
  writeFileSync(join(workspace, 'topologies', o.experimentId, 'experiment.yaml'), o.experimentYaml);
  copyFileSync(
    join(repoRoot, 'topologies/presets/8gpu_64rollouts.yaml'),
    join(workspace, 'topologies/presets/8gpu_64rollouts.yaml'),
  );
  copyFileSync(o.clustersFile, join(workspace, 'topologies/clusters.yaml'));
  return workspace;
}

/**
 * The state labels as a set-up repository has them (ensureStateLabels). The local server renders a
 * label created without a description as null, which GitHub's schema for pulls.list does not allow.
 */
export function ensureStateLabels(
  gh: GitHubServer,
  repo: Repo,
  names = ['topology:queued', 'topology:running', 'topology:stable', 'topology:failed'],
): void {
  for (const name of names) gh.state.ensureLabel(repo, name).description = name;
}

/** Cancels what the test left running of its experiment. */
export async function cancelLiveJobs(slurm: SlurmClient | undefined, experimentId: string): Promise<void> {
  for (const j of (await slurm?.jobs(`topo-${experimentId}-`)) ?? [])
    if (isLive(j.state)) await slurm?.cancel(j.id);
}

/** A Slurm client for a cluster of the test's clusters file (fails clearly when it is not there). */
export function clusterSlurm(
  clustersFile: string,
  name = 'local',
  options: ClientForClusterOptions = {},
): SlurmClient {
  const clusters = parse(readFileSync(clustersFile, 'utf8')) as ClustersFile;
  const cluster = clusters.clusters[name];
  if (!cluster) throw new Error(`${clustersFile} has no cluster "${name}"`);
  return slurmClientForCluster(name, cluster, options);
}

/** The repository `acme/sim` with the experiment on its default branch and `alice` as a writer. */
export function experimentRepo(gh: GitHubServer, experimentId: string, experimentYaml: string): Repo {
  const repo = gh.createRepo('acme/sim', {
    files: { [`topologies/${experimentId}/experiment.yaml`]: experimentYaml },
  });
  gh.addCollaborator(repo, 'alice', 'write');
  return repo;
}
