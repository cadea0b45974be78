// src/github against the local GitHub API: sticky comments, check runs, labels, permissions,
// reactions, with the calls each one makes.
import { beforeAll, describe, expect, it } from 'vitest';
import { upsertCheckRun } from '../../../src/github/check-runs.js';
import { changedFiles, githubFileSource } from '../../../src/github/contents.js';
import { setStateLabel } from '../../../src/github/labels.js';
import { checkCommandAllowed, pullOrigin } from '../../../src/github/permissions.js';
import { reactToComment } from '../../../src/github/reactions.js';
import { readStickyComment, upsertStickyComment } from '../../../src/github/sticky-comment.js';
import type { Pull, Repo } from '../../../src/github-local/index.js';
import { useLocalGitHub } from '../../support/local-github.js';

const { gh, octokit } = useLocalGitHub({ strict: true, resetCalls: true });
let repo: Repo;
let pull: Pull;
const owner = 'acme';
const name = 'sim';

beforeAll(async () => {
  repo = gh.createRepo(`${owner}/${name}`, { files: { 'README.md': '# sim\n' } });
  gh.addCollaborator(repo, 'alice', 'write');
  gh.addCollaborator(repo, 'maya', 'maintain');
  gh.addCollaborator(repo, 'tom', 'triage');
  gh.state.user('stranger');
  pull = gh.openPull({
    repo,
    author: 'alice',
    title: 'candidate',
    head: 'c1',
    files: { 'topologies/e/c1.yaml': 'x: 1\n' },
  });
});

const target = () => ({
  owner,
  repo: name,
  issue_number: pull.number,
  purpose: 'monitor',
  botLogin: gh.botLogin,
});

describe('sticky comment', () => {
  it('creates once, edits in place, and does not write when unchanged', async () => {
    const first = await upsertStickyComment(octokit, { ...target(), body: 'state: running' });
    expect(first.changed).toBe(true);
    const second = await upsertStickyComment(octokit, { ...target(), body: 'state: stable' });
    expect(second).toMatchObject({ id: first.id, changed: true });
    // the parts as they now stand, so a caller can write again without listing
    expect(second.parts.map((p) => [p.id, p.body])).toEqual([
      [first.id, '<!-- topo:sticky:monitor -->\nstate: stable'],
    ]);
    gh.resetCalls();
    const third = await upsertStickyComment(octokit, { ...target(), body: 'state: stable' });
    expect(third).toMatchObject({ id: first.id, changed: false });
    expect(gh.calls().map((c) => c.method)).toEqual(['GET']);
    expect(await readStickyComment(octokit, target())).toBe('state: stable');
    expect(gh.state.commentsOn(repo, pull.number)).toHaveLength(1);
  });

  it('ignores a user comment that quotes the marker, and other purposes', async () => {
    gh.comment(repo, pull.number, 'alice', '<!-- topo:sticky:validate -->\nfake');
    const r = await upsertStickyComment(octokit, { ...target(), purpose: 'validate', body: 'real' });
    const mine = gh.state.comments.find((c) => c.id === r.id);
    expect(mine?.user.login).toBe(gh.botLogin);
    expect(
      gh.state.commentsOn(repo, pull.number).filter((c) => c.body === '<!-- topo:sticky:validate -->\nfake'),
    ).toHaveLength(1);
    expect(await readStickyComment(octokit, target())).toBe('state: stable');
  });

  it('splits a body over 65,536 characters into parts and folds them back when it shrinks', async () => {
    const long = `${'| a | b |\n'.repeat(9000)}END`;
    const r = await upsertStickyComment(octokit, { ...target(), purpose: 'submit', body: long });
    const parts = gh.state
      .commentsOn(repo, pull.number)
      .filter((c) => c.body.startsWith('<!-- topo:sticky:submit'));
    expect(parts.length).toBe(2);
    for (const p of parts) expect(p.body.length).toBeLessThanOrEqual(65_536);
    expect(parts[0]?.id).toBe(r.id);
    await upsertStickyComment(octokit, { ...target(), purpose: 'submit', body: 'short' });
    const after = gh.state
      .commentsOn(repo, pull.number)
      .filter((c) => c.body.startsWith('<!-- topo:sticky:submit'));
    expect(after.map((c) => c.body)).toEqual(['<!-- topo:sticky:submit -->\nshort']);
  });
});

