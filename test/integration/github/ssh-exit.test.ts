// Every command's process exits: `/topo submit` and `/topo cancel` against a cluster reached over
// SSH end (the SSH client is closed) well within 60 s, and the runs they act on are exactly their own.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SlurmClient } from '../../../src/slurm/types.js';
import {
  cancelLiveJobs,
  clusterSlurm,
  defaultBranchWorkspace,
  experimentRepo,
  twinExperimentYaml,
  uniqueSuffix,
  workersCandidate,
} from '../../support/action-fixture.js';
import { type LocalClusterEnv, repoRoot, requireCluster } from '../../support/cluster.js';
import { issueCommentEvent } from '../../support/events.js';
import {
  type GitHubServer,
  type Pull,
  type Repo,
  startGitHubServer,
} from '../../support/github-server/index.js';
import { runAction } from '../../support/run-action.js';

const suffix = uniqueSuffix();
const experimentId = `topology-opt-ssh${suffix}-local-20260101`;
const experimentYaml = twinExperimentYaml(experimentId, { cluster: 'local-ssh', maxParallel: 2 });
const candidate = workersCandidate;

let cluster: LocalClusterEnv;
let gh: GitHubServer;
let repo: Repo;
let more: Pull;
let moreWorkers: Pull;
let slurm: SlurmClient;
let workspace: string;
let sshKey: string;

beforeAll(async () => {
  cluster = requireCluster();
  sshKey = readFileSync(cluster.sshKeyPath, 'utf8');
  slurm = clusterSlurm(cluster.clustersFile, 'local-ssh', {
    env: { TOPO_SSH_KEY: sshKey },
  });
  workspace = defaultBranchWorkspace('ssh', {
    experimentId,
    experimentYaml,
    clustersFile: cluster.clustersFile,
  });
  gh = await startGitHubServer();
  repo = experimentRepo(gh, experimentId, experimentYaml);
  // Sibling candidates: `more` is a prefix of `more-workers`.
  more = gh.openPull({
    repo,
    author: 'alice',
    title: 'more',
    head: 'more',
    files: { [`topologies/${experimentId}/more.yaml`]: candidate('more', 12) },
  });
  moreWorkers = gh.openPull({
    repo,
    author: 'alice',
    title: 'more workers',
    head: 'more-workers',
    files: { [`topologies/${experimentId}/more-workers.yaml`]: candidate('more-workers', 16) },
  });
});

afterAll(async () => {
  await cancelLiveJobs(slurm, experimentId);
  await slurm?.close();
  await gh?.close();
});

async function command(pull: Pull, body: string, ws = workspace) {
  const comment = gh.comment(repo, pull.number, 'alice', body);
  const started = Date.now();
  const run = await runAction('submit', {
    event: issueCommentEvent(gh, comment),
    apiUrl: gh.url,
    repository: 'acme/sim',
    token: gh.token,
    workspace: ws,
    env: { TOPO_SSH_KEY: sshKey },
    timeoutMs: 60_000, // the process must EXIT by then: a kept SSH connection fails the test
  });
  expect(run.exitCode, run.stderr + run.stdout).toBe(0);
  return { run, seconds: (Date.now() - started) / 1000 };
}

describe('commands over SSH', () => {
  it('/topo submit answers and its process exits', async () => {
    for (const p of [more, moreWorkers]) {
      const { run, seconds } = await command(p, '/topo submit');
      expect(run.outputs.outcome, gh.state.commentsOn(repo, p.number).at(-1)?.body).toBe('done');
      expect(seconds).toBeLessThan(60);
    }
    const names = (await slurm.jobs(`topo-${experimentId}-`)).map((j) => j.name);
    expect(names).toHaveLength(2);
  });

  it('/topo cancel on `more` cancels its job only (not `more-workers`) and exits', async () => {
    const { run } = await command(more, '/topo cancel');
    expect(run.outputs.outcome).toBe('done');
    const jobs = await slurm.jobs(`topo-${experimentId}-`);
    const byCandidate = (c: string) =>
      jobs.find((j) => new RegExp(`^topo-${experimentId}-${c}-[0-9a-f]{8}-[0-9a-f]{8}$`).test(j.name));
    expect(byCandidate('more')?.state).toBe('CANCELLED');
    expect(['PENDING', 'RUNNING']).toContain(byCandidate('more-workers')?.state);
  });

  it('/topo submit while the login node is unreachable: answered as an outage, the Request kept, the process exits', async () => {
    // The same workspace, but clusters.yaml points local-ssh at a port where nothing listens.
    const down = mkdtempSync(join(tmpdir(), 'topo-ssh-down-'));
    mkdirSync(join(down, 'topologies', experimentId), { recursive: true });
    mkdirSync(join(down, 'topologies', 'presets'), { recursive: true });
    writeFileSync(join(down, 'topologies', experimentId, 'experiment.yaml'), experimentYaml);
    copyFileSync(
      join(repoRoot, 'topologies/presets/8gpu_64rollouts.yaml'),
      join(down, 'topologies/presets/8gpu_64rollouts.yaml'),
    );
    const clustersText = readFileSync(cluster.clustersFile, 'utf8').replace(
      `port: ${cluster.sshPort}`,
      'port: 9',
    );
    writeFileSync(join(down, 'topologies/clusters.yaml'), clustersText);
    const third = gh.openPull({
      repo,
      author: 'alice',
      title: 'fewer',
      head: 'fewer',
      files: { [`topologies/${experimentId}/fewer.yaml`]: candidate('fewer', 8) },
    });
    const { run, seconds } = await command(third, '/topo submit', down);
    expect(run.outputs.outcome).toBe('done');
    expect(seconds).toBeLessThan(60);
    const reply = gh.state.commentsOn(repo, third.number).at(-1)?.body ?? '';
    expect(reply).toMatch(/is requested, but the cluster `local-ssh` is unreachable now/);
    const state = gh.state
      .commentsOn(repo, third.number)
      .find((c) => c.body.startsWith('<!-- topo:sticky:lifecycle -->'))?.body;
    expect(state).toMatch(/\| queued \|/);
    expect((await slurm.jobs(`topo-${experimentId}-`)).some((j) => j.name.includes('-fewer-'))).toBe(false);
  });
});
