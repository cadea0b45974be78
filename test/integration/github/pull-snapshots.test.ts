// One paginated GraphQL query per pass for every open pull request (labels, head, files, the bot's
// comments) against the local GitHub API, which validates each query against GitHub's schema.
import { beforeAll, describe, expect, it } from 'vitest';
import { upsertCheckRun } from '../../../src/github/check-runs.js';
import {
  COMMENTS_PER_PULL,
  PULLS_PER_PAGE,
  readBlobs,
  readPullSnapshot,
  readPullSnapshots,
  snapshotSticky,
} from '../../../src/github/pull-snapshots.js';
import { readStickyComment, upsertStickyComment } from '../../../src/github/sticky-comment.js';
import type { Pull, Repo } from '../../../src/github-local/index.js';
import { useLocalGitHub } from '../../support/local-github.js';

const { gh, octokit } = useLocalGitHub({ resetCalls: true });
let repo: Repo;
let candidate: Pull;
let busy: Pull;
let fromFork: Pull;
const BOT = 'github-actions[bot]';
const target = (pr: Pull, purpose: string) => ({
  owner: 'acme',
  repo: 'sim',
  issue_number: pr.number,
  purpose,
  botLogin: BOT,
});

beforeAll(async () => {
  repo = gh.createRepo('acme/sim', { files: { 'topologies/e/experiment.yaml': 'id: e\n' } });
  gh.addCollaborator(repo, 'alice', 'write');
  candidate = gh.openPull({
    repo,
    author: 'alice',
    title: 'c1',
    head: 'c1',
    files: { 'topologies/e/c1.yaml': 'name: c1\n' },
  });
  candidate.labels.push('topology:running');
  gh.comment(repo, candidate.number, 'alice', '/topo submit');
  await upsertStickyComment(octokit, { ...target(candidate, 'monitor'), body: 'monitor body' });
  await upsertStickyComment(octokit, { ...target(candidate, 'submit'), body: 'submitted' });
  // A user quoting the marker does not become the sticky comment.
  gh.comment(repo, candidate.number, 'mallory', '<!-- topo:sticky:monitor -->\nfake');
  busy = gh.openPull({
    repo,
    author: 'alice',
    title: 'busy',
    head: 'busy',
    files: { 'topologies/e/busy.yaml': 'name: busy\n' },
  });
  await upsertStickyComment(octokit, { ...target(busy, 'monitor'), body: 'old and buried' });
  for (let i = 0; i < COMMENTS_PER_PULL + 5; i++) gh.comment(repo, busy.number, 'alice', `chatter ${i}`);
  const fork = gh.fork(repo, 'mallory');
  fromFork = gh.openPull({
    repo,
    author: 'mallory',
    title: 'f',
    head: 'f',
    headRepo: fork,
    files: { 'topologies/e/f.yaml': 'x\n' },
  });
  // Idle pull requests, enough for a second page.
  for (let i = 0; i < PULLS_PER_PAGE; i++)
    gh.openPull({
      repo,
      author: 'alice',
      title: `idle ${i}`,
      head: `idle-${i}`,
      files: { [`docs/${i}.md`]: `${i}\n` },
    });
});

describe('readPullSnapshots', () => {
  it('reads every open pull request in one GraphQL request per page, valid against GitHub’s schema', async () => {
    const { pulls, requests } = await readPullSnapshots(octokit, {
      owner: 'acme',
      repo: 'sim',
      botLogin: BOT,
    });
    expect(pulls).toHaveLength(PULLS_PER_PAGE + 3);
    const c1 = pulls.find((p) => p.number === candidate.number);
    expect(c1).toMatchObject({
      headSha: candidate.head.sha,
      headRepository: 'acme/sim',
      labels: ['topology:running'],
      files: [{ path: 'topologies/e/c1.yaml', status: 'added' }],
    });
    expect(c1?.botComments.every((c) => c.login === BOT)).toBe(true);
    expect(pulls.find((p) => p.number === fromFork.number)?.headRepository).toBe('mallory/sim');
    // 2 GraphQL pages + the busy PR's comments through REST (its sticky comment is older than the last 50)
    expect(requests).toBe(3);
    expect(gh.calls().map((c) => `${c.method} ${c.path.replace(/\?.*/, '')}`)).toEqual([
      'POST /graphql',
      `GET /repos/acme/sim/issues/${busy.number}/comments`,
      'POST /graphql',
    ]);
    expect(gh.violations()).toEqual([]);
  });

  it('finds the sticky comments as a per-PR listing would, without listing', async () => {
    const { pulls } = await readPullSnapshots(octokit, { owner: 'acme', repo: 'sim', botLogin: BOT });
    for (const pr of [candidate, busy]) {
      const snap = pulls.find((p) => p.number === pr.number);
      if (!snap) throw new Error('missing');
      const parts = snapshotSticky(snap, { purpose: 'monitor', botLogin: BOT });
      expect(parts.map((p) => p.body.split('\n').slice(1).join('\n')).join('\n')).toBe(
        await readStickyComment(octokit, target(pr, 'monitor')),
      );
    }
    const snap = pulls.find((p) => p.number === candidate.number);
    gh.resetCalls();
    // Writing with the parts already read costs the write only.
    await upsertStickyComment(
      octokit,
      { ...target(candidate, 'monitor'), body: 'monitor body 2' },
      snapshotSticky(snap as never, { purpose: 'monitor', botLogin: BOT }),
    );
    expect(gh.calls().map((c) => c.method)).toEqual(['PATCH']);
    expect(await readStickyComment(octokit, target(candidate, 'monitor'))).toBe('monitor body 2');
  });

  it('reads candidate files at their head commits in one request', async () => {
    const { texts, requests } = await readBlobs(octokit, { owner: 'acme', repo: 'sim' }, [
      { sha: candidate.head.sha, path: 'topologies/e/c1.yaml' },
      { sha: busy.head.sha, path: 'topologies/e/busy.yaml' },
      { sha: busy.head.sha, path: 'topologies/e/"quoted" } evil.yaml' },
    ]);
    expect(requests).toBe(1);
    expect(texts.get(`${candidate.head.sha}:topologies/e/c1.yaml`)).toBe('name: c1\n');
    expect(texts.get(`${busy.head.sha}:topologies/e/busy.yaml`)).toBe('name: busy\n');
    expect(texts.get(`${busy.head.sha}:topologies/e/"quoted" } evil.yaml`)).toBeUndefined();
    expect(gh.violations()).toEqual([]);
  });
});

