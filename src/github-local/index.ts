// A local GitHub REST API for tests: real in-memory state, and every request and every response
// checked against GitHub's OpenAPI description. A request the real API would reject is recorded
// as a violation (and answered with the error GitHub would give); tests assert `violations()` is
// empty. Start one per test file with `startGitHubServer()`.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleGraphQL } from './graphql.js';
import { openApi } from './openapi.js';
import { Renderer } from './render.js';
import { ERROR_DOCS, HttpError, type RouteContext, requiredPermission, routes } from './routes.js';
import {
  type FileMap,
  GitHubState,
  type Identity,
  type Permission,
  type Pull,
  type Repo,
  type Review,
} from './state.js';

export type { FileMap, Permission, Pull, Repo, Review, Runner, WorkflowRun } from './state.js';
export { GitHubState } from './state.js';

export interface CallRecord {
  method: string;
  path: string;
  operationId: string | undefined;
  status: number;
  /** Login of the token's identity. */
  actor: string | undefined;
  /** Milliseconds spent validating the request and the response. */
  validationMs: number;
  totalMs: number;
}

export interface GitHubServer {
  /** Base URL for GITHUB_API_URL / octokit's baseUrl. */
  url: string;
  /** The installation token of the bot (`github-actions[bot]`), every permission. */
  token: string;
  botLogin: string;
  state: GitHubState;
  render: Renderer;
  /** A token acting as `login`; an installation token may carry workflow `permissions:`. */
  createToken(
    login: string,
    options?: { kind?: 'installation' | 'user'; permissions?: Identity['permissions'] },
  ): string;
  createRepo(
    fullName: string,
    options?: { defaultBranch?: string; files?: FileMap; private?: boolean },
  ): Repo;
  addCollaborator(repo: Repo, login: string, permission: Permission): void;
  fork(repo: Repo, ownerLogin: string): Repo;
  openPull(options: Parameters<GitHubState['openPull']>[0]): Pull;
  comment(
    repo: Repo,
    issueNumber: number,
    login: string,
    body: string,
  ): ReturnType<GitHubState['addComment']>;
  merge(pull: Pull, by: string): string;
  /** A review of the pull request's current head by `login` (`APPROVED`, `CHANGES_REQUESTED`, …). */
  review(pull: Pull, login: string, state: Review['state'], body?: string): Review;
  /** Protects the default branch: a merge then needs each of these status checks passed on the head. */
  protect(repo: Repo, requiredChecks: string[]): void;
  closePull(pull: Pull): void;
  /** The files of a branch (or any ref) as text. */
  files(repo: Repo, ref?: string): Map<string, string>;
  /**
   * Answers the next `times` requests whose `METHOD /path?query` matches `match` with this error
   * instead (a rate limit, a 5xx), as GitHub would: the request is not executed.
   */
  failNext(fault: Fault): void;
  /**
   * Holds the first `count` requests whose `METHOD /path?query` matches `match` until all of them
   * have arrived (or `timeoutMs` passed), then serves them: writers that all read (or all write)
   * before any of them goes on, the interleaving a race needs. `met()`: whether all arrived in time.
   */
  holdTogether(gate: { match: RegExp; count: number; timeoutMs?: number }): { met(): boolean };
  violations(): string[];
  calls(): CallRecord[];
  resetCalls(): void;
  close(): Promise<void>;
}

export interface Fault {
  match?: RegExp;
  /** Default 1. */
  times?: number;
  status: number;
  message?: string;
  headers?: Record<string, string>;
}

/** GitHub's answers to a client over its limits (REST API docs, "Rate limits for the REST API"). */
export const FAULTS = {
  secondaryRateLimit: (retryAfterSeconds: number, times = 1): Fault => ({
    status: 403,
    times,
    message:
      'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.',
    headers: { 'retry-after': String(retryAfterSeconds) },
  }),
  primaryRateLimit: (resetInSeconds: number, times = 1): Fault => ({
    status: 403,
    times,
    message: 'API rate limit exceeded for installation ID 1.',
    headers: {
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000 + resetInSeconds)),
    },
  }),
  serverError: (times = 1): Fault => ({ status: 502, times, message: 'Server Error' }),
};

