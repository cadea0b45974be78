// GraphQL for the local GitHub API: every query is parsed and validated against GitHub's real
// schema (@octokit/graphql-schema) with graphql@16's `validate`, then executed over the in-memory
// state for the part of the schema the project reads (a repository's open pull requests, or one by
// number, with labels, head commit, changed files and comments; blobs by `object(expression:)`; a commit's
// check suites and runs by `object(oid:)`; rateLimit).
// A valid query touching anything else is answered with GitHub's error shape and recorded as a
// violation, like an unimplemented REST route. Connections require `first` or `last` (1..100), as
// on GitHub.
import { readFileSync } from 'node:fs';
import {
  buildSchema,
  type DocumentNode,
  execute,
  GraphQLError,
  type GraphQLSchema,
  parse,
  validate,
} from 'graphql';
import { packageFile } from './package-file.js';
import type { GitHubState, Identity, Pull, Repo } from './state.js';

let cached: GraphQLSchema | undefined;

/** GitHub's public GraphQL schema (loaded once per process: ~1 s). */
export function githubSchema(): GraphQLSchema {
  if (!cached) {
    const idl = readFileSync(packageFile('@octokit/graphql-schema', 'schema.graphql'), 'utf8');
    cached = buildSchema(idl, { assumeValidSDL: true });
  }
  return cached;
}

interface Page {
  first?: number;
  last?: number;
  after?: string;
  before?: string;
}

const cursor = (i: number) => Buffer.from(`cursor:${i}`).toString('base64');
const fromCursor = (c: string | undefined) =>
  c
    ? Number(
        Buffer.from(c, 'base64')
          .toString('utf8')
          .replace(/^cursor:/, ''),
      )
    : undefined;

/** A connection over `items` with GitHub's pagination rules. */
function connection<T>(items: readonly T[], args: Page, field: string) {
  const { first, last } = args;
  if (first === undefined && last === undefined)
    throw new GraphQLError(
      `You must provide a \`first\` or \`last\` value to properly paginate the \`${field}\` connection.`,
    );
  for (const [k, v] of [
    ['first', first],
    ['last', last],
  ] as const)
    if (v !== undefined && (v < 1 || v > 100))
      throw new GraphQLError(
        `Requesting ${v} records on the \`${field}\` connection exceeds the \`${k}\` limit of 100 records.`,
      );
  let start = 0;
  let end = items.length;
  const after = fromCursor(args.after);
  const before = fromCursor(args.before);
  if (after !== undefined) start = after + 1;
  if (before !== undefined) end = Math.min(end, before);
  if (first !== undefined) end = Math.min(end, start + first);
  if (last !== undefined) start = Math.max(start, end - last);
  const slice = items.slice(start, end).map((node, i) => ({ node, cursor: cursor(start + i) }));
  return {
    totalCount: items.length,
    nodes: slice.map((e) => e.node),
    edges: slice,
    pageInfo: {
      hasNextPage: end < items.length,
      hasPreviousPage: start > 0,
      startCursor: slice[0]?.cursor ?? null,
      endCursor: slice[slice.length - 1]?.cursor ?? null,
    },
  };
}

/** GraphQL shows a bot's login without the `[bot]` suffix REST uses. */
function actor(user: { login: string; type: 'User' | 'Bot' }) {
  return user.type === 'Bot'
    ? { __typename: 'Bot', login: user.login.replace(/\[bot\]$/, '') }
    : { __typename: 'User', login: user.login };
}

const CHANGE_TYPE = { added: 'ADDED', modified: 'MODIFIED', removed: 'DELETED' } as const;