describe('readPullSnapshot (one pull request, for /topo status)', () => {
  it('reads that pull request alone in one request, and nothing for a closed or unknown one', async () => {
    const { pull, requests } = await readPullSnapshot(
      octokit,
      { owner: 'acme', repo: 'sim', botLogin: BOT },
      candidate.number,
    );
    expect(requests).toBe(1);
    expect(pull).toMatchObject({
      number: candidate.number,
      headSha: candidate.head.sha,
      labels: ['topology:running'],
    });
    expect(snapshotSticky(pull as never, { purpose: 'submit', botLogin: BOT })).toHaveLength(1);
    expect(gh.calls().map((c) => `${c.method} ${c.path}`)).toEqual(['POST /graphql']);
    const closed = gh.openPull({
      repo,
      author: 'alice',
      title: 'x',
      head: 'closed',
      files: { 'a.md': 'a\n' },
    });
    gh.closePull(closed);
    const repoRef = { owner: 'acme', repo: 'sim', botLogin: BOT };
    expect((await readPullSnapshot(octokit, repoRef, closed.number)).pull).toBeUndefined();
    expect((await readPullSnapshot(octokit, repoRef, 99_999)).pull).toBeUndefined();
    expect(gh.violations()).toEqual([]);
  });
});

describe('readBlobs with check runs', () => {
  it('finds each commit’s check run of a name in the same request: none, then the newest', async () => {
    const shas = [candidate.head.sha, busy.head.sha];
    const ref = { owner: 'acme', repo: 'sim' };
    const none = await readBlobs(octokit, ref, [], { name: 'topo/monitor', shas });
    expect(none.requests).toBe(1);
    expect([...none.checkRuns]).toEqual([
      [candidate.head.sha, null],
      [busy.head.sha, null],
    ]);
    const created = await upsertCheckRun(
      octokit,
      { ...ref, name: 'topo/monitor', head_sha: candidate.head.sha, title: 't', summary: 's' },
      null,
    );
    await upsertCheckRun(octokit, {
      ...ref,
      name: 'other',
      head_sha: candidate.head.sha,
      title: 't',
      summary: 's',
    });
    gh.resetCalls();
    const found = await readBlobs(octokit, ref, [{ sha: candidate.head.sha, path: 'topologies/e/c1.yaml' }], {
      name: 'topo/monitor',
      shas,
    });
    expect(found.checkRuns.get(candidate.head.sha)).toBe(created.id);
    expect(found.checkRuns.get(busy.head.sha)).toBeNull();
    expect(found.texts.get(`${candidate.head.sha}:topologies/e/c1.yaml`)).toBe('name: c1\n');
    // Updating by the id read costs the write alone (no listing of the commit's check runs).
    await upsertCheckRun(
      octokit,
      {
        ...ref,
        name: 'topo/monitor',
        head_sha: candidate.head.sha,
        title: 't2',
        summary: 's',
        conclusion: 'neutral',
      },
      found.checkRuns.get(candidate.head.sha),
    );
    expect(gh.calls().map((c) => `${c.method} ${c.path.replace(/\/\d+$/, '/:id')}`)).toEqual([
      'POST /graphql',
      'PATCH /repos/acme/sim/check-runs/:id',
    ]);
    expect(gh.state.checkRuns.filter((r) => r.name === 'topo/monitor')).toHaveLength(1);
    expect(gh.violations()).toEqual([]);
  });
});

describe('the local server checks GraphQL like GitHub', () => {
  it('rejects a field GitHub does not have, and a connection without first or last', async () => {
    await expect(
      octokit.graphql('query { repository(owner: "acme", name: "sim") { noSuchField } }'),
    ).rejects.toThrow(/Cannot query field "noSuchField" on type "Repository"/);
    await expect(
      octokit.graphql(
        'query { repository(owner: "acme", name: "sim") { pullRequests(states: [OPEN]) { totalCount } } }',
      ),
    ).rejects.toThrow(/You must provide a `first` or `last` value/);
    expect(gh.violations().join('\n')).toMatch(
      /invalid against GitHub's schema: Cannot query field "noSuchField"/,
    );
    expect(gh.violations().join('\n')).toMatch(/You must provide a `first` or `last`/);
  });
});