describe('check runs', () => {
  it('sends 120 annotations in batches of 50 with the conclusion last', async () => {
    const annotations = Array.from({ length: 120 }, (_, i) => ({
      path: 'topologies/e/c1.yaml',
      start_line: i + 1,
      end_line: i + 1,
      start_column: 1,
      end_column: 3,
      annotation_level: 'failure' as const,
      message: `problem ${i}`,
    }));
    const r = await upsertCheckRun(octokit, {
      owner,
      repo: name,
      name: 'topology / validate',
      head_sha: pull.head.sha,
      conclusion: 'failure',
      title: '120 problems',
      summary: 'see annotations',
      annotations,
    });
    expect(r.created).toBe(true);
    const run = gh.state.checkRuns.find((c) => c.id === r.id);
    expect(run?.annotations).toHaveLength(120);
    expect(run?.conclusion).toBe('failure');
    expect(gh.calls().map((c) => c.operationId)).toEqual([
      'checks/list-for-ref',
      'checks/create',
      'checks/update',
      'checks/update',
    ]);
  });

  it('reuses a run without annotations and creates a fresh one rather than duplicate annotations', async () => {
    const a = await upsertCheckRun(octokit, {
      owner,
      repo: name,
      name: 'topology / monitor',
      head_sha: pull.head.sha,
      title: 'running',
      summary: 's',
    });
    const b = await upsertCheckRun(octokit, {
      owner,
      repo: name,
      name: 'topology / monitor',
      head_sha: pull.head.sha,
      title: 'stable',
      summary: 's',
      conclusion: 'success',
    });
    expect(b).toEqual({ id: a.id, created: false });
    const again = await upsertCheckRun(octokit, {
      owner,
      repo: name,
      name: 'topology / validate',
      head_sha: pull.head.sha,
      conclusion: 'success',
      title: 'ok',
      summary: 'ok',
    });
    expect(again.created).toBe(true);
  });
});

describe('pull request files as data', () => {
  it('reads files and folders at the head commit; paths outside the repository do not exist', async () => {
    const files = githubFileSource(octokit, { owner, repo: name, ref: pull.head.sha });
    expect(await files.read('topologies/e/c1.yaml')).toBe('x: 1\n');
    expect(await files.read('./topologies/e/c1.yaml')).toBe('x: 1\n');
    expect(await files.list('topologies/e')).toEqual(['c1.yaml']);
    expect(await files.read('topologies/e/missing.yaml')).toBeUndefined();
    expect(await files.list('topologies/e/c1.yaml')).toBeUndefined();
    expect(await files.read('topologies/../../etc/passwd')).toBeUndefined();
    expect(await files.read('/etc/passwd')).toBeUndefined();
    // The default branch does not have the candidate yet.
    const base = githubFileSource(octokit, { owner, repo: name, ref: 'main' });
    expect(await base.read('topologies/e/c1.yaml')).toBeUndefined();
    expect(await changedFiles(octokit, { owner, repo: name, pull_number: pull.number })).toEqual([
      { path: 'topologies/e/c1.yaml', status: 'added' },
    ]);
  });
});

describe('labels, reactions, permissions', () => {
  it('keeps exactly one state label', async () => {
    const t = { owner, repo: name, issue_number: pull.number };
    await setStateLabel(octokit, t, 'queued');
    await setStateLabel(octokit, t, 'running');
    expect(await setStateLabel(octokit, t, 'running')).toBe(false);
    expect(pull.labels).toEqual(['topology:running']);
  });

  it('reacts idempotently', async () => {
    const c = gh.comment(repo, pull.number, 'alice', '/topo submit');
    await reactToComment(octokit, { owner, repo: name, comment_id: c.id }, 'received');
    await reactToComment(octokit, { owner, repo: name, comment_id: c.id }, 'received');
    await reactToComment(octokit, { owner, repo: name, comment_id: c.id }, 'succeeded');
    expect(gh.state.reactions.filter((r) => r.commentId === c.id).map((r) => r.content)).toEqual([
      'eyes',
      'rocket',
    ]);
  });

  it('allows write and maintain, refuses triage, strangers and forks', async () => {
    const { data } = await octokit.rest.pulls.get({ owner, repo: name, pull_number: pull.number });
    const origin = pullOrigin(data);
    const ask = (username: string, p = origin) =>
      checkCommandAllowed(octokit, { owner, repo: name, username, command: 'submit', pull: p });
    expect(await ask('alice')).toEqual({ allowed: true, permission: 'write' });
    expect(await ask('maya')).toEqual({ allowed: true, permission: 'maintain' });
    expect((await ask('tom')).allowed).toBe(false);
    const stranger = await ask('stranger');
    expect(!stranger.allowed && stranger.reason).toMatch(/needs write access.*you have read/);
    const fork = gh.fork(repo, 'mallory');
    const forkPull = gh.openPull({
      repo,
      headRepo: fork,
      author: 'mallory',
      title: 'evil',
      head: 'x',
      files: { 'topologies/e/x.yaml': 'y: 1\n' },
    });
    const forkData = await octokit.rest.pulls.get({ owner, repo: name, pull_number: forkPull.number });
    const refused = await ask('alice', pullOrigin(forkData.data));
    expect(!refused.allowed && refused.reason).toMatch(/forks/);
  });
});