function pullNode(state: GitHubState, repo: Repo, pull: Pull) {
  return {
    __typename: 'PullRequest',
    number: pull.number,
    title: pull.title,
    state: pull.merged ? 'MERGED' : pull.state === 'open' ? 'OPEN' : 'CLOSED',
    headRefOid: pull.head.sha,
    headRefName: pull.head.ref,
    updatedAt: pull.updatedAt,
    headRepository: { nameWithOwner: `${pull.head.repo.owner.login}/${pull.head.repo.name}` },
    isCrossRepository: pull.head.repo !== repo,
    author: actor(pull.user),
    labels: (a: Page) =>
      connection(
        pull.labels.map((name) => ({ name })),
        a,
        'labels',
      ),
    files: (a: Page) =>
      connection(
        state.changedFiles(pull).map((f) => ({ path: f.path, changeType: CHANGE_TYPE[f.status] })),
        a,
        'files',
      ),
    comments: (a: Page) =>
      connection(
        state.commentsOn(repo, pull.number).map((c) => ({
          __typename: 'IssueComment',
          databaseId: c.id,
          body: c.body,
          updatedAt: c.updatedAt,
          createdAt: c.createdAt,
          author: actor(c.user),
        })),
        a,
        'comments',
      ),
  };
}

/** A commit's check suites: one per app that wrote check runs on it (as GitHub groups them). */
function commitNode(state: GitHubState, repo: Repo, oid: string) {
  const runs = state.checkRuns.filter((r) => r.repo === repo && r.headSha === oid);
  const apps = [...new Set(runs.map((r) => r.app.login))];
  return {
    __typename: 'Commit',
    oid,
    checkSuites: (a: Page) =>
      connection(
        apps.map((login) => ({
          __typename: 'CheckSuite',
          app: { __typename: 'App', slug: login.replace(/\[bot\]$/, '') },
          checkRuns: (c: Page & { filterBy?: { checkName?: string; checkType?: string } }) => {
            let mine = runs
              .filter((r) => r.app.login === login)
              .filter((r) => !c.filterBy?.checkName || r.name === c.filterBy.checkName)
              .sort((x, y) => y.id - x.id);
            // LATEST (GitHub's default): the newest run of each name.
            if (c.filterBy?.checkType !== 'ALL')
              mine = mine.filter((r, i) => mine.findIndex((o) => o.name === r.name) === i);
            return connection(
              mine.map((r) => ({
                __typename: 'CheckRun',
                databaseId: r.id,
                name: r.name,
                status: r.status.toUpperCase(),
                conclusion: r.conclusion ? r.conclusion.toUpperCase() : null,
                annotations: (p: Page) => connection(r.annotations, p, 'annotations'),
              })),
              c,
              'checkRuns',
            );
          },
        })),
        a,
        'checkSuites',
      ),
  };
}

function repositoryNode(state: GitHubState, repo: Repo) {
  return {
    __typename: 'Repository',
    name: repo.name,
    nameWithOwner: `${repo.owner.login}/${repo.name}`,
    pullRequests: (a: Page & { states?: string[]; orderBy?: { field: string; direction: string } }) => {
      let pulls = state.pullsOf(repo).filter((p) => {
        const s = p.merged ? 'MERGED' : p.state === 'open' ? 'OPEN' : 'CLOSED';
        return !a.states || a.states.includes(s);
      });
      pulls = [...pulls].sort((x, y) => x.number - y.number);
      if (a.orderBy?.direction === 'DESC') pulls.reverse();
      return connection(
        pulls.map((p) => pullNode(state, repo, p)),
        a,
        'pullRequests',
      );
    },
    pullRequest: ({ number }: { number: number }) => {
      const pull = state.pullsOf(repo).find((p) => p.number === number);
      if (!pull) throw new GraphQLError(`Could not resolve to a PullRequest with the number of ${number}.`);
      return pullNode(state, repo, pull);
    },
    object: ({ expression, oid }: { expression?: string; oid?: string }) => {
      if (oid !== undefined) return state.git.commits.has(oid) ? commitNode(state, repo, oid) : null;
      const m = /^([^:]+):(.+)$/.exec(expression ?? '');
      if (!m) return null;
      const text = state.fileAt(repo, m[1] as string, m[2] as string);
      return text === undefined
        ? null
        : {
            __typename: 'Blob',
            text,
            isTruncated: false,
            isBinary: false,
            byteSize: Buffer.byteLength(text),
          };
    },
  };
}

