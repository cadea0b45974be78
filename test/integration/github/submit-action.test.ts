// The bundled submit action as a runner runs it, against the local GitHub API: the /topo router's
// parsing, reactions, permission and fork refusals, replies, and the submit label.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Pull, Repo } from '../../../src/github-local/index.js';
import { issueCommentEvent, pullRequestEvent } from '../../support/events.js';
import { runActionOn, useLocalGitHub } from '../../support/local-github.js';

const { gh } = useLocalGitHub({ strict: true });
let repo: Repo;
let pull: Pull;
let forkPull: Pull;
let token: string;

// The token carries exactly the permissions topology-submit.yml grants.
const SUBMIT_PERMISSIONS = {
  contents: 'read',
  checks: 'write',
  'pull-requests': 'write',
  issues: 'write',
} as const;

beforeAll(() => {
  token = gh.createToken(gh.botLogin, { permissions: { ...SUBMIT_PERMISSIONS } });
  repo = gh.createRepo('acme/sim', { files: { 'topologies/clusters.yaml': 'clusters: {}\n' } });
  gh.addCollaborator(repo, 'alice', 'write');
  gh.addCollaborator(repo, 'tom', 'triage');
  gh.state.user('stranger');
  pull = gh.openPull({
    repo,
    author: 'alice',
    title: 'c1',
    head: 'c1',
    files: { 'topologies/e/c1.yaml': 'name: c1\n' },
  });
  const fork = gh.fork(repo, 'mallory');
  forkPull = gh.openPull({
    repo,
    headRepo: fork,
    author: 'mallory',
    title: 'x',
    head: 'x',
    files: { 'topologies/e/x.yaml': 'name: x\n' },
  });
});

async function commentAndRun(p: Pull, login: string, body: string) {
  const comment = gh.comment(repo, p.number, login, body);
  const run = await runActionOn(gh, 'submit', { event: issueCommentEvent(gh, comment), token });
  const reactions = gh.state.reactions.filter((r) => r.commentId === comment.id).map((r) => r.content);
  const replies = gh.state.comments
    .filter((c) => c.id > comment.id && c.user.login === gh.botLogin)
    .map((c) => c.body);
  return { run, reactions, replies };
}

describe('submit action: /topo commands', () => {
  it('answers help with the command table and a rocket', async () => {
    const { run, reactions, replies } = await commentAndRun(pull, 'alice', '/topo help');
    expect(run.exitCode).toBe(0);
    expect(run.outputs).toEqual({ command: 'help', outcome: 'done' });
    expect(reactions).toEqual(['eyes', 'rocket']);
    expect(replies[0]).toMatch(/^> \/topo help\n\n.*\| `\/topo submit \[<candidate>\]` \|/s);
  });

  it('answers an unknown command with the help and confused', async () => {
    const { run, reactions, replies } = await commentAndRun(pull, 'alice', '/topo deploy now');
    expect(run.outputs.outcome).toBe('invalid');
    expect(reactions).toEqual(['eyes', 'confused']);
    expect(replies[0]).toMatch(/I did not understand that: unknown command `deploy`/);
  });

  it('refuses a fork pull request, saying why', async () => {
    const { run, reactions, replies } = await commentAndRun(forkPull, 'alice', '/topo submit');
    expect(run.exitCode).toBe(0);
    expect(run.outputs.outcome).toBe('refused');
    expect(reactions).toEqual(['eyes', 'confused']);
    expect(replies[0]).toMatch(/not available on pull requests from forks/);
  });

  it.each([
    ['stranger', 'read'],
    ['tom', 'triage'],
  ])('refuses %s (%s access), saying why', async (login, level) => {
    const { run, reactions, replies } = await commentAndRun(pull, login, '/topo submit');
    expect(run.outputs.outcome).toBe('refused');
    expect(reactions).toEqual(['eyes', 'confused']);
    expect(replies[0]).toContain(
      `Sorry @${login}, \`/topo submit\` needs write access to acme/sim (you have ${level})`,
    );
  });

  it('acknowledges /topo reject for the record', async () => {
    const { run, reactions, replies } = await commentAndRun(
      pull,
      'alice',
      '/topo reject driver-bound, no gain',
    );
    expect(run.outputs).toEqual({ command: 'reject', outcome: 'done' });
    expect(reactions).toEqual(['eyes', 'rocket']);
    expect(replies[0]).toMatch(/recorded as \*\*rejected\*\*/);
  });

  it('ignores ordinary comments and its own comments without any API call', async () => {
    gh.resetCalls();
    const plain = await commentAndRun(pull, 'alice', 'looks good to me');
    expect(plain.run.outputs.outcome).toBe('ignored');
    const own = await commentAndRun(pull, gh.botLogin, '/topo submit');
    expect(own.run.outputs.outcome).toBe('ignored');
    expect(gh.calls()).toEqual([]);
  });

  it('masks the token', async () => {
    const { run } = await commentAndRun(pull, 'alice', '/topo help');
    expect(run.masks).toContain(token);
  });
});

describe('submit action: the submit label', () => {
  // Labels only display state: a hand-added topology:* label (triage access suffices to add one)
  // is removed with a reply, and starts nothing, whoever added it.
  for (const sender of ['tom', 'alice']) {
    it(`removes a topology label added by hand (${sender}) and starts nothing`, async () => {
      pull.labels.push('topology:submit');
      const before = gh.state.commentsOn(repo, pull.number).length;
      const run = await runActionOn(gh, 'submit', {
        event: pullRequestEvent(gh, pull, 'labeled', { label: 'topology:submit', sender }),
        token,
      });
      expect(run.outputs.outcome).toBe('refused');
      expect(pull.labels).not.toContain('topology:submit');
      const replies = gh.state.commentsOn(repo, pull.number).slice(before);
      expect(replies).toHaveLength(1);
      expect(replies[0]?.body).toMatch(/was removed: `topology:\*` labels only show the state of a run/);
      expect(replies[0]?.body).toContain('/topo submit');
      expect(replies.some((c) => c.body.includes('topo:run-state'))).toBe(false);
    });
  }

  it('ignores other labels', async () => {
    const run = await runActionOn(gh, 'submit', {
      event: pullRequestEvent(gh, pull, 'labeled', { label: 'documentation', sender: 'alice' }),
      token,
    });
    expect(run.outputs.outcome).toBe('ignored');
  });
});
