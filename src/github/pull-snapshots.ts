// Everything the monitor reads about open pull requests, in one paginated GraphQL query per pass:
// number, head SHA and repository, labels, changed files and the bot's comments (sticky
// comments are found in them, so no per-PR listing). 30 pull requests a page: 80 open PRs cost
// 3 requests and a few GraphQL points, where REST cost 1 + 2 per PR. Candidate files are then
// read in one more query (`object(expression: "sha:path")` per file, aliased). A PR with more
// files or comments than a page holds falls back to REST for that PR only (`complete: false`
// says which part). GraphQL was chosen over ETag conditional requests because a pass must see
// changes (new labels, new commits) on every PR, and GitHub's 304 saving applies per URL: with
// 80 PRs that is still 80+ requests a pass, each counted against the secondary limits.
import type { Octokit } from './client.js';
import { type ListedComment, type StickyComment, type StickyTarget, stickyParts } from './sticky-comment.js';

export const PULLS_PER_PAGE = 30;
export const FILES_PER_PULL = 100;
export const COMMENTS_PER_PULL = 50;

/** What the monitor reads of a pull request (one fragment for the page and the one-PR query). */
const PULL_FIELDS = /* GraphQL */ `
  fragment TopoPull on PullRequest {
    number
    headRefOid
    headRepository { nameWithOwner }
    labels(first: 100) { nodes { name } }
    files(first: $files) { totalCount nodes { path changeType } }
    comments(last: $comments) { totalCount nodes { databaseId body updatedAt author { __typename login } } }
  }
`;

export const PULL_SNAPSHOTS_QUERY = /* GraphQL */ `
  query TopoPullSnapshots($owner: String!, $name: String!, $cursor: String, $pulls: Int!, $files: Int!, $comments: Int!) {
    repository(owner: $owner, name: $name) {
      pullRequests(states: [OPEN], first: $pulls, after: $cursor, orderBy: { field: CREATED_AT, direction: ASC }) {
        pageInfo { hasNextPage endCursor }
        nodes { ...TopoPull }
      }
    }
  }
  ${PULL_FIELDS}
`;

/** One pull request (`/topo status`): the same fields, and its state. */
export const PULL_SNAPSHOT_QUERY = /* GraphQL */ `
  query TopoPullSnapshot($owner: String!, $name: String!, $number: Int!, $files: Int!, $comments: Int!) {
    repository(owner: $owner, name: $name) {
      pullRequest(number: $number) { state ...TopoPull }
    }
  }
  ${PULL_FIELDS}
`;

export interface PullSnapshot {
  number: number;
  headSha: string;
  /** owner/name of the head repository (null when the fork was deleted). */
  headRepository: string | null;
  labels: string[];
  files: Array<{
    path: string;
    status: 'added' | 'modified' | 'removed' | 'renamed' | 'copied' | 'changed' | 'unchanged';
  }>;
  /** The bot's comments (REST login spelling, e.g. `github-actions[bot]`). */
  botComments: ListedComment[];
}

export interface SnapshotRead {
  pulls: PullSnapshot[];
  /** GitHub requests made (GraphQL pages + REST fallbacks). */
  requests: number;
}

interface GqlPull {
  number: number;
  headRefOid: string;
  headRepository: { nameWithOwner: string } | null;
  labels: { nodes: Array<{ name: string }> };
  files: { totalCount: number; nodes: Array<{ path: string; changeType: string }> };
  comments: {
    totalCount: number;
    nodes: Array<{
      databaseId: number | null;
      body: string;
      updatedAt: string;
      author: { __typename: string; login: string } | null;
    }>;
  };
}

interface GqlPage {
  repository: {
    pullRequests: { pageInfo: { hasNextPage: boolean; endCursor: string | null }; nodes: GqlPull[] };
  } | null;
}

const STATUS: Record<string, PullSnapshot['files'][number]['status']> = {
  ADDED: 'added',
  MODIFIED: 'modified',
  DELETED: 'removed',
  RENAMED: 'renamed',
  COPIED: 'copied',
  CHANGED: 'changed',
};

/** GraphQL spells a bot `github-actions`; REST (and our config) `github-actions[bot]`. */
export function restLogin(author: { __typename: string; login: string } | null): string | undefined {
  if (!author) return undefined;
  return author.__typename === 'Bot' && !author.login.endsWith('[bot]')
    ? `${author.login}[bot]`
    : author.login;
}

