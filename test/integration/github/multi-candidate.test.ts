import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseObservationBlock } from '../../../src/report/observation-block.js';
import { isLive, type SlurmClient } from '../../../src/slurm/types.js';
import {
  cancelLiveJobs,
  clusterSlurm,
  defaultBranchWorkspace,
  ensureStateLabels,
  experimentRepo,
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
import { runAction } from '../../support/run-action.js';

const suffix = uniqueSuffix();
const experimentId = `topology-opt-mul${suffix}-local-20260101`;
const experimentYaml = twinExperimentYaml(experimentId, { maxParallel: 3 });
const candidate = workersCandidate;
const dir = `topologies/${experimentId}`;

let cluster: LocalClusterEnv;
let gh: GitHubServer;
let repo: Repo;
let pull: Pull;
let slurm: SlurmClient;
let workspace: string;

beforeAll(async () => {
  cluster = requireCluster();
  slurm = clusterSlurm(cluster.clustersFile, 'local');
  workspace = defaultBranchWorkspace('multi', {
    experimentId,
    experimentYaml,
    clustersFile: cluster.clustersFile,
  });
  gh = await startGitHubServer();
  repo = experimentRepo(gh, experimentId, experimentYaml);
  pull = gh.openPull({
    repo,
    author: 'alice',
    title: 'two ideas',
    head: 'two-ideas',
    files: {
      [`${dir}/alpha.yaml`]: candidate('alpha', 10),
      [`${dir}/bravo.yml`]: candidate('bravo', 12),
      [`${dir}/broken.yaml`]: 'name: broken\ntopology:\n  services:\n    driver:\n      gpus: [0, 99]\n',
    },
  });
  ensureStateLabels(gh, repo);
});

afterAll(async () => {
  await cancelLiveJobs(slurm, experimentId);
  await slurm?.close();
  await gh?.close();
});

async function command(body: string) {
  const run = await runAction('submit', {
    event: issueCommentEvent(gh, gh.comment(repo, pull.number, 'alice', body)),
    apiUrl: gh.url,
    repository: 'acme/sim',
    token: gh.token,
    workspace,
    env: { SLURM_CONF: cluster.slurmConf },
    timeoutMs: 60_000,
  });
  expect(run.exitCode, run.stderr + run.stdout).toBe(0);
  const reply = gh.state.commentsOn(repo, pull.number).at(-1)?.body ?? '';
  return { outcome: run.outputs.outcome, reply };
}

const live = async (name: string) =>
  (await slurm.jobs(`topo-${experimentId}-${name}-`)).filter((j) => isLive(j.state));
const sticky = (purpose: string) =>
  gh.state
    .commentsOn(repo, pull.number)
    .find((c) => c.user.login === gh.botLogin && c.body.startsWith(`<!-- topo:sticky:${purpose} -->`))
    ?.body ?? '';
const runName = (name: string) => new RegExp(`topo-${experimentId}-${name}-[0-9a-f]{8}-[0-9a-f]{8}`);

describe('a pull request with several candidates', () => {
  let alphaJob = '';
  let bravoName = '';

  it('/topo submit submits each valid candidate as its own run and answers for the invalid one', async () => {
    const { outcome, reply } = await command('/topo submit');
    expect(outcome).toBe('done');
    const [alpha, bravo] = [await live('alpha'), await live('bravo')];
    expect(alpha).toHaveLength(1);
    expect(bravo).toHaveLength(1);
    alphaJob = alpha[0]?.id ?? '';
    bravoName = bravo[0]?.name ?? '';
    expect(alpha[0]?.name).toMatch(runName('alpha'));
    expect(bravoName).toMatch(runName('bravo'));
    expect(await live('broken')).toEqual([]);
    expect(reply).toMatch(/alpha-[0-9a-f]{8}-[0-9a-f]{8}` submitted as Slurm job/);
    expect(reply).toMatch(/bravo-[0-9a-f]{8}-[0-9a-f]{8}` submitted as Slurm job/);
    expect(reply).toMatch(/broken\.yaml` does not pass validation[\s\S]*\[gpu-index\]/);
    expect(sticky('submit-alpha')).toContain('### Submission of `alpha`');
    expect(sticky('submit-bravo')).toContain('### Submission of `bravo`');
    expect(sticky('lifecycle').match(/\| submitted \|/g)).toHaveLength(2);
    expect(pull.labels).toContain('topology:running');
  });

  it('/topo submit <candidate> names one of the pull request’s candidates, or is refused', async () => {
    const { outcome, reply } = await command('/topo submit charlie');
    expect(outcome).toBe('refused');
    expect(reply).toContain('no candidate `charlie`; its candidates are `alpha`, `bravo`, `broken`');
    const again = await command('/topo submit alpha');
    expect(again.outcome).toBe('done');
    expect(again.reply).toMatch(/alpha.*already running as Slurm job/);
    expect(again.reply).not.toContain('bravo');
    expect((await live('alpha')).map((j) => j.id)).toEqual([alphaJob]);
  });

  it('the monitor follows each candidate’s run', async () => {
    const pass = await runAction('monitor', {
      event: pullRequestEvent(gh, pull, 'synchronize', { sender: 'alice' }),
      apiUrl: gh.url,
      repository: 'acme/sim',
      token: gh.token,
      workspace,
      inputs: { 'tick-seconds': '600' },
      env: { SLURM_CONF: cluster.slurmConf },
      timeoutMs: 120_000,
    });
    expect(pass.exitCode, pass.stderr + pass.stdout).toBe(0);
    const states = JSON.parse(pass.outputs.states ?? '{}') as Record<string, string>;
    const alphaName = (await live('alpha'))[0]?.name;
    expect(Object.keys(states).sort()).toEqual([alphaName, bravoName].sort());
    // each candidate's own comment shows its own run (they no longer overwrite one `monitor` comment)
    expect(parseObservationBlock(sticky('monitor-alpha'))?.run_name).toBe(alphaName);
    expect(parseObservationBlock(sticky('monitor-bravo'))?.run_name).toBe(bravoName);
    expect(sticky('monitor')).toBe('');
    // one check run on the head, over both candidates (the name branch protection requires)
    const checks = gh.state.checkRuns.filter((r) => r.repo === repo && r.headSha === pull.head.sha);
    expect(checks.map((r) => r.name)).toEqual(['topo/monitor']);
    expect(checks[0]?.output.title).toMatch(/^2 candidates: (alpha|bravo): .*; (alpha|bravo): /);
    expect(checks[0]?.output.summary).toContain('### `alpha`');
    expect(checks[0]?.output.summary).toContain('### `bravo`');
    expect(pull.labels.filter((l) => l.startsWith('topology:'))).toEqual(['topology:running']);
  });

  it('/topo status answers for both candidates and refreshes both comments', async () => {
    const before = sticky('monitor-bravo');
    const { outcome, reply } = await command('/topo status');
    expect(outcome).toBe('done');
    expect(reply).toContain("2 candidates; each one's monitor comment is up to date:");
    expect(reply).toMatch(new RegExp(`- \`alpha\`: \`${runName('alpha').source}\` is \\*\\*\\w+\\*\\*`));
    expect(reply).toContain(`- \`bravo\`: \`${bravoName}\` is **`);
    expect(parseObservationBlock(sticky('monitor-bravo'))?.run_name).toBe(bravoName);
    expect(parseObservationBlock(sticky('monitor-alpha'))?.run_name).toMatch(runName('alpha'));
    expect(before).not.toBe('');
  });

  it('/topo cancel <candidate> cancels that candidate only; a new submit runs it under a new label', async () => {
    const { outcome, reply } = await command('/topo cancel bravo');
    expect(outcome).toBe('done');
    expect(reply).toContain(`\`${bravoName}\`: cancelled job`);
    expect(await live('bravo')).toEqual([]);
    expect((await live('alpha')).map((j) => j.id)).toEqual([alphaJob]);
    expect(pull.labels).toContain('topology:running');

    expect((await command('/topo submit bravo')).outcome).toBe('done');
    const rerun = await live('bravo');
    expect(rerun).toHaveLength(1);
    expect(rerun[0]?.name).toMatch(runName('bravo'));
    expect(rerun[0]?.name).not.toBe(bravoName);
  });

  it('/topo stop without a name stops every open run of the pull request', async () => {
    const { outcome, reply } = await command('/topo stop');
    expect(outcome).toBe('done');
    expect(reply.match(/: stopped job \d+/g)).toHaveLength(2);
    expect(await live('alpha')).toEqual([]);
    expect(await live('bravo')).toEqual([]);
    expect((await command('/topo cancel')).reply).toContain('nothing to cancel');
    expect(gh.violations()).toEqual([]);
  });
});
