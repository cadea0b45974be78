// Files of a repository at a ref, read over git (the transport `topo setup` already uses to look a tag
// up): a shallow fetch of the ref into a scratch bare repository, then `git show`. It needs no token
// for a public repository, works against GitHub Enterprise (GITHUB_SERVER_URL) and against a file://
// server in the tests. A ref or file that does not exist is null; a server that cannot be reached is
// an error, so a caller tells a missing pin from an outage.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RepoFileReader } from './pins.js';

const execFileAsync = promisify(execFile);

/**
 * git's answers for what the server does not have (not an outage), each in test/unit/setup/git-files.test.ts:
 * a tag or branch, a commit, a repository over file:// or ssh, a repository over http(s) (a 404).
 * Anything else (a 5xx, a refused login, no route) is an error, so a missing pin is told from an outage.
 */
const NOT_THERE =
  /couldn't find remote ref|not our ref|does not appear to be a git repository|repository '[^']*' not found/;

export interface GitFiles {
  read: RepoFileReader;
  /** Removes the scratch repository. */
  close(): void;
}

/** A reader of `<server>/<owner>/<repo>.git`; each repository and ref is fetched once. */
export function gitFileReader(env: NodeJS.ProcessEnv): GitFiles {
  const server = (env.GITHUB_SERVER_URL || 'https://github.com').replace(/\/+$/, '');
  const scratch = mkdtempSync(join(tmpdir(), 'topo-pins-'));
  const gitEnv = {
    PATH: env.PATH ?? process.env.PATH ?? '',
    HOME: env.HOME ?? process.env.HOME ?? '',
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C', // NOT_THERE reads git's untranslated messages
  };
  const git = (...args: string[]) =>
    execFileAsync('git', args, { cwd: scratch, env: gitEnv, timeout: 60_000, maxBuffer: 16 << 20 });
  const fetched = new Map<string, Promise<string | null>>();
  // one git command at a time: fetches into one repository share FETCH_HEAD and its locks
  let queue: Promise<unknown> = git('init', '-q', '--bare', '.');
  const serial = <T>(step: () => Promise<T>): Promise<T> => {
    const next = queue.then(step);
    queue = next.catch(() => undefined);
    return next;
  };
  const commitOf = (owner: string, repo: string, ref: string) => {
    const key = `${owner}/${repo}@${ref}`;
    if (!fetched.has(key))
      fetched.set(
        key,
        serial(async () => {
          const url = `${server}/${owner}/${repo}.git`;
          try {
            await git('fetch', '-q', '--depth', '1', url, ref);
          } catch (error) {
            const text = `${(error as { stderr?: string }).stderr ?? ''}${(error as Error).message}`;
            if (NOT_THERE.test(text)) return null;
            throw new Error(`cannot fetch ${ref} of ${url}: ${text.trim().split('\n').pop()}`);
          }
          return (await git('rev-parse', 'FETCH_HEAD')).stdout.trim();
        }),
      );
    return fetched.get(key)!;
  };
  return {
    read: async (owner, repo, path, ref) => {
      const commit = await commitOf(owner, repo, ref);
      if (commit === null) return null;
      try {
        return (await serial(() => git('show', `${commit}:${path}`))).stdout;
      } catch {
        return null;
      }
    },
    close: () => rmSync(scratch, { recursive: true, force: true }),
  };
}