export async function readPullSnapshots(
  octokit: Octokit,
  repo: { owner: string; repo: string; botLogin: string },
): Promise<SnapshotRead> {
  const pulls: PullSnapshot[] = [];
  let requests = 0;
  let cursor: string | null = null;
  for (;;) {
    const page: GqlPage = await octokit.graphql<GqlPage>(PULL_SNAPSHOTS_QUERY, {
      owner: repo.owner,
      name: repo.repo,
      cursor,
      pulls: PULLS_PER_PAGE,
      files: FILES_PER_PULL,
      comments: COMMENTS_PER_PULL,
    });
    requests++;
    if (!page.repository) throw new Error(`repository ${repo.owner}/${repo.repo} not found (GraphQL)`);
    for (const p of page.repository.pullRequests.nodes) {
      const done = await completed(octokit, repo, p);
      requests += done.requests;
      pulls.push(done.snap);
    }
    const info = page.repository.pullRequests.pageInfo;
    if (!info.hasNextPage || !info.endCursor) break;
    cursor = info.endCursor;
  }
  return { pulls, requests };
}

/** A PR with more files or comments than the query's page: that part from REST, for it alone. */
async function completed(
  octokit: Octokit,
  repo: { owner: string; repo: string; botLogin: string },
  p: GqlPull,
): Promise<{ snap: PullSnapshot; requests: number }> {
  const snap = toSnapshot(p, repo.botLogin);
  let requests = 0;
  if (p.files.totalCount > p.files.nodes.length) {
    snap.files = await restFiles(octokit, repo, p.number);
    requests += Math.ceil(p.files.totalCount / 100);
  }
  if (p.comments.totalCount > p.comments.nodes.length) {
    snap.botComments = await restBotComments(octokit, repo, p.number);
    requests += Math.ceil(p.comments.totalCount / 100);
  }
  return { snap, requests };
}

const NOT_FOUND = /Could not resolve to a PullRequest/;

/**
 * One pull request's snapshot (`/topo status` refreshes one PR, not every open one): undefined when
 * it does not exist or is not open.
 */
export async function readPullSnapshot(
  octokit: Octokit,
  repo: { owner: string; repo: string; botLogin: string },
  number: number,
): Promise<{ pull: PullSnapshot | undefined; requests: number }> {
  let data: { repository: { pullRequest: (GqlPull & { state: string }) | null } | null };
  try {
    data = await octokit.graphql(PULL_SNAPSHOT_QUERY, {
      owner: repo.owner,
      name: repo.repo,
      number,
      files: FILES_PER_PULL,
      comments: COMMENTS_PER_PULL,
    });
  } catch (e) {
    const errors = (e as { errors?: Array<{ type?: string; message?: string }> }).errors;
    if (errors?.length && errors.every((x) => x.type === 'NOT_FOUND' || NOT_FOUND.test(x.message ?? '')))
      return { pull: undefined, requests: 1 };
    throw e;
  }
  if (!data.repository) throw new Error(`repository ${repo.owner}/${repo.repo} not found (GraphQL)`);
  const p = data.repository.pullRequest;
  if (p?.state !== 'OPEN') return { pull: undefined, requests: 1 };
  const done = await completed(octokit, repo, p);
  return { pull: done.snap, requests: 1 + done.requests };
}

function toSnapshot(p: GqlPull, botLogin: string): PullSnapshot {
  return {
    number: p.number,
    headSha: p.headRefOid,
    headRepository: p.headRepository?.nameWithOwner ?? null,
    labels: p.labels.nodes.map((l) => l.name),
    files: p.files.nodes.map((f) => ({ path: f.path, status: STATUS[f.changeType] ?? 'changed' })),
    botComments: p.comments.nodes
      .map((c) => ({
        id: c.databaseId ?? 0,
        login: restLogin(c.author),
        body: c.body,
        updatedAt: c.updatedAt,
      }))
      .filter((c) => c.login === botLogin && c.id > 0),
  };
}

async function restFiles(octokit: Octokit, repo: { owner: string; repo: string }, pull: number) {
  const files = await octokit.paginate(octokit.rest.pulls.listFiles, {
    owner: repo.owner,
    repo: repo.repo,
    pull_number: pull,
    per_page: 100,
  });
  return files.map((f) => ({ path: f.filename, status: f.status }));
}

