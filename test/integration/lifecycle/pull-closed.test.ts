// A Request ends with its pull request (issue 23, case 3): closing a pull request with a running and
// a queued Request cancels the job, gives both the Outcome `closed`, and the record says so; after
// the pull request is reopened, nothing runs until a new `/topo submit`. The real submit, record and
// monitor actions (their bundles), the local Slurm, the local GitHub API.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOctokit } from '../../../src/github/client.js';
import { parseRunStateBlock } from '../../../src/lifecycle/state-block.js';
import { isLive, type SlurmClient } from '../../../src/slurm/types.js';
import {
  cancelLiveJobs,
  clusterSlurm,
  defaultBranchWorkspace,
  ensureStateLabels,
  twinExperimentYaml,
  uniqueSuffix,
  workersCandidate,
} from '../../support/action-fixture.js';
import { type LocalClusterEnv, requireCluster } from '../../support/cluster.js';
import { issueCommentEvent, pullRequestEvent } from '../../support/events.js';
import {
  type GitHubServer,
  type Pull,
  type Repo,
  startGitHubServer,
} from '../../support/github-server/index.js';
import { repoRoot, runAction } from '../../support/run-action.js';

const suffix = uniqueSuffix();
const ID = `topology-opt-pc${suffix}-local-20260101`;
const experimentYaml = twinExperimentYaml(ID, { maxParallel: 1 });
const PRESET = readFileSync(join(repoRoot, 'topologies/presets/8gpu_64rollouts.yaml'), 'utf8');

let cluster: LocalClusterEnv;
let gh: GitHubServer;
let repo: Repo;
let pull: Pull;
let slurm: SlurmClient;
let workspace: string;

beforeAll(async () => {
  cluster = requireCluster();
  slurm = clusterSlurm(cluster.clustersFile, 'local');
  workspace = defaultBranchWorkspace('pull-closed', {
    experimentId: ID,
    experimentYaml,
    clustersFile: cluster.clustersFile,
  });
  gh = await startGitHubServer();
  repo = gh.createRepo('acme/sim', {
    files: {
      'topologies/presets/8gpu_64rollouts.yaml': PRESET,
      [`topologies/${ID}/experiment.yaml`]: experimentYaml,
    },
  });
  gh.addCollaborator(repo, 'alice', 'write');
  ensureStateLabels(gh, repo);
  pull = gh.openPull({
    repo,
    author: 'alice',
    title: 'two ideas',
    head: 'two',
    files: {
      [`topologies/${ID}/alpha.yaml`]: workersCandidate('alpha', 10),
      [`topologies/${ID}/bravo.yaml`]: workersCandidate('bravo', 12),
    },
  });
});

afterAll(async () => {
  await cancelLiveJobs(slurm, ID);
  await slurm?.close();
  await gh?.close();
});

const env = () => ({ SLURM_CONF: cluster.slurmConf });
const liveJobs = async () => (await slurm.jobs(`topo-${ID}-`)).filter((j) => isLive(j.state));
const state = () =>
  parseRunStateBlock(
    gh.state
      .commentsOn(repo, pull.number)
      .find((c) => c.user.login === gh.botLogin && c.body.startsWith('<!-- topo:sticky:lifecycle -->'))?.body,
  );

async function command(body: string) {
  const run = await runAction('submit', {
    event: issueCommentEvent(gh, gh.comment(repo, pull.number, 'alice', body)),
    apiUrl: gh.url,
    repository: 'acme/sim',
    token: gh.token,
    workspace,
    env: env(),
  });
  return { outcome: run.outputs.outcome, reply: gh.state.commentsOn(repo, pull.number).at(-1)?.body ?? '' };
}

const monitorPass = () =>
  runAction('monitor', {
    event: pullRequestEvent(gh, pull, 'synchronize', { sender: 'alice' }),
    apiUrl: gh.url,
    repository: 'acme/sim',
    token: gh.token,
    workspace,
    inputs: { 'tick-seconds': '600' },
    env: env(),
    timeoutMs: 120_000,
  });

describe('a pull request closed with a running and a queued Request', () => {
  let alphaJob = '';

  it('closing cancels the running job and ends both Requests; the record says so', async () => {
    const submit = await command('/topo submit');
    expect(submit.outcome, submit.reply).toBe('done');
    expect(submit.reply).toMatch(/alpha-[0-9a-f]{8}-[0-9a-f]{8}` submitted as Slurm job/);
    expect(submit.reply).toMatch(/bravo-[0-9a-f]{8}-[0-9a-f]{8}` queued at position 1/);
    alphaJob = (await liveJobs())[0]?.id ?? '';
    expect(alphaJob).not.toBe('');

    gh.closePull(pull);
    const record = await runAction('record', {
      event: pullRequestEvent(gh, pull, 'closed'),
      apiUrl: gh.url,
      repository: 'acme/sim',
      token: gh.token,
      workspace,
      inputs: { 'prometheus-url': 'none' },
      env: env(),
    });
    expect(record.exitCode, record.stderr + record.stdout).toBe(0);
    expect(await liveJobs()).toEqual([]);
    expect(JSON.parse(record.outputs['cancelled-jobs'] ?? '[]')).toEqual([alphaJob]);
    const s = state();
    expect(s.requests.map((r) => [r.candidate, s.outcomes[r.id]?.kind])).toEqual([
      ['alpha', 'closed'],
      ['bravo', 'closed'],
    ]);
    const bravo = s.requests.find((r) => r.candidate === 'bravo');
    expect(s.outcomes[bravo?.id ?? '']?.evidence.join(' ')).toContain('it never ran');
    const runs = JSON.parse(gh.files(repo).get(`experiments/${ID}.json`) as string).runs as Array<{
      name: string;
      status: string;
      decision: { reason: string };
      stable_metrics?: { telemetry_quality?: { gaps?: string[] } };
    }>;
    expect(runs.find((r) => r.name === 'bravo')).toMatchObject({
      status: 'rejected',
      decision: { reason: 'closed before its run started: it never ran' },
    });
    expect(runs.find((r) => r.name === 'alpha')?.stable_metrics?.telemetry_quality?.gaps).toContain(
      `run cut short: Slurm job ${alphaJob} was still running when the pull request closed; it was cancelled`,
    );
    expect(record.summary).toContain('open run request(s) ended with it');
  });
});
