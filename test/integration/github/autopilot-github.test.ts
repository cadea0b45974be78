// The autopilot's GitHub side on the local GitHub API (every request checked against GitHub's
// OpenAPI description): the bot branch as the lock (two passes at once, a pass that died between
// the branch and the pull request), the bot pull requests read back (a person's push, a person's
// close, a forged marker), and the dashboard issue with its permission-checked controls.
import { describe, expect, it } from 'vitest';
import { botBranch } from '../../../src/autopilot/core.js';
import { dashboardMarker, dashboardTitle } from '../../../src/autopilot/dashboard.js';
import { botPullBody, botPullTitle } from '../../../src/autopilot/pulls.js';
import { EMPTY_PILOT_STATE, PilotStateError } from '../../../src/autopilot/state.js';
import { createOctokit } from '../../../src/github/client.js';
import {
  botTrailer,
  changedFiles,
  closeWithComment,
  commitBotProposal,
  dashboardControls,
  findDashboard,
  listBotPulls,
  openBotPull,
  pilotStateBranch,
  readPilotState,
  updatePilotState,
  writeDashboard,
} from '../../../src/usecases/autopilot-github.js';
import { useLocalGitHub } from '../../support/local-github.js';

const { gh, octokit } = useLocalGitHub({ strict: false });
const EXP = 'topology-opt-vam-local-20260101';
const target = () => ({ owner: 'acme', repo: 'sim', botLogin: gh.botLogin });
let n = 0;

function freshRepo() {
  const name = `sim${++n}`;
  const repo = gh.createRepo(`acme/${name}`, { files: { [`topologies/${EXP}/experiment.yaml`]: 'x: 1\n' } });
  gh.addCollaborator(repo, 'alice', 'write');
  gh.addCollaborator(repo, 'rita', 'read');
  return { repo, t: { ...target(), repo: name } };
}

const request = (candidate: string, round = 1) => ({
  experimentId: EXP,
  candidate,
  path: `topologies/${EXP}/${candidate}.yaml`,
  text: `name: ${candidate}\n`,
  title: botPullTitle(EXP, candidate, round),
  body: botPullBody(EXP, candidate, round, `**Hypothesis.** ${candidate} helps`),
});

/** One pass's opening of a candidate: the bot's commit, then its branch and pull request from it. */
async function open(t: ReturnType<typeof target>, candidate: string, round = 1) {
  const sha = await commitBotProposal(octokit, t, request(candidate, round));
  return openBotPull(octokit, t, { experimentId: EXP, candidate, sha });
}

