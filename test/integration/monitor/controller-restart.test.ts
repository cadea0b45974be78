import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SlurmClient } from '../../../src/slurm/types.js';
import {
  clusterSlurm,
  defaultBranchWorkspace,
  ensureStateLabels,
  experimentRepo,
  twinExperimentYaml,
  workersCandidate,
} from '../../support/action-fixture.js';
import { issueCommentEvent, pullRequestEvent } from '../../support/events.js';
import {
  type GitHubServer,
  type Pull,
  type Repo,
  startGitHubServer,
} from '../../support/github-server/index.js';
import { type PrivateCluster, startPrivateCluster } from '../../support/private-cluster.js';
import { runAction } from '../../support/run-action.js';

const experimentId = 'topology-opt-restart-local-20260101';
const experimentYaml = twinExperimentYaml(experimentId);
const candidateYaml = workersCandidate('more-workers', 16);

let cluster: PrivateCluster;
let gh: GitHubServer;
let repo: Repo;
let pull: Pull;
let slurm: SlurmClient;
let workspace: string;

beforeAll(async () => {
  cluster = startPrivateCluster();
  slurm = clusterSlurm(cluster.env.clustersFile, 'local', {
    env: { ...process.env, SLURM_CONF: cluster.env.slurmConf },
  });
  workspace = defaultBranchWorkspace('restart', {
    experimentId,
    experimentYaml,
    clustersFile: cluster.env.clustersFile,
  });
  gh = await startGitHubServer();
  repo = experimentRepo(gh, experimentId, experimentYaml);
  pull = gh.openPull({
    repo,
    author: 'alice',
    title: 'more workers',
    head: 'more-workers',
    files: { [`topologies/${experimentId}/more-workers.yaml`]: candidateYaml },
  });
  ensureStateLabels(gh, repo);
}, 180_000);

afterAll(async () => {
  await slurm?.close();
  await gh?.close();
  cluster?.stop();
});

const actionEnv = () => ({ SLURM_CONF: cluster.env.slurmConf });

async function monitor() {
  const run = await runAction('monitor', {
    event: pullRequestEvent(gh, pull, 'synchronize', { sender: 'alice' }),
    apiUrl: gh.url,
    repository: 'acme/sim',
    token: gh.token,
    workspace,
    inputs: { 'tick-seconds': '600' },
    env: actionEnv(),
    timeoutMs: 120_000,
  });
  expect(run.exitCode, run.stderr + run.stdout).toBe(0);
}

async function submit() {
  const run = await runAction('submit', {
    event: issueCommentEvent(gh, gh.comment(repo, pull.number, 'alice', '/topo submit')),
    apiUrl: gh.url,
    repository: 'acme/sim',
    token: gh.token,
    workspace,
    env: actionEnv(),
    timeoutMs: 60_000,
  });
  expect(run.exitCode, run.stderr + run.stdout).toBe(0);
  expect(run.outputs.outcome).toBe('done');
}

const jobs = () => slurm.jobs(`topo-${experimentId}-`);
const runState = () =>
  gh.state
    .commentsOn(repo, pull.number)
    .find((c) => c.user.login === gh.botLogin && c.body.startsWith('<!-- topo:sticky:lifecycle -->'))?.body ??
  '';

describe('a controller restart that lost its state', () => {
  it('records the forgotten run lost, never resubmits it, and a new request runs under a new label', async () => {
    await submit();
    const [first] = await jobs();
    expect(first?.name).toMatch(new RegExp(`^topo-${experimentId}-more-workers-[0-9a-f]{8}-[0-9a-f]{8}$`));
    await monitor();
    expect((await jobs()).map((j) => j.id)).toEqual([first?.id]);

    cluster.restartControllerWiped();
    expect(await jobs()).toEqual([]); // Slurm forgot every job

    await monitor();
    await monitor();
    expect(await jobs()).toEqual([]); // nothing resubmitted
    expect(runState()).toMatch(
      new RegExp(
        `\\| \`${first?.name}\` \\| ${first?.id} \\| \\*\\*lost\\*\\*: Slurm no longer knows job ${first?.id}`,
      ),
    );

    await submit();
    const [second] = await jobs();
    // Job ids started again: the new run may even carry the old id, never the old run name.
    expect(Number(second?.id)).toBeLessThanOrEqual(Number(first?.id));
    expect(second?.name).toMatch(new RegExp(`^topo-${experimentId}-more-workers-[0-9a-f]{8}-[0-9a-f]{8}$`));
    expect(second?.name).not.toBe(first?.name);
    await monitor();
    expect((await jobs()).map((j) => j.name)).toEqual([second?.name]);
    expect(runState().match(/\*\*lost\*\*/g)).toHaveLength(1);
    expect(gh.violations()).toEqual([]);
  }, 300_000);
});
