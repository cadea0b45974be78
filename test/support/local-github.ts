// The local GitHub API for one test file: started before its tests and closed after them, with an
// Octokit client of the bot's token. Every request is checked against GitHub's OpenAPI description;
// `strict` fails the file when any request broke it.
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { createOctokit, type Octokit } from '../../src/github/client.js';
import { type GitHubServer, startGitHubServer } from '../../src/github-local/index.js';
import { type ActionRun, type RunActionOptions, runAction } from './run-action.js';

export interface LocalGitHub {
  /** The server (started before the file's first test). */
  readonly gh: GitHubServer;
  /** A client with the bot's token (every permission). */
  readonly octokit: Octokit;
}

export interface LocalGitHubOptions {
  /** After the file's tests: no request broke GitHub's OpenAPI description. */
  strict?: boolean;
  /** Forget the calls before each test (tests that count requests). */
  resetCalls?: boolean;
}

/**
 * A stand-in for an object a hook makes later: every property read (or write) goes to what `get`
 * returns then, so a test file can name it at the top (`const { gh } = useLocalGitHub()`) and use
 * it in its tests as if it were the object itself.
 */
export function late<T extends object>(what: string, get: () => T | undefined): T {
  const real = (): T => {
    const value = get();
    if (value === undefined) throw new Error(`${what} is used before the beforeAll that makes it ran`);
    return value;
  };
  return new Proxy({} as T, {
    get(_, key) {
      const target = real();
      const value = Reflect.get(target, key, target);
      // bound to the real object, with what hangs on the function (octokit.paginate.iterator)
      return typeof value === 'function' ? Object.assign(value.bind(target), value) : value;
    },
    set: (_, key, value) => Reflect.set(real(), key, value),
    has: (_, key) => Reflect.has(real(), key),
  });
}

/** Registers the file's hooks: the server starts before its tests and closes after them. */
export function useLocalGitHub(options: LocalGitHubOptions = {}): LocalGitHub {
  let gh: GitHubServer | undefined;
  let octokit: Octokit | undefined;
  beforeAll(async () => {
    gh = await startGitHubServer();
    octokit = createOctokit({ token: gh.token, baseUrl: gh.url });
  });
  if (options.resetCalls) beforeEach(() => gh?.resetCalls());
  afterAll(async () => {
    if (options.strict && gh) expect(gh.violations()).toEqual([]);
    await gh?.close();
  });
  return {
    gh: late('the local GitHub API', () => gh),
    octokit: late("the local GitHub API's client", () => octokit),
  };
}

/** Runs a bundled action against the local GitHub API: `acme/sim` and the bot's token unless told. */
export function runActionOn(
  gh: GitHubServer,
  name: string,
  options: Omit<RunActionOptions, 'apiUrl' | 'repository' | 'token'> &
    Partial<Pick<RunActionOptions, 'repository' | 'token'>>,
): Promise<ActionRun> {
  return runAction(name, { repository: 'acme/sim', token: gh.token, ...options, apiUrl: gh.url });
}