describe('bot pull requests on the local GitHub API', () => {
  it('two passes opening the same candidate at once make one branch and one pull request', async () => {
    const { repo, t } = freshRepo();
    const gate = gh.holdTogether({ match: /^POST \/repos\/acme\/sim\d+\/git\/refs$/, count: 2 });
    const [a, b] = await Promise.all([open(t, 'p1'), open(t, 'p1')]);
    expect(gate.met()).toBe(true);
    expect(a?.pr).toBe(b?.pr);
    expect([a?.created, b?.created].sort()).toEqual([false, true]);
    expect(gh.state.pullsOf(repo).map((p) => p.head.ref)).toEqual([botBranch(EXP, 'p1')]);
    expect(await changedFiles(octokit, t, a?.pr as number)).toEqual([`topologies/${EXP}/p1.yaml`]);
    expect(gh.violations()).toEqual([]);
  });

  it('a pass that died between the branch and the pull request: the next opens it from the branch', async () => {
    const { repo, t } = freshRepo();
    // the branch alone, as a pass killed after createRef leaves it
    gh.failNext({ match: /^POST \/repos\/acme\/sim\d+\/pulls$/, status: 403 }); // the pass dies here
    await expect(open(t, 'p2')).rejects.toThrow();
    expect(gh.state.pullsOf(repo)).toHaveLength(0);
    expect(repo.refs.has(`refs/heads/${botBranch(EXP, 'p2')}`)).toBe(true);
    const again = await open(t, 'p2');
    expect(again).toMatchObject({ created: true });
    expect(await open(t, 'p2')).toEqual({ pr: again?.pr, created: false });
    expect(gh.state.pullsOf(repo)).toHaveLength(1);
    const [pull] = await listBotPulls(octokit, t, EXP);
    expect(pull).toMatchObject({ candidate: 'p2', round: 1, state: 'open', takenOver: false });
  });

  it('a person closes one: it reads as closed and is never opened again; a person pushes to one: taken over', async () => {
    const { repo, t } = freshRepo();
    const closed = await open(t, 'p3');
    const pushed = await open(t, 'p4', 2);
    gh.closePull(gh.state.pull(repo, closed?.pr as number) as never);
    expect(await open(t, 'p3')).toBeNull();
    // alice pushes a commit of her own on the bot's branch
    const alice = createOctokit({ token: gh.createToken('alice', { kind: 'user' }), baseUrl: gh.url });
    const ref = `heads/${botBranch(EXP, 'p4')}`;
    const head = (await alice.rest.git.getRef({ owner: 'acme', repo: t.repo, ref })).data.object.sha;
    const tree = (await alice.rest.git.getCommit({ owner: 'acme', repo: t.repo, commit_sha: head })).data.tree
      .sha;
    const mine = await alice.rest.git.createCommit({
      owner: 'acme',
      repo: t.repo,
      message: 'my own take',
      tree,
      parents: [head],
    });
    await alice.rest.git.updateRef({ owner: 'acme', repo: t.repo, ref, sha: mine.data.sha });
    gh.state.pull(repo, pushed?.pr as number)!.head.sha = mine.data.sha;
    // a person's pull request quoting the marker is not the bot's
    gh.openPull({
      repo,
      author: 'alice',
      title: 'forged',
      head: botBranch(EXP, 'p9'),
      body: botPullBody(EXP, 'p9', 1, 'x'),
      files: { [`topologies/${EXP}/p9.yaml`]: 'name: p9\n' },
    });
    const pulls = await listBotPulls(octokit, t, EXP);
    expect(pulls.map((p) => [p.candidate, p.round, p.state, p.takenOver]).sort()).toEqual([
      ['p3', 1, 'closed', false],
      ['p4', 2, 'open', true],
    ]);
    expect(botTrailer(EXP, 'p4')).toBe(`Topo-Autopilot: ${EXP}/p4`);
  });

  it('closes a decided pull request with its decision', async () => {
    const { repo, t } = freshRepo();
    const opened = await open(t, 'p5');
    await closeWithComment(
      octokit,
      t,
      opened?.pr as number,
      'Closed by the autopilot: `p5` is rejected by its decision.',
    );
    const pull = gh.state.pull(repo, opened?.pr as number);
    expect(pull?.state).toBe('closed');
    expect(gh.state.commentsOn(repo, opened?.pr as number).map((c) => c.body)).toEqual([
      'Closed by the autopilot: `p5` is rejected by its decision.',
    ]);
  });

  it('closes a pull request once: closed already, or commented by a pass that died before the close, it gets no second comment (issue 42)', async () => {
    const { repo, t } = freshRepo();
    const text = 'Closed by the autopilot: `p6` is rejected by its decision.';
    const opened = await open(t, 'p6');
    const pr = opened?.pr as number;
    // a pass posted the comment and died before the close: the next pass closes it without a second
    await octokit.rest.issues.createComment({ owner: t.owner, repo: t.repo, issue_number: pr, body: text });
    expect(await closeWithComment(octokit, t, pr, text)).toBe(true);
    // a later pass that still plans the close (the pull read open before it was closed)
    expect(await closeWithComment(octokit, t, pr, text)).toBe(false);
    expect(gh.state.pull(repo, pr)?.state).toBe('closed');
    expect(gh.state.commentsOn(repo, pr).map((c) => c.body)).toEqual([text]);
  });
});

