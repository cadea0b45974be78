// The GitHub client against the local GitHub API: rate limits are honoured (secondary limits
// waited out with Retry-After, the primary limit only when it resets soon), server errors are
// retried, wrong requests are not; writes are paced on GitHub but not on a loopback API.
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { postSummaryCheckRun } from '../../../src/github/check-runs.js';
import { createOctokit, isLoopback, type Octokit } from '../../../src/github/client.js';
import { FAULTS, type Repo } from '../../../src/github-local/index.js';
import { useLocalGitHub } from '../../support/local-github.js';

const { gh } = useLocalGitHub();
let repo: Repo;
let log: string[];
let octokit: Octokit;

beforeAll(async () => {
  repo = gh.createRepo('acme/sim', { files: { 'README.md': '# sim\n' } });
});
beforeEach(() => {
  log = [];
  octokit = createOctokit({ token: gh.token, baseUrl: gh.url, log: (l) => log.push(l) });
  gh.resetCalls();
});

const getRepo = () => octokit.rest.repos.get({ owner: 'acme', repo: 'sim' });

describe('rate limits and retries', () => {
  it('waits out a secondary rate limit for its Retry-After and retries', async () => {
    gh.failNext({ ...FAULTS.secondaryRateLimit(1), match: /^GET \/repos\/acme\/sim$/ });
    const t0 = Date.now();
    const r = await getRepo();
    expect(r.data.full_name).toBe('acme/sim');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    expect(gh.calls().map((c) => c.status)).toEqual([403, 200]);
    expect(log.join('\n')).toMatch(
      /secondary rate limit on GET \/repos\/\{owner\}\/\{repo\}: waiting 1 s \(Retry-After\)/,
    );
  });

  it('a 429 secondary limit on a write is honoured too', async () => {
    gh.failNext({ ...FAULTS.secondaryRateLimit(1), status: 429, match: /^POST / });
    const pull = gh.openPull({
      repo,
      author: 'github-actions[bot]',
      title: 't',
      head: 'h1',
      files: { a: '1' },
    });
    gh.resetCalls();
    const c = await octokit.rest.issues.createComment({
      owner: 'acme',
      repo: 'sim',
      issue_number: pull.number,
      body: 'hi',
    });
    expect(c.data.body).toBe('hi');
    expect(
      gh
        .calls()
        .filter((x) => x.method === 'POST')
        .map((x) => x.status),
    ).toEqual([429, 201]);
  });

  it('gives up after three secondary limits in a row, with a clear error', async () => {
    // (Retry-After 0 would read as absent: GitHub's fallback is 60 s)
    gh.failNext({ ...FAULTS.secondaryRateLimit(1), times: 4, match: /^GET \/repos\/acme\/sim$/ });
    await expect(getRepo()).rejects.toMatchObject({
      status: 403,
      message: expect.stringMatching(/secondary rate limit/),
    });
    expect(gh.calls()).toHaveLength(4);
    expect(log.at(-1)).toMatch(/giving up after 3 retries/);
  });

  it('waits for a primary limit that resets soon, and gives up on one that resets in an hour', async () => {
    gh.failNext({ ...FAULTS.primaryRateLimit(1), match: /^GET \/repos\/acme\/sim$/ });
    await expect(getRepo()).resolves.toMatchObject({ status: 200 });
    gh.resetCalls();
    gh.failNext({ ...FAULTS.primaryRateLimit(3600), match: /^GET \/repos\/acme\/sim$/ });
    await expect(getRepo()).rejects.toMatchObject({ status: 403 });
    expect(gh.calls()).toHaveLength(1);
    expect(log.at(-1)).toMatch(
      /rate limit exhausted on GET .*: resets in 36\d\d s, more than 60 s: giving up/,
    );
  });

  it('retries a server error, never a wrong request', async () => {
    gh.failNext({ ...FAULTS.serverError(), match: /^GET \/repos\/acme\/sim$/ });
    await expect(getRepo()).resolves.toMatchObject({ status: 200 });
    expect(gh.calls().map((c) => c.status)).toEqual([502, 200]);
    gh.resetCalls();
    await expect(octokit.rest.repos.get({ owner: 'acme', repo: 'nope' })).rejects.toMatchObject({
      status: 404,
    });
    expect(gh.calls()).toHaveLength(1);
    expect(gh.violations()).toEqual([]);
  });
});

describe('write pacing', () => {
  it('is off only for a loopback API', () => {
    expect(isLoopback(gh.url)).toBe(true);
    expect(isLoopback('http://localhost:3000')).toBe(true);
    expect(isLoopback('https://api.github.com')).toBe(false);
    expect(isLoopback('https://ghes.example.com/api/v3')).toBe(false);
    expect(isLoopback('not a url')).toBe(false);
  });
  it('requires a token', () => {
    expect(() => createOctokit({ token: '' })).toThrow(/a GitHub token is required/);
  });
});

describe('postSummaryCheckRun', () => {
  it('posts the summary as a check run when the token may, else says the job summary keeps it', async () => {
    const input = {
      owner: 'acme',
      repo: 'sim',
      name: 'topo/validate',
      head_sha: gh.openPull({
        repo,
        author: 'github-actions[bot]',
        title: 'v',
        head: 'v1',
        files: { b: '2' },
      }).head.sha,
      conclusion: 'success' as const,
      title: '0 error(s)',
      summary: '| Service | Replicas |\n|---|---|\n| renderer | 6 |',
    };
    await expect(postSummaryCheckRun(octokit, input)).resolves.toEqual({ place: 'check-run' });
    const run = gh.state.checkRuns.find((c) => c.name === 'topo/validate');
    expect(run?.output.summary).toContain('| renderer | 6 |');
    // A fork's pull request: GitHub hands the workflow a read-only token.
    const readOnly = createOctokit({
      token: gh.createToken('github-actions[bot]', {
        permissions: { contents: 'read', 'pull-requests': 'read' },
      }),
      baseUrl: gh.url,
    });
    const before = gh.violations().length;
    const r = await postSummaryCheckRun(readOnly, input);
    expect(r.place).toBe('job-summary');
    expect(r.reason).toMatch(/HTTP 403.*checks: write/);
    expect(gh.violations().slice(before)).toEqual([
      expect.stringMatching(/token lacks permission checks: read/),
    ]);
  });
});