export interface GraphQLResult {
  status: number;
  body: { data?: unknown; errors?: Array<{ message: string; type?: string }> };
  problems: string[];
}

type GraphQLRequest = { query: string; variables?: unknown; operationName?: unknown };

/** Validates and executes one GraphQL request body. */
export function handleGraphQL(
  state: GitHubState,
  identity: Identity | undefined,
  raw: unknown,
): GraphQLResult {
  if (!identity)
    return {
      status: 401,
      body: { errors: [{ message: 'This endpoint requires you to be authenticated.' }] },
      problems: ['GraphQL without a token'],
    };
  const req = (raw ?? {}) as { query?: unknown; variables?: unknown; operationName?: unknown };
  if (typeof req.query !== 'string')
    return {
      status: 400,
      body: { errors: [{ message: 'A query attribute must be specified.' }] },
      problems: ['no query'],
    };
  const doc = parsedQuery(req.query);
  if ('refused' in doc) return doc.refused;
  return executeQuery(state, { ...req, query: req.query }, doc.parsed);
}

/** The query parsed and checked against GitHub's schema, or the answer GitHub gives when it is not. */
function parsedQuery(query: string): { parsed: DocumentNode } | { refused: GraphQLResult } {
  let doc: DocumentNode;
  try {
    doc = parse(query);
  } catch (e) {
    const message = (e as Error).message;
    return {
      refused: {
        status: 200,
        body: { errors: [{ message, type: 'PARSE_ERROR' }] },
        problems: [`GraphQL: ${message}`],
      },
    };
  }
  const errors = validate(githubSchema(), doc);
  if (!errors.length) return { parsed: doc };
  return {
    refused: {
      status: 200,
      body: { errors: errors.map((e) => ({ message: e.message })) },
      problems: errors.map((e) => `GraphQL query invalid against GitHub's schema: ${e.message}`),
    },
  };
}

/** The query's root fields over the in-memory state. */
function queryRoot(state: GitHubState) {
  return {
    repository: ({ owner, name }: { owner: string; name: string }) => {
      const repo = state.findRepo(owner, name);
      if (!repo)
        throw new GraphQLError(`Could not resolve to a Repository with the name '${owner}/${name}'.`);
      return repositoryNode(state, repo);
    },
    rateLimit: () => ({
      cost: 1,
      limit: 5000,
      remaining: 4999,
      used: 1,
      resetAt: new Date(Date.now() + 3600e3).toISOString(),
      nodeCount: 0,
    }),
  };
}

/** Runs a valid query; errors a client earns (paging limits) and bugs of this server are told apart. */
function executeQuery(state: GitHubState, req: GraphQLRequest, doc: DocumentNode): GraphQLResult {
  const result = execute({
    schema: githubSchema(),
    document: doc,
    rootValue: queryRoot(state),
    variableValues: (req.variables ?? {}) as Record<string, unknown>,
    ...(typeof req.operationName === 'string' ? { operationName: req.operationName } : {}),
  }) as { data?: unknown; errors?: readonly GraphQLError[] };
  const problems = (result.errors ?? [])
    .filter((e) => !/^(You must provide|Requesting \d+ records|Could not resolve)/.test(e.message))
    .map((e) => `GraphQL execution: ${e.message} at ${e.path?.join('.')}`);
  return {
    status: 200,
    body: {
      data: result.data ?? null,
      ...(result.errors?.length
        ? { errors: result.errors.map((e) => ({ message: e.message, path: e.path })) }
        : {}),
    },
    problems: [
      ...problems,
      ...(result.errors ?? [])
        .filter((e) => /^(You must provide|Requesting \d+ records)/.test(e.message))
        .map((e) => `GraphQL: ${e.message}`),
    ],
  };
}