describe('the dashboard issue', () => {
  it('is created once, rewritten only when its text changes, closed with the conclusion; a person’s copy is not it', async () => {
    const { repo, t } = freshRepo();
    const marker = dashboardMarker(EXP);
    const input = { marker, title: dashboardTitle(EXP), close: false };
    // a person's issue quoting the marker is not the dashboard
    gh.state.addIssue(repo, gh.state.user('alice'), 'copy', `${marker}\nfake`);
    const number = await writeDashboard(octokit, t, { ...input, body: `${marker}\nround 1` });
    gh.resetCalls();
    expect(await writeDashboard(octokit, t, { ...input, body: `${marker}\nround 1` })).toBe(number);
    expect(gh.calls().filter((c) => c.method !== 'GET')).toEqual([]);
    await writeDashboard(octokit, t, { ...input, body: `${marker}\nconcluded`, close: true });
    expect(await findDashboard(octokit, t, marker)).toEqual({
      number,
      state: 'closed',
      body: `${marker}\nconcluded`,
    });
    // an issue is not a pull request
    expect(gh.state.pullsOf(repo).map((p) => p.number)).not.toContain(number);
    expect(gh.violations()).toEqual([]);
  });

  it('takes controls from writers only, in order, after the last one answered, one permission check per login', async () => {
    const { repo, t } = freshRepo();
    const marker = dashboardMarker(EXP);
    const number = await writeDashboard(octokit, t, {
      marker,
      title: 'd',
      body: `${marker}\nx`,
      close: false,
    });
    const first = gh.comment(repo, number, 'alice', '/topo pause');
    gh.comment(repo, number, 'rita', '/topo resume');
    gh.comment(repo, number, 'alice', 'a remark');
    gh.comment(repo, number, 'alice', '/topo resume');
    gh.resetCalls();
    const comments = await dashboardControls(octokit, t, number);
    expect(comments.map((c) => [c.login, c.allowed])).toEqual([
      ['alice', true],
      ['rita', false],
      ['alice', true],
    ]);
    const checks = gh.calls().filter((c) => c.operationId === 'repos/get-collaborator-permission-level');
    expect(checks).toHaveLength(2);
    const later = await dashboardControls(octokit, t, number, first.id);
    expect(later.map((c) => c.body)).toEqual(['/topo resume', '/topo resume']);
  });

  it('keeps the bot’s state on its own branch, compare-and-swap: two writers at once both land', async () => {
    const { t } = freshRepo();
    expect(await readPilotState(octokit, t, EXP)).toEqual({ state: EMPTY_PILOT_STATE, sha: null });
    await updatePilotState(octokit, t, EXP, (s) => ({ ...s, rounds: { p0: 1 } }));
    const gate = gh.holdTogether({ match: /^PATCH \/repos\/acme\/sim\d+\/git\/refs\//, count: 2 });
    await Promise.all([
      updatePilotState(octokit, t, EXP, (s) => ({ ...s, paused: { by: 'alice', now: false } })),
      updatePilotState(octokit, t, EXP, (s) => ({ ...s, rounds: { ...s.rounds, p1: 1 } })),
    ]);
    expect(gate.met()).toBe(true);
    const { state } = await readPilotState(octokit, t, EXP);
    expect(state.paused).toEqual({ by: 'alice', now: false });
    expect(state.rounds).toEqual({ p0: 1, p1: 1 });
    expect(gh.violations()).toEqual([]);
  });

  it('refuses a state branch that does not hold the bot’s state, never reading it as empty', async () => {
    const { repo, t } = freshRepo();
    await updatePilotState(octokit, t, EXP, (s) => ({ ...s, concludeBy: 'alice' }));
    const branch = pilotStateBranch(EXP);
    const head = gh.state.commitFiles(gh.state.user('alice'), gh.state.branchSha(repo, branch), {}, 'oops');
    repo.refs.set(`refs/heads/${branch}`, head);
    await expect(readPilotState(octokit, t, EXP)).rejects.toThrow(PilotStateError);
  });

  it('needs issues: write: a workflow token with pull-requests: write alone cannot create it', async () => {
    const { t } = freshRepo();
    const token = gh.createToken(gh.botLogin, {
      kind: 'installation',
      permissions: { contents: 'write', 'pull-requests': 'write', metadata: 'read' },
    });
    const limited = createOctokit({ token, baseUrl: gh.url });
    const marker = dashboardMarker(EXP);
    await expect(
      writeDashboard(limited, t, { marker, title: 'd', body: marker, close: false }),
    ).rejects.toMatchObject({
      status: 403,
    });
  });
});
