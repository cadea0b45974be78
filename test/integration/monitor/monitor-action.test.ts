import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SlurmClient } from '../../../src/slurm/types.js';
import {
  cancelLiveJobs,
  clusterSlurm,
  defaultBranchWorkspace,
  ensureStateLabels,
  experimentRepo,
  twinExperimentYaml,
  uniqueSuffix,
} from '../../support/action-fixture.js';
import { type LocalClusterEnv, requireCluster } from '../../support/cluster.js';
import { issueCommentEvent, pullRequestEvent } from '../../support/events.js';
import {
  type GitHubServer,
  type Pull,
  type Repo,
  startGitHubServer,
} from '../../support/github-server/index.js';
import { runAction } from '../../support/run-action.js';

const suffix = uniqueSuffix();
const experimentId = `topology-opt-act${suffix}-local-20260101`;
const experimentYaml = twinExperimentYaml(experimentId);
// What a hostile pull request puts in its own copy of the experiment: none of it may reach sbatch.
const editedExperimentYaml = experimentYaml
  .replace('max_parallel: 1', 'max_parallel: 16')
  .replace('time: "00:10:00"', 'time: "99999-00:00:00"')
  .replace(
    '  rollouts_per_scene: 1\n',
    '  rollouts_per_scene: 1\n  overrides: ["hydra.run.dir=/etc/cron.d"]\n',
  );
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
  slurm = clusterSlurm(cluster.clustersFile, 'local');
  // the default-branch checkout the action reads its trusted configuration from
  workspace = defaultBranchWorkspace('monitor', {
    experimentId,
    experimentYaml,
    clustersFile: cluster.clustersFile,
  });
  gh = await startGitHubServer();
  repo = experimentRepo(gh, experimentId, experimentYaml);
  pull = gh.openPull({
    repo,
    author: 'alice',
    title: 'more workers',
    head: 'more-workers',
    files: {
      [`topologies/${experimentId}/more-workers.yaml`]: candidateYaml,
      [`topologies/${experimentId}/experiment.yaml`]: editedExperimentYaml,
    },
  });
  gh.addCollaborator(repo, 'tom', 'triage');
  ensureStateLabels(gh, repo, [
    'topology:submit',
    'topology:queued',
    'topology:running',
    'topology:stable',
    'topology:failed',
  ]);
});

afterAll(async () => {
  await cancelLiveJobs(slurm, experimentId);
  await slurm?.close();
  await gh?.close();
});

const monitor = () =>
  runAction('monitor', {
    event: pullRequestEvent(gh, pull, 'synchronize', { sender: 'alice' }),
    apiUrl: gh.url,
    repository: 'acme/sim',
    token: gh.token,
    workspace,
    inputs: { 'tick-seconds': '600' },
    env: { SLURM_CONF: cluster.slurmConf },
    timeoutMs: 120_000,
  });

async function command(login: string, body: string) {
  const comment = gh.comment(repo, pull.number, login, body);
  const run = await runAction('submit', {
    event: issueCommentEvent(gh, comment),
    apiUrl: gh.url,
    repository: 'acme/sim',
    token: gh.token,
    workspace,
    env: { SLURM_CONF: cluster.slurmConf },
    timeoutMs: 60_000,
  });
  expect(run.exitCode, run.stderr + run.stdout).toBe(0);
  return run;
}

const jobs = () => slurm.jobs(`topo-${experimentId}-`);
const runState = () =>
  gh.state
    .commentsOn(repo, pull.number)
    .find((c) => c.user.login === gh.botLogin && c.body.startsWith('<!-- topo:sticky:lifecycle -->'))?.body ??
  '';

describe('the run lifecycle through the actions', () => {
  it('a topology label added by hand (triage access) starts nothing and is removed', async () => {
    pull.labels.push('topology:submit');
    const run = await monitor();
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);
    expect(run.outputs.candidates).toBe('0');
    expect(await jobs()).toEqual([]);
    expect(pull.labels).not.toContain('topology:submit');
  });

  let first = '';
  it('/topo submit by a writer starts one run, with the default branch’s experiment only', async () => {
    const run = await command('alice', '/topo submit');
    expect(run.outputs.outcome).toBe('done');
    const listed = await jobs();
    expect(listed).toHaveLength(1);
    first = listed[0]?.name ?? '';
    expect(first).toMatch(new RegExp(`^topo-${experimentId}-more-workers-[0-9a-f]{8}-[0-9a-f]{8}$`));
    const sbatch =
      gh.state.commentsOn(repo, pull.number).find((c) => c.body.includes('sbatch command'))?.body ?? '';
    expect(sbatch).toContain('--time=00:10:00');
    expect(sbatch).not.toContain('99999');
    expect(sbatch).not.toContain('hydra.run.dir');
    expect(runState()).toContain(first);
    expect(runState()).toContain('topo:run-state v1');

    const pass = await monitor();
    expect(pass.exitCode, pass.stderr + pass.stdout).toBe(0);
    const states = JSON.parse(pass.outputs.states ?? '{}') as Record<string, string>;
    expect(Object.keys(states)).toEqual([first]);
    expect((await jobs()).length).toBe(1);
    // the pass's job summary: the experiment's slots and candidates, and the API requests it made
    expect(pass.summary).toContain(`### Experiment \`${experimentId}\``);
    expect(pass.summary).toContain('Slots: **1 of 1** in use');
    expect(pass.summary).toContain(`[#${pull.number}](`);
    expect(pass.summary).toMatch(/GitHub API this pass: [1-5] read\(s\)/);
    expect(gh.violations()).toEqual([]);
  });

  it('a push supersedes: the run is cancelled and recorded, the new head waits for /topo submit', async () => {
    gh.state.pushToPull(pull, {
      [`topologies/${experimentId}/more-workers.yaml`]: candidateYaml.replace(
        'nr_workers: 16',
        'nr_workers: 12',
      ),
    });
    const pass = await monitor();
    expect(pass.exitCode, pass.stderr + pass.stdout).toBe(0);
    // scancel returns before Slurm has finished the job (COMPLETING under load): wait for its end state
    await vi.waitFor(
      async () => {
        const listed = await jobs();
        expect(listed).toHaveLength(1);
        expect(listed[0]?.state).toBe('CANCELLED');
      },
      { timeout: 60_000, interval: 1_000 },
    );
    expect(runState()).toMatch(/\*\*superseded\*\*: the pull request moved from/);
    await monitor();
    expect(await jobs()).toHaveLength(1);
  });

  it('a job Slurm forgot is recorded lost and never submitted again', async () => {
    const again = await command('alice', '/topo submit');
    expect(again.outputs.outcome, gh.state.commentsOn(repo, pull.number).at(-1)?.body).toBe('done');
    const live = (await jobs()).find((j) => j.name !== first);
    expect(live).toBeDefined();
    // Slurm forgets it (history window, lost controller state): it no longer lists it by name.
    await slurm.rename(live?.id as string, `forgotten-${live?.id}`);
    await slurm.cancel(live?.id as string);
    await monitor();
    await monitor();
    expect((await jobs()).filter((j) => j.name !== first)).toEqual([]);
    expect(runState()).toMatch(/\*\*lost\*\*: Slurm no longer knows job/);
  });
});