const BOT = 'github-actions[bot]';

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startGitHubServer(): Promise<GitHubServer> {
  const api = openApi();
  const state = new GitHubState();
  const violationList: string[] = [];
  const faults: Fault[] = [];
  const gates: Array<{
    match: RegExp;
    count: number;
    waiting: Array<() => void>;
    arrived: number;
    met: boolean;
  }> = [];
  let callList: CallRecord[] = [];
  const bot = state.user(BOT, 'Bot');
  const token = `ghs_${randomBytes(18).toString('hex')}`;
  state.tokens.set(token, { user: bot, kind: 'installation' });
  let render: Renderer | undefined;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    let validationMs = 0;
    const method = (req.method ?? 'GET').toUpperCase();
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    const where = `${method} ${path}${url.search}`;
    const violation = (message: string) => violationList.push(`${where}: ${message}`);
    const auth = req.headers.authorization;
    const given = auth?.replace(/^(token|bearer)\s+/i, '');
    const identity = given ? state.tokens.get(given) : undefined;
    let operationId: string | undefined;

    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'x-github-api-version-selected': '2022-11-28',
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '4999',
        ...headers,
      });
      res.end(body === undefined ? undefined : JSON.stringify(body));
      callList.push({
        method,
        path: `${path}${url.search}`,
        operationId,
        status,
        actor: identity?.user.login,
        validationMs,
        totalMs: performance.now() - started,
      });
    };
    const error = (status: number, message: string, extra: Record<string, unknown> = {}) => ({
      status,
      body: { message, documentation_url: ERROR_DOCS, status: String(status), ...extra },
    });

    const fault = faults.find((f) => (f.times ?? 1) > 0 && (!f.match || f.match.test(where)));
    if (fault) {
      fault.times = (fault.times ?? 1) - 1;
      send(fault.status, error(fault.status, fault.message ?? 'fault').body, fault.headers);
      return;
    }
    const gate = gates.find((g) => g.arrived < g.count && g.match.test(where));
    if (gate) {
      gate.arrived++;
      await new Promise<void>((resolve) => {
        gate.waiting.push(resolve);
        if (gate.waiting.length === gate.count) {
          gate.met = true;
          for (const go of gate.waiting.splice(0)) go();
        }
      });
    }
    if (path === '/graphql' && method === 'POST') {
      operationId = 'graphql';
      const raw = await readBody(req);
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        violation('body is not JSON');
        send(400, error(400, 'Problems parsing JSON').body);
        return;
      }
      const t0 = performance.now();
      const result = handleGraphQL(state, identity, parsed);
      validationMs += performance.now() - t0;
      for (const p of result.problems) violation(p);
      send(result.status, result.body);
      return;
    }
    const match = api.match(method, path);
    if (!match) {
      // The shared Prometheus still scrapes the file-SD target of a twin job another test just
      // ended; when this server took that port, the scrape lands here. It is not a client of this API.
      const scrape = method === 'GET' && /^Prometheus\//.test(req.headers['user-agent'] ?? '');
      if (!scrape) violation('no such operation in the GitHub REST API');
      send(404, error(404, 'Not Found').body);
      return;
    }
    operationId = match.operation.operationId;
    if (given && !identity) {
      violation('unknown token');
      send(401, error(401, 'Bad credentials').body);
      return;
    }
    const raw = await readBody(req);
    let body: unknown;
    if (raw.length) {
      try {
        body = JSON.parse(raw);
      } catch {
        violation('body is not JSON');
        send(400, error(400, 'Problems parsing JSON').body);
        return;
      }
    }
    const t0 = performance.now();
    const checked = api.validateRequest(match, url.searchParams, body, raw.length > 0);
    validationMs += performance.now() - t0;
    if (checked.problems.length) {
      for (const p of checked.problems) violation(p);
      const e = error(422, 'Invalid request.', { errors: checked.problems });
      send(422, e.body);
      return;
    }
    if (identity?.permissions) {
      const [scope, level] = requiredPermission(operationId, method);
      const granted = scope
        .split('|')
        .map((s) => identity.permissions?.[s] ?? (s === 'metadata' ? 'read' : 'none'));
      const ok = granted.some((g) => g === 'write' || (level === 'read' && g === 'read'));
      if (!ok) {
        violation(`token lacks permission ${scope.replace('|', ' or ')}: ${level}`);
        send(403, error(403, 'Resource not accessible by integration').body);
        return;
      }
    }
    const route = routes[operationId];
    if (!route) {
      violation(`operation ${operationId} is valid on GitHub but not implemented by the local server`);
      send(501, error(501, 'Not implemented by the local GitHub server').body);
      return;
    }
    const ctx: RouteContext = {
      state,
      render: render as Renderer,
      identity,
      params: match.pathParams,
      query: checked.query,
      body: (body ?? {}) as Record<string, unknown>,
      violation,
    };
    let result: { status: number; body?: unknown; headers?: Record<string, string> };
    try {
      result = route(ctx);
    } catch (e) {
      if (e instanceof HttpError) result = error(e.status, e.message, e.extra);
      else {
        violation(`server error: ${(e as Error).stack}`);
        result = error(500, String((e as Error).message));
      }
    }
    const t1 = performance.now();
    const problems = api.validateResponse(match.operation, result.status, result.body);
    validationMs += performance.now() - t1;
    for (const p of problems) violation(`local server bug, ${p}`);
    send(result.status, result.body, result.headers);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: Error) => {
      violationList.push(`${req.method} ${req.url}: server crashed: ${e.stack}`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  render = new Renderer(api, state, url);

  return {
    url,
    token,
    botLogin: BOT,
    state,
    render,
    createToken(login, options = {}) {
      const t = `${options.kind === 'user' ? 'ghp' : 'ghs'}_${randomBytes(18).toString('hex')}`;
      state.tokens.set(t, {
        user: state.user(login),
        kind: options.kind ?? 'installation',
        permissions: options.permissions,
      });
      return t;
    },
    createRepo: (fullName, options) => state.createRepo(fullName, options),
    addCollaborator: (repo, login, permission) => state.setCollaborator(repo, login, permission),
    fork: (repo, owner) => state.fork(repo, owner),
    openPull: (options) => state.openPull(options),
    comment: (repo, n, login, body) => state.addComment(repo, n, login, body),
    merge: (pull, by) => state.mergePull(pull, by),
    review: (pull, login, reviewState, body) => state.addReview(pull, login, reviewState, body),
    protect: (repo, requiredChecks) => {
      repo.requiredChecks = [...requiredChecks];
    },
    closePull: (pull) => state.closePull(pull),
    files: (repo, ref) => {
      const sha = state.resolveRef(repo, ref ?? repo.defaultBranch);
      if (!sha) throw new Error(`no ref ${ref} in ${repo.owner.login}/${repo.name}`);
      return state.git.filesAt(sha);
    },
    failNext: (fault) => {
      faults.push({ ...fault, times: fault.times ?? 1 });
    },
    holdTogether: ({ match, count, timeoutMs = 30_000 }) => {
      const gate = { match, count, waiting: [] as Array<() => void>, arrived: 0, met: false };
      gates.push(gate);
      const timer = setTimeout(() => {
        gate.arrived = gate.count; // late ones pass
        for (const go of gate.waiting.splice(0)) go();
      }, timeoutMs);
      timer.unref();
      return { met: () => gate.met };
    },
    violations: () => [...violationList],
    calls: () => [...callList],
    resetCalls: () => {
      callList = [];
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}
