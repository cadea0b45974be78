// The one way to build a GitHub client: @actions/github's Octokit (REST methods + pagination),
// pointed at GITHUB_API_URL, so the same code talks to api.github.com, GHES or the local test API.
import { getOctokit } from '@actions/github';

export type Octokit = ReturnType<typeof getOctokit>;

export interface ClientOptions {
  token: string;
  /** REST base URL; defaults to GITHUB_API_URL, then https://api.github.com. */
  baseUrl?: string;
}

export function createOctokit(options: ClientOptions): Octokit {
  if (!options.token) throw new Error('a GitHub token is required (input `token`, default github.token)');
  const baseUrl = options.baseUrl ?? process.env.GITHUB_API_URL ?? 'https://api.github.com';
  return getOctokit(options.token, {
    baseUrl,
    // Fail fast in tests and on runners: no silent retries that hide a wrong request.
    request: { retries: 0 },
  });
}

/** `owner/name` → {owner, repo}; throws a clear error for anything else. */
export function splitRepository(fullName: string): { owner: string; repo: string } {
  const m = /^([A-Za-z0-9-]+)\/([A-Za-z0-9._-]+)$/.exec(fullName);
  if (!m) throw new Error(`repository "${fullName}" is not of the form owner/name`);
  return { owner: m[1] as string, repo: m[2] as string };
}