async function restBotComments(
  octokit: Octokit,
  repo: { owner: string; repo: string; botLogin: string },
  pull: number,
): Promise<ListedComment[]> {
  const comments = await octokit.paginate(octokit.rest.issues.listComments, {
    owner: repo.owner,
    repo: repo.repo,
    issue_number: pull,
    per_page: 100,
  });
  return comments
    .map((c) => ({ id: c.id, login: c.user?.login, body: c.body, updatedAt: c.updated_at }))
    .filter((c) => c.login === repo.botLogin);
}

/** The sticky comment parts of a purpose in a snapshot (as `findStickyComments` would list them). */
export function snapshotSticky(
  snap: PullSnapshot,
  target: Pick<StickyTarget, 'purpose' | 'botLogin'>,
): StickyComment[] {
  return stickyParts(snap.botComments, target);
}

/** Check suites looked at per commit: with more, a missing check run is "unknown", not "absent". */
export const SUITES_PER_COMMIT = 20;

export interface BlobRead {
  texts: Map<string, string | undefined>;
  /**
   * For `checks.shas`: the id of the newest check run named `checks.name` on that commit, null
   * when there is none; a commit missing from the map could not be told (too many suites).
   */
  checkRuns: Map<string, number | null>;
  requests: number;
}

interface GqlCommit {
  checkSuites?: {
    totalCount: number;
    nodes: Array<{ checkRuns: { nodes: Array<{ databaseId: number | null }> } }>;
  };
}

/**
 * Text files at commits, in one GraphQL request per 50 files: `object(expression: "sha:path")`
 * with the expressions as variables (a path cannot inject into the query). Missing → undefined.
 * With `checks`, the same request also finds each commit's check run of that name (so writing it
 * needs no listing first).
 */
export async function readBlobs(
  octokit: Octokit,
  repo: { owner: string; repo: string },
  refs: ReadonlyArray<{ sha: string; path: string }>,
  checks?: { name: string; shas: readonly string[] },
): Promise<BlobRead> {
  const texts = new Map<string, string | undefined>();
  const checkRuns = new Map<string, number | null>();
  const shas = [...new Set(checks?.shas ?? [])];
  let requests = 0;
  for (let i = 0; i < Math.max(refs.length, shas.length); i += 50) {
    const batch = refs.slice(i, i + 50);
    const commits = shas.slice(i, i + 50);
    const vars = [
      ...batch.map((_, j) => `$e${j}: String!`),
      ...commits.map((_, j) => `$k${j}: GitObjectID!`),
      ...(commits.length ? ['$check: String!'] : []),
    ].join(', ');
    const fields = [
      ...batch.map((_, j) => `f${j}: object(expression: $e${j}) { ... on Blob { text isTruncated } }`),
      ...commits.map(
        (_, j) =>
          `k${j}: object(oid: $k${j}) { ... on Commit { checkSuites(first: ${SUITES_PER_COMMIT}) { totalCount nodes { checkRuns(first: 1, filterBy: { checkName: $check, checkType: LATEST }) { nodes { databaseId } } } } } }`,
      ),
    ];
    const query = `query TopoBlobs($owner: String!, $name: String!, ${vars}) { repository(owner: $owner, name: $name) { ${fields.join(' ')} } }`;
    const variables: Record<string, string> = { owner: repo.owner, name: repo.repo };
    batch.forEach((r, j) => {
      variables[`e${j}`] = `${r.sha}:${r.path}`;
    });
    commits.forEach((sha, j) => {
      variables[`k${j}`] = sha;
    });
    if (commits.length && checks) variables.check = checks.name;
    const data = await octokit.graphql<{
      repository: Record<string, ({ text?: string | null; isTruncated?: boolean } & GqlCommit) | null> | null;
    }>(query, variables);
    requests++;
    batch.forEach((r, j) => {
      const blob = data.repository?.[`f${j}`];
      texts.set(`${r.sha}:${r.path}`, blob && !blob.isTruncated ? (blob.text ?? undefined) : undefined);
    });
    commits.forEach((sha, j) => {
      const suites = data.repository?.[`k${j}`]?.checkSuites;
      if (!suites) return; // unknown commit: let the writer look
      const ids = suites.nodes.flatMap((n) => n.checkRuns.nodes.map((r) => r.databaseId ?? 0));
      const newest = Math.max(0, ...ids);
      if (newest > 0) checkRuns.set(sha, newest);
      else if (suites.totalCount <= suites.nodes.length) checkRuns.set(sha, null);
    });
  }
  return { texts, checkRuns, requests };
}
