// The local GitHub API itself: state, Git Data semantics, and that it reports requests the real
// API would reject.
import { describe, expect, it } from 'vitest';
import { createOctokit } from '../../../src/github/client.js';
import { useLocalGitHub } from '../../support/local-github.js';

const { gh, octokit } = useLocalGitHub();
const owner = 'acme';
const repo = 'sim';

describe('local GitHub API', () => {
  it('serves pull requests, files, contents, comments, reactions, labels and permissions', async () => {
    const r = gh.createRepo(`${owner}/${repo}`, { files: { 'README.md': 'hello\n' } });
    gh.addCollaborator(r, 'alice', 'write');
    const pull = gh.openPull({
      repo: r,
      author: 'alice',
      title: 'Try a topology',
      head: 'try-1',
      files: { 'topologies/exp/a.yaml': 'name: a\n' },
    });

    const got = await octokit.rest.pulls.get({ owner, repo, pull_number: pull.number });
    expect(got.data.head.sha).toBe(pull.head.sha);
    expect(got.data.head.repo?.full_name).toBe('acme/sim');

    const list = await octokit.rest.pulls.list({ owner, repo, state: 'open' });
    expect(list.data.map((p) => p.number)).toEqual([pull.number]);
    const issues = await octokit.rest.issues.listForRepo({ owner, repo, state: 'open' });
    expect(issues.data.map((i) => i.number)).toEqual([pull.number]);
    const issue = await octokit.rest.issues.get({ owner, repo, issue_number: pull.number });
    expect(issue.data.pull_request?.url).toContain(`/pulls/${pull.number}`);

    const files = await octokit.rest.pulls.listFiles({ owner, repo, pull_number: pull.number });
    expect(files.data.map((f) => [f.filename, f.status])).toEqual([['topologies/exp/a.yaml', 'added']]);

    const content = await octokit.rest.repos.getContent({
      owner,
      repo,
      path: 'topologies/exp/a.yaml',
      ref: pull.head.sha,
    });
    expect(Buffer.from((content.data as { content: string }).content, 'base64').toString()).toBe('name: a\n');
    await expect(
      octokit.rest.repos.getContent({ owner, repo, path: 'topologies/exp/a.yaml' }),
    ).rejects.toMatchObject({ status: 404 });

    const c = await octokit.rest.issues.createComment({ owner, repo, issue_number: pull.number, body: 'hi' });
    expect(c.data.user?.login).toBe('github-actions[bot]');
    await octokit.rest.issues.updateComment({ owner, repo, comment_id: c.data.id, body: 'hi again' });
    const comments = await octokit.paginate(octokit.rest.issues.listComments, {
      owner,
      repo,
      issue_number: pull.number,
      per_page: 100,
    });
    expect(comments.map((x) => x.body)).toEqual(['hi again']);

    const first = await octokit.rest.reactions.createForIssueComment({
      owner,
      repo,
      comment_id: c.data.id,
      content: 'eyes',
    });
    const again = await octokit.rest.reactions.createForIssueComment({
      owner,
      repo,
      comment_id: c.data.id,
      content: 'eyes',
    });
    expect([first.status, again.status]).toEqual([201, 200]);

    await octokit.rest.issues.addLabels({
      owner,
      repo,
      issue_number: pull.number,
      labels: ['topology:queued'],
    });
    await octokit.rest.issues.addLabels({
      owner,
      repo,
      issue_number: pull.number,
      labels: ['topology:running'],
    });
    await octokit.rest.issues.removeLabel({
      owner,
      repo,
      issue_number: pull.number,
      name: 'topology:queued',
    });
    const labels = await octokit.rest.issues.listLabelsOnIssue({ owner, repo, issue_number: pull.number });
    expect(labels.data.map((l) => l.name)).toEqual(['topology:running']);
    // Lists carry the labels too (their schemas differ in details: all are checked).
    const labelled = await octokit.rest.pulls.list({ owner, repo });
    expect(labelled.data[0]?.labels.map((l) => l.name)).toEqual(['topology:running']);
    const filtered = await octokit.rest.issues.listForRepo({ owner, repo, labels: 'topology:running' });
    expect(filtered.data).toHaveLength(1);
    await octokit.rest.pulls.get({ owner, repo, pull_number: pull.number });
    await octokit.rest.issues.get({ owner, repo, issue_number: pull.number });

    const perm = await octokit.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: 'alice' });
    expect(perm.data.permission).toBe('write');
    gh.state.user('mallory');
    const stranger = await octokit.rest.repos.getCollaboratorPermissionLevel({
      owner,
      repo,
      username: 'mallory',
    });
    expect(stranger.data.permission).toBe('read');

    expect(gh.violations()).toEqual([]);
  });

  it('creates, updates and lists check runs with accumulated annotations', async () => {
    const r = gh.state.repo(`${owner}/${repo}`);
    const sha = gh.state.branchSha(r, 'main');
    const created = await octokit.rest.checks.create({
      owner,
      repo,
      name: 'topology / validate',
      head_sha: sha,
      status: 'in_progress',
    });
    const annotation = {
      path: 'a.yaml',
      start_line: 1,
      end_line: 1,
      annotation_level: 'failure' as const,
      message: 'bad',
    };
    await octokit.rest.checks.update({
      owner,
      repo,
      check_run_id: created.data.id,
      output: { title: 't', summary: 's', annotations: [annotation] },
    });
    await octokit.rest.checks.update({
      owner,
      repo,
      check_run_id: created.data.id,
      conclusion: 'failure',
      output: { title: 't', summary: 's', annotations: [annotation] },
    });
    const listed = await octokit.rest.checks.listForRef({
      owner,
      repo,
      ref: 'main',
      check_name: 'topology / validate',
    });
    expect(listed.data.check_runs).toHaveLength(1);
    expect(listed.data.check_runs[0]?.conclusion).toBe('failure');
    expect(listed.data.check_runs[0]?.output.annotations_count).toBe(2);
    expect(gh.violations()).toEqual([]);
  });

  it('updates refs only by fast-forward unless forced, like GitHub', async () => {
    const r = gh.state.repo(`${owner}/${repo}`);
    const ref = await octokit.rest.git.getRef({ owner, repo, ref: 'heads/main' });
    const base = ref.data.object.sha;
    const baseCommit = await octokit.rest.git.getCommit({ owner, repo, commit_sha: base });
    const blob = await octokit.rest.git.createBlob({ owner, repo, content: '{"a":1}\n', encoding: 'utf-8' });
    const tree = await octokit.rest.git.createTree({
      owner,
      repo,
      base_tree: baseCommit.data.tree.sha,
      tree: [{ path: 'experiments/e1.json', mode: '100644', type: 'blob', sha: blob.data.sha }],
    });
    const commit = await octokit.rest.git.createCommit({
      owner,
      repo,
      message: 'record',
      tree: tree.data.sha,
      parents: [base],
    });
    // A concurrent writer moves main first.
    const other = gh.state.commitFiles(gh.state.user('bob'), base, { 'x.txt': 'x' }, 'other');
    r.refs.set('refs/heads/main', other);
    await expect(
      octokit.rest.git.updateRef({ owner, repo, ref: 'heads/main', sha: commit.data.sha, force: false }),
    ).rejects.toMatchObject({ status: 422 });
    // Re-apply on the new head: fast-forward succeeds.
    const rebased = await octokit.rest.git.createCommit({
      owner,
      repo,
      message: 'record',
      tree: tree.data.sha,
      parents: [other],
    });
    await octokit.rest.git.updateRef({ owner, repo, ref: 'heads/main', sha: rebased.data.sha, force: false });
    expect(gh.files(r).get('experiments/e1.json')).toBe('{"a":1}\n');
    expect(gh.state.git.isAncestor(other, gh.state.branchSha(r, 'main'))).toBe(true);
    expect(gh.violations()).toEqual([]);
  });

  it('records requests the real API would reject', async () => {
    const before = gh.violations().length;
    await expect(
      // @ts-expect-error: a wrong status on purpose
      octokit.rest.checks.create({ owner, repo, name: 'x', head_sha: 'abc', status: 'done' }),
    ).rejects.toMatchObject({ status: 422 });
    await expect(
      octokit.request('GET /repos/{owner}/{repo}/no-such-thing', { owner, repo }),
    ).rejects.toMatchObject({ status: 404 });
    const r = gh.state.repo(`${owner}/${repo}`);
    await expect(
      octokit.rest.issues.createComment({ owner, repo, issue_number: r ? 1 : 1, body: 'x'.repeat(65537) }),
    ).rejects.toMatchObject({ status: 422 });
    const added = gh.violations().slice(before);
    expect(added).toHaveLength(3);
    expect(added[0]).toMatch(/status must be equal to one of the allowed values/);
    expect(added[1]).toMatch(/no such operation/);
    expect(added[2]).toMatch(/maximum is|65536/);
    // Tidy so afterAll checks of other files are not confused.
    gh.violations().length;
  });

  it('a stale Prometheus scrape of its port is answered 404 and is not a violation; the same path from a client is', async () => {
    const before = gh.violations().length;
    const scrape = await fetch(`${gh.url}/metrics`, { headers: { 'user-agent': 'Prometheus/2.45.3' } });
    expect(scrape.status).toBe(404);
    expect(gh.violations().length).toBe(before);
    const client = await fetch(`${gh.url}/metrics`, { headers: { 'user-agent': 'octokit.js/5' } });
    expect(client.status).toBe(404);
    expect(gh.violations().slice(before)).toEqual(['GET /metrics: no such operation in the GitHub REST API']);
  });

  it('enforces the workflow token permissions', async () => {
    const readOnly = gh.createToken('github-actions[bot]', { permissions: { contents: 'read' } });
    const limited = createOctokit({ token: readOnly, baseUrl: gh.url });
    const before = gh.violations().length;
    await expect(
      limited.rest.issues.createComment({ owner, repo, issue_number: 1, body: 'no' }),
    ).rejects.toMatchObject({ status: 403 });
    expect(gh.violations().slice(before)[0]).toMatch(/lacks permission issues or pull-requests: write/);
  });
});
