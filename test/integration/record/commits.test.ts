// Compare-and-swap commits through the Git Data API of the local GitHub.
import { describe, expect, it } from 'vitest';
import {
  CommitConflictError,
  commitWithCompareAndSwap,
  isRefConflict,
  isTransient,
} from '../../../src/github/commits.js';
import { useLocalGitHub } from '../../support/local-github.js';

const { gh, octokit } = useLocalGitHub();

describe('commitWithCompareAndSwap', () => {
  it('commits changed files only, and nothing when they already hold the content', async () => {
    const repo = gh.createRepo('acme/cas', { files: { 'a.txt': 'a\n', 'keep.txt': 'keep\n' } });
    const target = { owner: 'acme', repo: 'cas', branch: 'main', message: 'update a' };
    const first = await commitWithCompareAndSwap(octokit, {
      ...target,
      paths: ['a.txt', 'new/b.txt'],
      update: (current) => {
        expect(current.get('a.txt')).toBe('a\n');
        expect(current.get('new/b.txt')).toBeNull();
        return { 'a.txt': 'a\n', 'new/b.txt': 'b\n' };
      },
    });
    expect(first).toMatchObject({ committed: true, attempts: 1, changed: ['new/b.txt'] });
    expect(Object.fromEntries(gh.files(repo))).toEqual({
      'a.txt': 'a\n',
      'keep.txt': 'keep\n',
      'new/b.txt': 'b\n',
    });
    const again = await commitWithCompareAndSwap(octokit, {
      ...target,
      paths: ['new/b.txt'],
      update: () => ({ 'new/b.txt': 'b\n' }),
    });
    expect(again).toMatchObject({ committed: false, sha: first.sha });
    expect(gh.violations()).toEqual([]);
  });

  it('re-reads and re-applies after losing the race, and gives up with a clear error after maxAttempts', async () => {
    const repo = gh.createRepo('acme/race', { files: { 'n.txt': '0' } });
    const bump = () => {
      // Another writer moves the branch between our read and our ref update.
      const head = gh.state.branchSha(repo, 'main');
      const sha = gh.state.commitFiles(
        gh.state.user('bob'),
        head,
        { [`other-${Math.random()}.txt`]: 'x' },
        'other',
      );
      repo.refs.set('refs/heads/main', sha);
    };
    const sleeps: number[] = [];
    let calls = 0;
    const result = await commitWithCompareAndSwap(octokit, {
      owner: 'acme',
      repo: 'race',
      branch: 'main',
      message: 'increment',
      paths: ['n.txt'],
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      update: (current) => {
        calls++;
        if (calls <= 2) bump();
        return { 'n.txt': String(Number(current.get('n.txt')) + 1) };
      },
    });
    expect(result).toMatchObject({ committed: true, attempts: 3 });
    expect(sleeps).toHaveLength(2);
    expect(gh.files(repo).get('n.txt')).toBe('1');

    const doomed = commitWithCompareAndSwap(octokit, {
      owner: 'acme',
      repo: 'race',
      branch: 'main',
      message: 'never',
      paths: ['n.txt'],
      maxAttempts: 3,
      sleep: async () => {},
      update: () => {
        bump();
        return { 'n.txt': 'never' };
      },
    });
    await expect(doomed).rejects.toBeInstanceOf(CommitConflictError);
    await expect(doomed).rejects.toThrow('could not update branch "main" after 3 attempts');
    expect(gh.files(repo).get('n.txt')).toBe('1');
  });

  it('does not write when the update throws', async () => {
    const repo = gh.createRepo('acme/abort', { files: { 'r.json': '{' } });
    const head = gh.state.branchSha(repo, 'main');
    await expect(
      commitWithCompareAndSwap(octokit, {
        owner: 'acme',
        repo: 'abort',
        branch: 'main',
        message: 'x',
        paths: ['r.json'],
        update: () => {
          throw new Error('r.json: not valid JSON');
        },
      }),
    ).rejects.toThrow('r.json: not valid JSON');
    expect(gh.state.branchSha(repo, 'main')).toBe(head);
  });

  it('tells a lost race from other refusals', () => {
    expect(isRefConflict(Object.assign(new Error('Update is not a fast forward'), { status: 422 }))).toBe(
      true,
    );
    expect(isRefConflict(Object.assign(new Error('conflict'), { status: 409 }))).toBe(true);
    expect(isRefConflict(Object.assign(new Error('Protected branch update failed'), { status: 422 }))).toBe(
      false,
    );
    expect(isRefConflict(Object.assign(new Error('Not Found'), { status: 404 }))).toBe(false);
    expect(isTransient(new Error('other side closed'))).toBe(true);
    expect(isTransient(Object.assign(new Error('Bad gateway'), { status: 502 }))).toBe(true);
    expect(isTransient(Object.assign(new Error('Update is not a fast forward'), { status: 422 }))).toBe(
      false,
    );
    expect(isTransient(new Error('experiments/x.json: not valid JSON'))).toBe(false);
  });
});
