// A local GitHub REST API for tests: real in-memory state, and every request and every response
// checked against GitHub's OpenAPI description. A request the real API would reject is recorded
// as a violation (and answered with the error GitHub would give); tests assert `violations()` is
// empty. Start one per test file with `startGitHubServer()`.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleGraphQL } from './graphql.js';
import { type OpenApiValidator, openApi } from './openapi.js';
import { Renderer } from './render.js';
import {
  ERROR_DOCS,
  HttpError,
  type RouteContext,
  type RouteResult,
  requiredPermission,
  routes,
} from './routes.js';
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
   * RouteResults the next `times` requests whose `METHOD /path?query` matches `match` with this error
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

interface Gate {
  match: RegExp;
  count: number;
  waiting: Array<() => void>;
  arrived: number;
  met: boolean;
}

/** What one server keeps between requests. */
interface ServerCore {
  api: OpenApiValidator;
  state: GitHubState;
  violations: string[];
  faults: Fault[];
  gates: Gate[];
  calls: CallRecord[];
  render: Renderer | undefined;
}

/** One request and its answer: who asks, what for, and how it is answered and recorded. */
interface Exchange {
  core: ServerCore;
  req: IncomingMessage;
  method: string;
  url: URL;
  path: string;
  /** `METHOD /path?query`, what faults and gates match. */
  where: string;
  /** The token as sent, and the identity it names (undefined for an unknown token). */
  given: string | undefined;
  identity: Identity | undefined;
  operationId: string | undefined;
  validationMs: number;
  violation(message: string): void;
  send(status: number, body: unknown, headers?: Record<string, string>): void;
}

function exchangeOf(core: ServerCore, req: IncomingMessage, res: ServerResponse): Exchange {
  const started = performance.now();
  const method = (req.method ?? 'GET').toUpperCase();
  const url = new URL(req.url ?? '/', 'http://localhost');
  const where = `${method} ${url.pathname}${url.search}`;
  const given = req.headers.authorization?.replace(/^(token|bearer)\s+/i, '');
  const x: Exchange = {
    core,
    req,
    method,
    url,
    path: url.pathname,
    where,
    given,
    identity: given ? core.state.tokens.get(given) : undefined,
    operationId: undefined,
    validationMs: 0,
    violation: (message) => core.violations.push(`${where}: ${message}`),
    send: (status, body, headers = {}) => {
      res.writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'x-github-api-version-selected': '2022-11-28',
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '4999',
        ...headers,
      });
      res.end(body === undefined ? undefined : JSON.stringify(body));
      core.calls.push({
        method,
        path: `${x.path}${url.search}`,
        operationId: x.operationId,
        status,
        actor: x.identity?.user.login,
        validationMs: x.validationMs,
        totalMs: performance.now() - started,
      });
    },
  };
  return x;
}

/** GitHub's error body for a status. */
function errorRouteResult(status: number, message: string, extra: Record<string, unknown> = {}): RouteResult {
  return { status, body: { message, documentation_url: ERROR_DOCS, status: String(status), ...extra } };
}

/** Times `work` into the exchange's validation time. */
function timed<T>(x: Exchange, work: () => T): T {
  const t0 = performance.now();
  const result = work();
  x.validationMs += performance.now() - t0;
  return result;
}

/** A fault set by `failNext` that matches: answered instead of the request. */
function answerFault(x: Exchange): boolean {
  const fault = x.core.faults.find((f) => (f.times ?? 1) > 0 && (!f.match || f.match.test(x.where)));
  if (!fault) return false;
  fault.times = (fault.times ?? 1) - 1;
  x.send(fault.status, errorRouteResult(fault.status, fault.message ?? 'fault').body, fault.headers);
  return true;
}

/** Holds the request at a `holdTogether` gate until all of the gate's requests arrived. */
async function waitAtGate(x: Exchange): Promise<void> {
  const gate = x.core.gates.find((g) => g.arrived < g.count && g.match.test(x.where));
  if (!gate) return;
  gate.arrived++;
  await new Promise<void>((resolve) => {
    gate.waiting.push(resolve);
    if (gate.waiting.length === gate.count) {
      gate.met = true;
      for (const go of gate.waiting.splice(0)) go();
    }
  });
}

/** The body parsed, or, when it is not JSON, undefined and the 400 GitHub gives already sent. */
function parseJson(x: Exchange, raw: string): { body: unknown } | undefined {
  try {
    return { body: JSON.parse(raw) };
  } catch {
    x.violation('body is not JSON');
    x.send(400, errorRouteResult(400, 'Problems parsing JSON').body);
    return undefined;
  }
}

async function serveGraphQL(x: Exchange): Promise<void> {
  x.operationId = 'graphql';
  const parsed = parseJson(x, await readBody(x.req));
  if (!parsed) return;
  const result = timed(x, () => handleGraphQL(x.core.state, x.identity, parsed.body));
  for (const p of result.problems) x.violation(p);
  x.send(result.status, result.body);
}

/** Whether the identity's workflow `permissions:` allow the operation; a 403 is sent when not. */
function permitted(x: Exchange, operationId: string): boolean {
  const identity = x.identity;
  if (!identity?.permissions) return true;
  const [scope, level] = requiredPermission(operationId, x.method);
  const granted = scope
    .split('|')
    .map((s) => identity.permissions?.[s] ?? (s === 'metadata' ? 'read' : 'none'));
  if (granted.some((g) => g === 'write' || (level === 'read' && g === 'read'))) return true;
  x.violation(`token lacks permission ${scope.replace('|', ' or ')}: ${level}`);
  x.send(403, errorRouteResult(403, 'Resource not accessible by integration').body);
  return false;
}

