// The one way to build a GitHub client: @actions/github's Octokit (REST methods + pagination +
// GraphQL), pointed at GITHUB_API_URL, so the same code talks to api.github.com, GHES or the local
// test API; with octokit's retry and throttling plugins. Throttling paces writes as GitHub asks
// (one at a time, a second apart; three seconds for writes that notify) and honours rate limits:
// a secondary limit is always waited out (Retry-After) up to three times; the primary limit only
// when it resets within `maxRateLimitWaitSeconds` (an action must not sleep for an hour). Server
// errors and dropped connections are retried; a 4xx other than a rate limit is not (a wrong
// request fails at once, as before).
import { getOctokit } from '@actions/github';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';

export type Octokit = ReturnType<typeof getOctokit>;

export interface ClientOptions {
  token: string;
  /** REST base URL; defaults to GITHUB_API_URL, then https://api.github.com. */
  baseUrl?: string;
  /** Retries of a server error or a dropped connection (default 3). */
  retries?: number;
  /** The longest wait for the primary rate limit to reset before giving up (default 60 s). */
  maxRateLimitWaitSeconds?: number;
  /** Where rate-limit waits are told (default: octokit's warn log). */
  log?: (line: string) => void;
}

export const SECONDARY_RATE_LIMIT_RETRIES = 3;

/** A loopback API cannot be GitHub: write pacing (which only GitHub asks for) is off there. */
export function isLoopback(baseUrl: string): boolean {
  try {
    const host = new URL(baseUrl).hostname;
    return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
  } catch {
    return false;
  }
}

/** A throttling group that does not wait (the plugin's groups are used as `.key(id).schedule`). */
const UNPACED = {
  key: () => ({
    schedule: (...args: unknown[]) => {
      const fn = args.find((a) => typeof a === 'function') as (...a: unknown[]) => unknown;
      return Promise.resolve(fn(...args.slice(args.indexOf(fn) + 1)));
    },
  }),
};

export function createOctokit(options: ClientOptions): Octokit {
  if (!options.token) throw new Error('a GitHub token is required (input `token`, default github.token)');
  const baseUrl = options.baseUrl ?? process.env.GITHUB_API_URL ?? 'https://api.github.com';
  const maxWait = options.maxRateLimitWaitSeconds ?? 60;
  const say = (octokit: { log: { warn: (s: string) => void } }, line: string) =>
    options.log ? options.log(line) : octokit.log.warn(line);
  const where = (o: { method?: string; url?: string }) => `${o.method ?? 'GET'} ${o.url ?? ''}`;
  type Handler = (
    retryAfter: number,
    o: { method?: string; url?: string },
    octokit: { log: { warn: (s: string) => void } },
    retryCount: number,
  ) => boolean;
  const onSecondaryRateLimit: Handler = (retryAfter, o, octokit, retryCount) => {
    const again = retryCount < SECONDARY_RATE_LIMIT_RETRIES;
    say(
      octokit,
      `GitHub secondary rate limit on ${where(o)}: ${again ? `waiting ${retryAfter} s (Retry-After) and retrying` : `giving up after ${SECONDARY_RATE_LIMIT_RETRIES} retries`}`,
    );
    return again;
  };
  const onRateLimit: Handler = (retryAfter, o, octokit, retryCount) => {
    const again = retryCount < 1 && retryAfter <= maxWait;
    say(
      octokit,
      `GitHub rate limit exhausted on ${where(o)}: ${again ? `waiting ${retryAfter} s for the reset` : `resets in ${retryAfter} s, more than ${maxWait} s: giving up`}`,
    );
    return again;
  };
  // The plugin calls its groups as `.key(id).schedule(...)`: UNPACED has that shape, not Bottleneck's type.
  const unpaced = isLoopback(baseUrl) ? ({ write: UNPACED, notifications: UNPACED } as object) : {};
  return getOctokit(
    options.token,
    {
      baseUrl,
      retry: { retries: options.retries ?? 3 },
      throttle: { ...unpaced, onSecondaryRateLimit, onRateLimit },
    },
    retry,
    throttling,
  );
}

/** Live counts of the requests `octokit` sends from now on (GET and GraphQL queries are reads). */
export function countRequests(octokit: Octokit): { reads: number; writes: number } {
  const counts = { reads: 0, writes: 0 };
  octokit.hook.before('request', (o) => {
    const read = (o.method ?? 'GET') === 'GET' || String(o.url).endsWith('/graphql');
    if (read) counts.reads++;
    else counts.writes++;
  });
  return counts;
}

/** `owner/name` → {owner, repo}; throws a clear error for anything else. */
export function splitRepository(fullName: string): { owner: string; repo: string } {
  const m = /^([A-Za-z0-9-]+)\/([A-Za-z0-9._-]+)$/.exec(fullName);
  if (!m) throw new Error(`repository "${fullName}" is not of the form owner/name`);
  return { owner: m[1] as string, repo: m[2] as string };
}
