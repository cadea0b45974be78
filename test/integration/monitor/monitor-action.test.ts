// The bundled monitor action, run as GitHub runs it, against the local GitHub API and the local
// cluster: it finds the candidate of an open pull request (read through the API as data), submits it
// to Slurm because it was asked to run, and reports it; a second run does not submit it again.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { slurmClientForCluster } from '../../../src/slurm/for-cluster.js';
import type { SlurmClient } from '../../../src/slurm/types.js';
import type { ClustersFile } from '../../../src/types/generated/clusters.js';
import { type LocalClusterEnv, repoRoot, requireCluster } from '../../support/cluster.js';
import { pullRequestEvent } from '../../support/events.js';
import {
  type GitHubServer,
  type Pull,
  type Repo,
  startGitHubServer,
} from '../../support/github-server/index.js';
import { runAction } from '../../support/run-action.js';

const suffix = `${process.pid.toString(36)}${Date.now().toString(36).slice(-5)}`.replace(/[^a-z0-9]/g, '');
const experimentId = `topology-opt-act${suffix}-local-20260101`;

const experimentYaml = `experiment_id: ${experimentId}
cluster: local
base_topology: 8gpu_64rollouts
max_parallel: 1
fixed_inputs:
  deploy: twin-balanced
  driver: vavam
  scenes: public_2601
  scene_count: 913
  rollouts_per_scene: 1
  slurm:
    time: "00:10:00"
`;
const candidateYaml = `name: more-workers
hypothesis: more event loops
topology:
  runtime:
    nr_workers: 16
`;

let cluster: LocalClusterEnv;
let gh: GitHubServer;
let repo: Repo;
let pull: Pull;
let slurm: SlurmClient;
let workspace: string;

beforeAll(async () => {
  cluster = requireCluster();
  const clusters = parse(readFileSync(cluster.clustersFile, 'utf8')) as ClustersFile;
  if (!clusters.clusters.local) throw new Error(`${cluster.clustersFile} has no cluster "local"`);
  slurm = slurmClientForCluster('local', clusters.clusters.local);
  // the default-branch checkout the action reads its trusted configuration from
  workspace = mkdtempSync(join(tmpdir(), 'topo-monitor-ws-'));
  mkdirSync(join(workspace, 'topologies', experimentId), { recursive: true });
  mkdirSync(join(workspace, 'topologies', 'presets'), { recursive: true });
  writeFileSync(join(workspace, 'topologies', experimentId, 'experiment.yaml'), experimentYaml);
  copyFileSync(
    join(repoRoot, 'topologies/presets/8gpu_64rollouts.yaml'),
    join(workspace, 'topologies/presets/8gpu_64rollouts.yaml'),
  );
  copyFileSync(cluster.clustersFile, join(workspace, 'topologies/clusters.yaml'));
  gh = await startGitHubServer();
  repo = gh.createRepo('acme/sim', {
    files: { [`topologies/${experimentId}/experiment.yaml`]: experimentYaml },
  });
  gh.addCollaborator(repo, 'alice', 'write');
  pull = gh.openPull({
    repo,
    author: 'alice',
    title: 'more workers',
    head: 'more-workers',
    files: { [`topologies/${experimentId}/more-workers.yaml`]: candidateYaml },
  });
  // labels as a set-up repository has them (ensureStateLabels); the local server renders a label
  // created without a description as null, which GitHub's schema for pulls.list does not allow
  for (const name of [
    'topology:submit',
    'topology:queued',
    'topology:running',
    'topology:stable',
    'topology:failed',
  ])
    gh.state.ensureLabel(repo, name).description = name;
  pull.labels.push('topology:submit');
});

afterAll(async () => {
  for (const j of (await slurm?.jobs(`topo-${experimentId}-`)) ?? [])
    if (['PENDING', 'RUNNING'].includes(j.state)) await slurm.cancel(j.id);
  await slurm?.close();
  await gh?.close();
});

describe('actions/monitor', () => {
  it('submits a requested candidate and reports it; a second run does not submit again', async () => {
    const run = () =>
      runAction('monitor', {
        event: pullRequestEvent(gh, pull, 'labeled', { label: 'topology:submit', sender: 'alice' }),
        apiUrl: gh.url,
        repository: 'acme/sim',
        token: gh.token,
        workspace,
        inputs: { 'tick-seconds': '600' },
        env: { SLURM_CONF: cluster.slurmConf },
        timeoutMs: 120_000,
      });
    const first = await run();
    expect(first.exitCode, first.stderr + first.stdout).toBe(0);
    expect(first.outputs.candidates).toBe('1');
    const states = JSON.parse(first.outputs.states ?? '{}') as Record<string, string>;
    const [runName, state] = Object.entries(states)[0] ?? [];
    expect(runName).toMatch(new RegExp(`^topo-${experimentId}-more-workers-[0-9a-f]{8}$`));
    expect(state).toBe('submitted');
    const jobs = await slurm.jobs(`topo-${experimentId}-`);
    expect(jobs.map((j) => j.name)).toEqual([runName]);
    const comment = gh.state.commentsOn(repo, pull.number).find((c) => c.user.login === gh.botLogin);
    expect(comment?.body).toContain('<!-- topo:sticky:monitor -->');
    expect(comment?.body).toContain('`more-workers` — submitted');
    expect(pull.labels).toContain('topology:running');
    expect(first.summary).toContain('## topo monitor');
    expect(gh.violations()).toEqual([]);

    // same tick, the job may have moved on in Slurm (pending → running): the state in the comment is
    // recomputed; what must not happen is a second submission
    const second = await run();
    expect(second.exitCode, second.stderr).toBe(0);
    expect((await slurm.jobs(`topo-${experimentId}-`)).length).toBe(1);
  });
});