/** A REST operation: matched in the description, authenticated, validated, permitted, routed. */
async function serveRest(x: Exchange): Promise<void> {
  const match = x.core.api.match(x.method, x.path);
  if (!match) return notAnOperation(x);
  const operationId = match.operation.operationId;
  x.operationId = operationId;
  if (x.given && !x.identity) {
    x.violation('unknown token');
    x.send(401, errorRouteResult(401, 'Bad credentials').body);
    return;
  }
  const raw = await readBody(x.req);
  const read = raw.length ? parseJson(x, raw) : { body: undefined };
  if (!read) return;
  const checked = timed(x, () =>
    x.core.api.validateRequest(match, x.url.searchParams, read.body, raw.length > 0),
  );
  if (checked.problems.length) {
    for (const p of checked.problems) x.violation(p);
    x.send(422, errorRouteResult(422, 'Invalid request.', { errors: checked.problems }).body);
    return;
  }
  if (!permitted(x, operationId)) return;
  const route = routes[operationId];
  if (!route) {
    x.violation(`operation ${operationId} is valid on GitHub but not implemented by the local server`);
    x.send(501, errorRouteResult(501, 'Not implemented by the local GitHub server').body);
    return;
  }
  const result = runRoute(x, route, {
    state: x.core.state,
    render: x.core.render as Renderer,
    identity: x.identity,
    params: match.pathParams,
    query: checked.query,
    body: (read.body ?? {}) as Record<string, unknown>,
    violation: x.violation,
  });
  const problems = timed(x, () => x.core.api.validateResponse(match.operation, result.status, result.body));
  for (const p of problems) x.violation(`local server bug, ${p}`);
  x.send(result.status, result.body, result.headers);
}

/** A path the REST API does not have: 404, and a violation unless it is a stray Prometheus scrape. */
function notAnOperation(x: Exchange): void {
  // The shared Prometheus still scrapes the file-SD target of a twin job another test just
  // ended; when this server took that port, the scrape lands here. It is not a client of this API.
  const scrape = x.method === 'GET' && /^Prometheus\//.test(x.req.headers['user-agent'] ?? '');
  if (!scrape) x.violation('no such operation in the GitHub REST API');
  x.send(404, errorRouteResult(404, 'Not Found').body);
}

/** The route's answer; its HttpError as GitHub's error, anything else as a 500 and a violation. */
function runRoute(x: Exchange, route: (ctx: RouteContext) => RouteResult, ctx: RouteContext): RouteResult {
  try {
    return route(ctx);
  } catch (e) {
    if (e instanceof HttpError) return errorRouteResult(e.status, e.message, e.extra);
    x.violation(`server error: ${(e as Error).stack}`);
    return errorRouteResult(500, String((e as Error).message));
  }
}

/** The server's endpoints, first match wins: GraphQL, then every REST operation. */
const ENDPOINTS: ReadonlyArray<{ matches(x: Exchange): boolean; serve(x: Exchange): Promise<void> }> = [
  { matches: (x) => x.path === '/graphql' && x.method === 'POST', serve: serveGraphQL },
  { matches: () => true, serve: serveRest },
];

async function handle(core: ServerCore, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const x = exchangeOf(core, req, res);
  if (answerFault(x)) return;
  await waitAtGate(x);
  const endpoint = ENDPOINTS.find((e) => e.matches(x));
  await endpoint?.serve(x);
}

export async function startGitHubServer(): Promise<GitHubServer> {
  const state = new GitHubState();
  const core: ServerCore = {
    api: openApi(),
    state,
    violations: [],
    faults: [],
    gates: [],
    calls: [],
    render: undefined,
  };
  const token = `ghs_${randomBytes(18).toString('hex')}`;
  state.tokens.set(token, { user: state.user(BOT, 'Bot'), kind: 'installation' });
  const server = createServer((req, res) => {
    handle(core, req, res).catch((e: Error) => {
      core.violations.push(`${req.method} ${req.url}: server crashed: ${e.stack}`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const render = new Renderer(core.api, state, url);
  core.render = render;
  return {
    url,
    token,
    botLogin: BOT,
    state,
    render,
    ...stateControls(state),
    ...faultControls(core),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}

type StateControls = Pick<
  GitHubServer,
  | 'createToken'
  | 'createRepo'
  | 'addCollaborator'
  | 'fork'
  | 'openPull'
  | 'comment'
  | 'merge'
  | 'review'
  | 'protect'
  | 'closePull'
  | 'files'
>;

/** The test's hands on the repositories: tokens, repos, pulls, comments, reviews, files. */
function stateControls(state: GitHubState): StateControls {
  return {
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
  };
}

/** The test's hands on the traffic: faults, gates, and what was asked and found wrong. */
function faultControls(
  core: ServerCore,
): Pick<GitHubServer, 'failNext' | 'holdTogether' | 'violations' | 'calls' | 'resetCalls'> {
  return {
    failNext: (fault) => {
      core.faults.push({ ...fault, times: fault.times ?? 1 });
    },
    holdTogether: ({ match, count, timeoutMs = 30_000 }) => {
      const gate: Gate = { match, count, waiting: [], arrived: 0, met: false };
      core.gates.push(gate);
      const timer = setTimeout(() => {
        gate.arrived = gate.count; // late ones pass
        for (const go of gate.waiting.splice(0)) go();
      }, timeoutMs);
      timer.unref();
      return { met: () => gate.met };
    },
    violations: () => [...core.violations],
    calls: () => [...core.calls],
    resetCalls: () => {
      core.calls = [];
    },
  };
}
