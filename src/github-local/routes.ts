// The REST operations the actions use, by operationId, over the in-memory state.
import type { CheckAnnotation } from '../github/check-runs.js';
import type { Renderer } from './render.js';
import type { CheckRun, GitHubState, Identity, Pull, Repo, RepoActions, Review } from './state.js';
import { now } from './state.js';

type Json = Record<string, unknown>;

export interface RouteContext {
  state: GitHubState;
  render: Renderer;
  identity: Identity | undefined;
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: Json;
  /** Records a request the real API would reject (tests assert there are none). */
  violation: (message: string) => void;
}

export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Json = {},
  ) {
    super(message);
  }
}

const DOCS = 'https://docs.github.com/rest';

function repoOf(ctx: RouteContext): Repo {
  const repo = ctx.state.findRepo(String(ctx.params.owner), String(ctx.params.repo));
  if (!repo) throw new HttpError(404, 'Not Found');
  return repo;
}

/** A pull request by `pull_number`; by `issue_number`, an issue or a pull request (both are issues). */
function pullOf(ctx: RouteContext, repo: Repo, key = 'pull_number'): Pull {
  const n = Number(ctx.params[key]);
  const pull = key === 'issue_number' ? ctx.state.item(repo, n) : ctx.state.pull(repo, n);
  if (!pull) throw new HttpError(404, 'Not Found');
  return pull;
}

function actor(ctx: RouteContext) {
  if (!ctx.identity) throw new HttpError(401, 'Requires authentication');
  return ctx.identity.user;
}

/** Pagination with `per_page`/`page` and a `Link` header, as octokit.paginate expects. */
function paginate(ctx: RouteContext, items: unknown[], path: string): RouteResult {
  const perPage = Math.min(Number(ctx.query.per_page ?? 30), 100);
  const page = Number(ctx.query.page ?? 1);
  const slice = items.slice((page - 1) * perPage, page * perPage);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const headers: Record<string, string> = {};
  if (page < last) {
    const link = (p: number) => {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(ctx.query)) if (v !== undefined) q.set(k, String(v));
      q.set('per_page', String(perPage));
      q.set('page', String(p));
      return `${ctx.render.repoUrl(repoOf(ctx))}${path}?${q}`;
    };
    headers.link = `<${link(page + 1)}>; rel="next", <${link(last)}>; rel="last"`;
  }
  return { status: 200, body: slice, headers };
}

/** A repository's Actions settings, for an admin (or an app with administration) only. */
function repoActions(ctx: RouteContext): RepoActions {
  const repo = requireAdmin(ctx, 'Resource not accessible by integration');
  return repo.actions ?? { secrets: [], environments: new Map() };
}

/** The repository, when the caller administers it (a person with admin, or an app with administration). */
function requireAdmin(ctx: RouteContext, refusal: string): Repo {
  const repo = repoOf(ctx);
  const identity = ctx.identity;
  if (!identity) throw new HttpError(401, 'Requires authentication');
  const admin =
    identity.kind === 'installation'
      ? identity.permissions === undefined || identity.permissions.administration === 'write'
      : ctx.state.permissionOf(repo, identity.user.login) === 'admin';
  if (!admin) throw new HttpError(403, refusal);
  return repo;
}

function ensureComment(ctx: RouteContext, repo: Repo) {
  const comment = ctx.state.comments.find((c) => c.id === Number(ctx.params.comment_id) && c.repo === repo);
  if (!comment) throw new HttpError(404, 'Not Found');
  return comment;
}

const COMMENT_LIMIT = 65536;

function checkCommentBody(ctx: RouteContext, body: string): void {
  if (body.length > COMMENT_LIMIT) {
    ctx.violation(`comment body is ${body.length} characters; GitHub rejects more than ${COMMENT_LIMIT}`);
    throw new HttpError(422, 'Validation Failed', {
      errors: [
        {
          resource: 'IssueComment',
          code: 'custom',
          field: 'body',
          message: 'body is too long (maximum is 65536 characters)',
        },
      ],
    });
  }
}

function applyCheckRun(ctx: RouteContext, run: CheckRun, body: Json): void {
  if (typeof body.name === 'string') run.name = body.name;
  if (typeof body.details_url === 'string') run.detailsUrl = body.details_url;
  if (typeof body.external_id === 'string') run.externalId = body.external_id;
  if (typeof body.started_at === 'string') run.startedAt = body.started_at;
  if (typeof body.status === 'string') run.status = body.status;
  if (typeof body.conclusion === 'string') {
    run.conclusion = body.conclusion;
    run.status = 'completed';
  }
  if (run.status === 'completed') {
    if (!run.conclusion) {
      ctx.violation('check run completed without a conclusion');
      throw new HttpError(422, 'Validation Failed', {
        errors: [{ resource: 'CheckRun', code: 'missing_field', field: 'conclusion' }],
      });
    }
    run.completedAt = typeof body.completed_at === 'string' ? body.completed_at : (run.completedAt ?? now());
  }
  const output = body.output as Json | undefined;
  if (output) {
    run.output.title = (output.title as string) ?? run.output.title;
    run.output.summary = (output.summary as string) ?? run.output.summary;
    run.output.text = (output.text as string) ?? run.output.text;
    const annotations = (output.annotations as CheckAnnotation[] | undefined) ?? [];
    for (const a of annotations) {
      if (a.start_line !== a.end_line && (a.start_column !== undefined || a.end_column !== undefined)) {
        ctx.violation(
          `annotation ${a.path}:${a.start_line}: columns are only allowed on single-line annotations`,
        );
      }
    }
    // Annotations accumulate across updates, like on GitHub.
    run.annotations.push(...annotations);
  }
}

export const routes: Record<string, (ctx: RouteContext) => RouteResult> = {
  'users/get-authenticated': (ctx) => {
    const identity = ctx.identity;
    if (!identity) throw new HttpError(401, 'Requires authentication');
    if (identity.kind === 'installation') throw new HttpError(403, 'Resource not accessible by integration');
    const template = ctx.render.user(identity.user);
    return {
      status: 200,
      body: {
        ...template,
        name: identity.user.login,
        company: null,
        blog: null,
        location: null,
        email: null,
        hireable: null,
        bio: null,
        public_repos: 0,
        public_gists: 0,
        followers: 0,
        following: 0,
        created_at: '2020-01-01T00:00:00Z',
        updated_at: '2020-01-01T00:00:00Z',
        private_gists: 0,
        total_private_repos: 0,
        owned_private_repos: 0,
        disk_usage: 0,
        collaborators: 0,
        two_factor_authentication: false,
      },
    };
  },

  'repos/get': (ctx) => ({ status: 200, body: ctx.render.fullRepository(repoOf(ctx)) }),

  // Listing runners needs admin on the repository (or an app's administration permission).
  'actions/list-self-hosted-runners-for-repo': (ctx) => {
    const repo = requireAdmin(ctx, 'Must have admin rights to Repository.');
    const runners = (ctx.state.runners.get(repo.id) ?? []).map((r) => ({
      id: r.id,
      name: r.name,
      os: 'linux',
      status: r.status,
      busy: false,
      labels: r.labels.map((name, i) => ({
        id: i + 1,
        name,
        type: name === 'self-hosted' ? 'read-only' : 'custom',
      })),
    }));
    return { status: 200, body: { total_count: runners.length, runners } };
  },

  // Actions settings and secrets (`topo doctor`): admin only, as on GitHub (Administration/Secrets: read).
  'actions/get-fork-pr-contributor-approval-permissions-repository': (ctx) => {
    const { forkApproval } = repoActions(ctx);
    if (!forkApproval) throw new HttpError(404, 'Not Found');
    return { status: 200, body: { approval_policy: forkApproval } };
  },
  'actions/get-repo-secret': (ctx) => {
    const name = String(ctx.params.secret_name);
    if (!repoActions(ctx).secrets.includes(name)) throw new HttpError(404, 'Not Found');
    return { status: 200, body: { name, created_at: now(), updated_at: now() } };
  },
  'repos/get-environment': (ctx) => {
    const repo = repoOf(ctx);
    const name = String(ctx.params.environment_name);
    const env = repo.actions?.environments.get(name);
    if (!env) throw new HttpError(404, 'Not Found');
    const url = `${ctx.render.repoUrl(repo)}/environments/${encodeURIComponent(name)}`;
    return {
      status: 200,
      body: {
        id: repo.id * 100 + 1,
        node_id: `EN_${repo.id}_${name}`,
        name,
        url,
        html_url: url,
        created_at: repo.createdAt,
        updated_at: repo.createdAt,
        deployment_branch_policy: env.defaultBranchOnly
          ? { protected_branches: true, custom_branch_policies: false }
          : null,
      },
    };
  },
  'actions/list-environment-secrets': (ctx) => {
    const env = repoActions(ctx).environments.get(String(ctx.params.environment_name));
    if (!env) throw new HttpError(404, 'Not Found');
    const secrets = env.secrets.map((name) => ({ name, created_at: now(), updated_at: now() }));
    return { status: 200, body: { total_count: secrets.length, secrets } };
  },

  // The monitor's loop asks whether a command waits for the runner (status=queued).
  'actions/list-workflow-runs-for-repo': (ctx) => {
    const repo = repoOf(ctx);
    const status = ctx.query.status;
    const runs = (ctx.state.workflowRuns.get(repo.id) ?? [])
      .filter((r) => status === undefined || r.status === status)
      .map((r) => ctx.render.workflowRun(repo, r));
    const page = paginate(ctx, runs, '/actions/runs');
    return { ...page, body: { total_count: runs.length, workflow_runs: page.body } };
  },

  'repos/get-collaborator-permission-level': (ctx) => {
    const repo = repoOf(ctx);
    const login = String(ctx.params.username);
    const user = ctx.state.users.get(login);
    if (!user) throw new HttpError(404, 'Not Found');
    const permission = ctx.state.permissionOf(repo, login);
    const collaborator = {
      ...ctx.render.user(user),
      permissions: {
        pull: permission !== 'none',
        triage: ['triage', 'write', 'maintain', 'admin'].includes(permission),
        push: ['write', 'maintain', 'admin'].includes(permission),
        maintain: ['maintain', 'admin'].includes(permission),
        admin: permission === 'admin',
      },
      role_name: permission,
    };
    // `permission` keeps GitHub's legacy values (maintain → write, triage → read); role_name is exact.
    const legacy = permission === 'maintain' ? 'write' : permission === 'triage' ? 'read' : permission;
    return { status: 200, body: { permission: legacy, role_name: permission, user: collaborator } };
  },

  'repos/get-content': (ctx) => {
    const repo = repoOf(ctx);
    const ref = typeof ctx.query.ref === 'string' ? ctx.query.ref : repo.defaultBranch;
    const sha = ctx.state.resolveRef(repo, ref);
    if (!sha) throw new HttpError(404, `No commit found for the ref ${ref}`);
    const path = String(ctx.params.path ?? '').replace(/^\/+|\/+$/g, '');
    const files = ctx.state.git.flatten(ctx.state.commit(sha).tree);
    const base = ctx.render.repoUrl(repo);
    const entry = files.get(path);
    const links = (kind: string, p: string, s: string) => ({
      url: `${base}/contents/${p}?ref=${ref}`,
      html_url: `${base.replace('/repos/', '/_web/')}/blob/${ref}/${p}`,
      git_url: `${base}/git/${kind}/${s}`,
      download_url: kind === 'blobs' ? `${base.replace('/repos/', '/_raw/')}/${ref}/${p}` : null,
    });
    if (entry) {
      const content = ctx.state.git.blobs.get(entry.sha) as Buffer;
      const l = links('blobs', path, entry.sha);
      return {
        status: 200,
        body: {
          type: 'file',
          encoding: 'base64',
          size: content.length,
          name: path.split('/').pop(),
          path,
          content: content.toString('base64'),
          sha: entry.sha,
          ...l,
          _links: { self: l.url, git: l.git_url, html: l.html_url },
        },
      };
    }
    const prefix = path ? `${path}/` : '';
    const children = new Map<string, { type: 'file' | 'dir'; sha: string; size: number }>();
    for (const [p, e] of files) {
      if (!p.startsWith(prefix)) continue;
      const rest = p.slice(prefix.length);
      const name = rest.split('/')[0] as string;
      if (rest.includes('/')) children.set(name, { type: 'dir', sha: '0'.repeat(40), size: 0 });
      else
        children.set(name, { type: 'file', sha: e.sha, size: ctx.state.git.blobs.get(e.sha)?.length ?? 0 });
    }
    if (!children.size) throw new HttpError(404, 'Not Found');
    const list = [...children.entries()].sort().map(([name, c]) => {
      const p = `${prefix}${name}`;
      const l = links(c.type === 'dir' ? 'trees' : 'blobs', p, c.sha);
      return {
        type: c.type,
        size: c.size,
        name,
        path: p,
        sha: c.sha,
        ...l,
        _links: { self: l.url, git: l.git_url, html: l.html_url },
      };
    });
    return { status: 200, body: list };
  },

  'pulls/list': (ctx) => {
    const repo = repoOf(ctx);
    const state = String(ctx.query.state ?? 'open');
    let pulls = ctx.state.pullsOf(repo).filter((p) => state === 'all' || p.state === state);
    if (typeof ctx.query.head === 'string') {
      const [owner, ref] = ctx.query.head.split(':');
      pulls = pulls.filter((p) => p.head.repo.owner.login === owner && p.head.ref === ref);
    }
    if (typeof ctx.query.base === 'string') pulls = pulls.filter((p) => p.base.ref === ctx.query.base);
    const direction =
      ctx.query.direction ?? (ctx.query.sort === undefined || ctx.query.sort === 'created' ? 'desc' : 'asc');
    pulls = [...pulls].sort((a, b) => (direction === 'asc' ? a.number - b.number : b.number - a.number));
    return paginate(
      ctx,
      pulls.map((p) => ctx.render.pullSimple(p)),
      '/pulls',
    );
  },

  'pulls/get': (ctx) => {
    const repo = repoOf(ctx);
    return { status: 200, body: ctx.render.pull(pullOf(ctx, repo)) };
  },

  'pulls/create': (ctx) => {
    const repo = repoOf(ctx);
    const user = actor(ctx);
    const head = String(ctx.body.head);
    const [headOwner, headRef] = head.includes(':') ? head.split(':') : [repo.owner.login, head];
    const headRepo = ctx.state.findRepo(String(headOwner), repo.name) ?? repo;
    const headSha = ctx.state.resolveRef(headRepo, `refs/heads/${headRef}`);
    if (!headSha)
      throw new HttpError(422, 'Validation Failed', {
        errors: [{ resource: 'PullRequest', field: 'head', code: 'invalid' }],
      });
    const baseRef = String(ctx.body.base);
    // GitHub allows one open pull request per head and base.
    if (
      ctx.state
        .pullsOf(repo)
        .some(
          (p) =>
            p.state === 'open' &&
            p.head.repo === headRepo &&
            p.head.ref === headRef &&
            p.base.ref === baseRef,
        )
    )
      throw new HttpError(422, 'Validation Failed', {
        errors: [
          {
            resource: 'PullRequest',
            code: 'custom',
            message: `A pull request already exists for ${headOwner}:${headRef}.`,
          },
        ],
      });
    const baseSha = ctx.state.branchSha(repo, baseRef);
    const pull = ctx.state.addPull({
      repo,
      user,
      title: String(ctx.body.title ?? headRef),
      body: (ctx.body.body as string) ?? null,
      base: { repo, ref: baseRef, sha: baseSha },
      head: { repo: headRepo, ref: String(headRef), sha: headSha },
    });
    return { status: 201, body: ctx.render.pull(pull) };
  },

  'pulls/update': (ctx) => {
    const repo = repoOf(ctx);
    const pull = pullOf(ctx, repo);
    if (typeof ctx.body.title === 'string') pull.title = ctx.body.title;
    if (typeof ctx.body.body === 'string') pull.body = ctx.body.body;
    if (ctx.body.state === 'closed' && pull.state === 'open') ctx.state.closePull(pull);
    if (ctx.body.state === 'open' && pull.state === 'closed' && !pull.merged) {
      pull.state = 'open';
      pull.closedAt = null;
    }
    return { status: 200, body: ctx.render.pull(pull) };
  },

  'pulls/merge': (ctx) => {
    const repo = repoOf(ctx);
    const pull = pullOf(ctx, repo);
    if (pull.state !== 'open') throw new HttpError(405, 'Pull Request is not mergeable');
    if (typeof ctx.body.sha === 'string' && ctx.body.sha !== pull.head.sha)
      throw new HttpError(409, 'Head branch was modified. Review and try the merge again.');
    const missing = ctx.state.missingChecks(pull);
    if (missing.length)
      throw new HttpError(
        405,
        `Repository rule violations found\n\n${missing.map((m) => `Required status check "${m}" is expected.`).join('\n')}`,
      );
    const sha = ctx.state.mergePull(pull, actor(ctx).login);
    return { status: 200, body: { sha, merged: true, message: 'Pull Request successfully merged' } };
  },

  'pulls/list-reviews': (ctx) => {
    const repo = repoOf(ctx);
    const pull = pullOf(ctx, repo);
    const reviews = ctx.state.reviews.filter((r) => r.repo === repo && r.pullNumber === pull.number);
    return paginate(
      ctx,
      reviews.map((r) => ctx.render.review(r)),
      `/repos/${repo.owner.login}/${repo.name}/pulls/${pull.number}/reviews`,
    );
  },

  'pulls/create-review': (ctx) => {
    const repo = repoOf(ctx);
    const pull = pullOf(ctx, repo);
    const event = String(ctx.body.event ?? 'COMMENT');
    const states: Record<string, Review['state']> = {
      APPROVE: 'APPROVED',
      REQUEST_CHANGES: 'CHANGES_REQUESTED',
      COMMENT: 'COMMENTED',
    };
    const state = states[event];
    if (!state) throw new HttpError(422, `Unprocessable Entity: event ${event}`);
    if (actor(ctx).login === pull.user.login && state !== 'COMMENTED')
      throw new HttpError(422, 'Unprocessable Entity: Can not approve your own pull request');
    const review = ctx.state.addReview(pull, actor(ctx).login, state, String(ctx.body.body ?? ''));
    return { status: 200, body: ctx.render.review(review) };
  },

  'pulls/list-files': (ctx) => {
    const repo = repoOf(ctx);
    const pull = pullOf(ctx, repo);
    const base = ctx.render.repoUrl(repo);
    const files = ctx.state.changedFiles(pull).map((c) => {
      const additions = c.after ? c.after.split('\n').length : 0;
      const deletions = c.before ? c.before.split('\n').length : 0;
      const sha = c.after !== undefined ? ctx.state.git.putBlob(Buffer.from(c.after)) : '0'.repeat(40);
      return {
        sha,
        filename: c.path,
        status: c.status,
        additions,
        deletions,
        changes: additions + deletions,
        blob_url: `${base.replace('/repos/', '/_web/')}/blob/${pull.head.sha}/${c.path}`,
        raw_url: `${base.replace('/repos/', '/_raw/')}/${pull.head.sha}/${c.path}`,
        contents_url: `${base}/contents/${c.path}?ref=${pull.head.sha}`,
        patch: [
          `@@ -${deletions ? 1 : 0},${deletions} +${additions ? 1 : 0},${additions} @@`,
          ...(c.before ? c.before.split('\n').map((l) => `-${l}`) : []),
          ...(c.after ? c.after.split('\n').map((l) => `+${l}`) : []),
        ].join('\n'),
      };
    });
    return paginate(ctx, files, `/pulls/${pull.number}/files`);
  },

  'issues/get': (ctx) => {
    const repo = repoOf(ctx);
    return { status: 200, body: ctx.render.issue(pullOf(ctx, repo, 'issue_number')) };
  },

  'issues/list-for-repo': (ctx) => {
    const repo = repoOf(ctx);
    const state = String(ctx.query.state ?? 'open');
    const wanted = typeof ctx.query.labels === 'string' ? ctx.query.labels.split(',').filter(Boolean) : [];
    const pulls = ctx.state
      .itemsOf(repo)
      .filter((p) => state === 'all' || p.state === state)
      .filter((p) => wanted.every((w) => p.labels.some((l) => l.toLowerCase() === w.toLowerCase())))
      .filter((p) => ctx.query.creator === undefined || p.user.login === ctx.query.creator)
      .sort((a, b) => b.number - a.number);
    return paginate(
      ctx,
      pulls.map((p) => ctx.render.issue(p)),
      '/issues',
    );
  },

  'issues/create': (ctx) => {
    const repo = repoOf(ctx);
    const user = actor(ctx);
    if (typeof ctx.body.title !== 'string' || ctx.body.title === '')
      throw new HttpError(422, 'Validation Failed', {
        errors: [{ resource: 'Issue', field: 'title', code: 'missing_field' }],
      });
    const body = typeof ctx.body.body === 'string' ? ctx.body.body : null;
    if (body !== null) checkCommentBody(ctx, body);
    const issue = ctx.state.addIssue(repo, user, ctx.body.title, body);
    for (const l of (ctx.body.labels as string[] | undefined) ?? []) issue.labels.push(String(l));
    return { status: 201, body: ctx.render.issue(issue) };
  },

  'issues/update': (ctx) => {
    const repo = repoOf(ctx);
    const issue = pullOf(ctx, repo, 'issue_number');
    actor(ctx);
    if (typeof ctx.body.title === 'string') issue.title = ctx.body.title;
    if (typeof ctx.body.body === 'string') {
      checkCommentBody(ctx, ctx.body.body);
      issue.body = ctx.body.body;
    }
    if (ctx.body.state === 'closed' && issue.state === 'open') ctx.state.closePull(issue);
    if (ctx.body.state === 'open' && issue.state === 'closed' && !issue.merged)
      Object.assign(issue, { state: 'open', closedAt: null });
    issue.updatedAt = new Date().toISOString();
    return { status: 200, body: ctx.render.issue(issue) };
  },

  'issues/list-comments': (ctx) => {
    const repo = repoOf(ctx);
    pullOf(ctx, repo, 'issue_number');
    const comments = ctx.state.commentsOn(repo, Number(ctx.params.issue_number));
    return paginate(
      ctx,
      comments.map((c) => ctx.render.comment(c)),
      `/issues/${ctx.params.issue_number}/comments`,
    );
  },

  'issues/create-comment': (ctx) => {
    const repo = repoOf(ctx);
    const pull = pullOf(ctx, repo, 'issue_number');
    const body = String(ctx.body.body);
    checkCommentBody(ctx, body);
    const comment = ctx.state.addComment(repo, pull.number, actor(ctx).login, body);
    return { status: 201, body: ctx.render.comment(comment) };
  },

  'issues/get-comment': (ctx) => ({ status: 200, body: ctx.render.comment(ensureComment(ctx, repoOf(ctx))) }),

  'issues/update-comment': (ctx) => {
    const comment = ensureComment(ctx, repoOf(ctx));
    const user = actor(ctx);
    if (comment.user.login !== user.login && ctx.identity?.kind === 'installation') {
      // GITHUB_TOKEN may edit others' comments with write access; still worth noticing in tests.
      ctx.violation(`${user.login} edited comment ${comment.id} written by ${comment.user.login}`);
    }
    const body = String(ctx.body.body);
    checkCommentBody(ctx, body);
    comment.body = body;
    comment.updatedAt = now();
    return { status: 200, body: ctx.render.comment(comment) };
  },

  'issues/delete-comment': (ctx) => {
    const repo = repoOf(ctx);
    const comment = ensureComment(ctx, repo);
    ctx.state.comments.splice(ctx.state.comments.indexOf(comment), 1);
    return { status: 204 };
  },

  'reactions/list-for-issue-comment': (ctx) => {
    const comment = ensureComment(ctx, repoOf(ctx));
    const list = ctx.state.reactions
      .filter((r) => r.commentId === comment.id)
      .filter((r) => ctx.query.content === undefined || r.content === ctx.query.content);
    return paginate(
      ctx,
      list.map((r) => ctx.render.reaction(r)),
      `/issues/comments/${comment.id}/reactions`,
    );
  },

  'reactions/create-for-issue-comment': (ctx) => {
    const comment = ensureComment(ctx, repoOf(ctx));
    const user = actor(ctx);
    const content = String(ctx.body.content);
    const existing = ctx.state.reactions.find(
      (r) => r.commentId === comment.id && r.user.login === user.login && r.content === content,
    );
    if (existing) return { status: 200, body: ctx.render.reaction(existing) };
    const reaction = { id: ctx.state.id(), commentId: comment.id, user, content, createdAt: now() };
    ctx.state.reactions.push(reaction);
    return { status: 201, body: ctx.render.reaction(reaction) };
  },

  'reactions/delete-for-issue-comment': (ctx) => {
    const index = ctx.state.reactions.findIndex((r) => r.id === Number(ctx.params.reaction_id));
    if (index >= 0) ctx.state.reactions.splice(index, 1);
    return { status: 204 };
  },

  'issues/list-labels-on-issue': (ctx) => {
    const repo = repoOf(ctx);
    const pull = pullOf(ctx, repo, 'issue_number');
    return paginate(
      ctx,
      pull.labels.map((name) => ctx.render.label(repo, ctx.state.ensureLabel(repo, name))),
      `/issues/${pull.number}/labels`,
    );
  },

  'issues/add-labels': (ctx) => {
    const repo = repoOf(ctx);
    const pull = pullOf(ctx, repo, 'issue_number');
    const raw = Array.isArray(ctx.body.labels) ? ctx.body.labels : [];
    for (const item of raw) {
      const name = typeof item === 'string' ? item : String((item as Json).name);
      ctx.state.ensureLabel(repo, name);
      if (!pull.labels.some((l) => l.toLowerCase() === name.toLowerCase())) pull.labels.push(name);
    }
    pull.updatedAt = now();
    return {
      status: 200,
      body: pull.labels.map((name) => ctx.render.label(repo, ctx.state.ensureLabel(repo, name))),
    };
  },

  'issues/set-labels': (ctx) => {
    const repo = repoOf(ctx);
    const pull = pullOf(ctx, repo, 'issue_number');
    const raw = Array.isArray(ctx.body.labels) ? ctx.body.labels : [];
    pull.labels = raw.map((item) => (typeof item === 'string' ? item : String((item as Json).name)));
    for (const name of pull.labels) ctx.state.ensureLabel(repo, name);
    return {
      status: 200,
      body: pull.labels.map((name) => ctx.render.label(repo, ctx.state.ensureLabel(repo, name))),
    };
  },

  'issues/remove-label': (ctx) => {
    const repo = repoOf(ctx);
    const pull = pullOf(ctx, repo, 'issue_number');
    const name = String(ctx.params.name);
    const index = pull.labels.findIndex((l) => l.toLowerCase() === name.toLowerCase());
    if (index < 0) throw new HttpError(404, 'Label does not exist');
    pull.labels.splice(index, 1);
    pull.updatedAt = now();
    return {
      status: 200,
      body: pull.labels.map((l) => ctx.render.label(repo, ctx.state.ensureLabel(repo, l))),
    };
  },

  'issues/create-label': (ctx) => {
    const repo = repoOf(ctx);
    const name = String(ctx.body.name);
    if (repo.labels.has(name.toLowerCase())) {
      throw new HttpError(422, 'Validation Failed', {
        errors: [{ resource: 'Label', code: 'already_exists', field: 'name' }],
      });
    }
    const label = ctx.state.ensureLabel(repo, name);
    if (typeof ctx.body.color === 'string') label.color = ctx.body.color.replace(/^#/, '');
    if (typeof ctx.body.description === 'string') label.description = ctx.body.description;
    return { status: 201, body: ctx.render.label(repo, label) };
  },

  'issues/get-label': (ctx) => {
    const repo = repoOf(ctx);
    const label = repo.labels.get(String(ctx.params.name).toLowerCase());
    if (!label) throw new HttpError(404, 'Not Found');
    return { status: 200, body: ctx.render.label(repo, label) };
  },

  'checks/create': (ctx) => {
    const repo = repoOf(ctx);
    const run: CheckRun = {
      id: ctx.state.id(),
      repo,
      name: String(ctx.body.name),
      headSha: String(ctx.body.head_sha),
      status: 'queued',
      conclusion: null,
      startedAt: now(),
      completedAt: null,
      detailsUrl: null,
      externalId: null,
      output: { title: null, summary: null, text: null },
      annotations: [],
      app: actor(ctx),
    };
    if (!ctx.state.git.commits.has(run.headSha)) {
      ctx.violation(`check run created for unknown commit ${run.headSha}`);
      throw new HttpError(422, 'No commit found for SHA: ' + run.headSha);
    }
    applyCheckRun(ctx, run, ctx.body);
    ctx.state.checkRuns.push(run);
    return { status: 201, body: ctx.render.checkRun(run) };
  },

  'checks/update': (ctx) => {
    const repo = repoOf(ctx);
    const run = ctx.state.checkRuns.find((r) => r.id === Number(ctx.params.check_run_id) && r.repo === repo);
    if (!run) throw new HttpError(404, 'Not Found');
    applyCheckRun(ctx, run, ctx.body);
    return { status: 200, body: ctx.render.checkRun(run) };
  },

  'checks/get': (ctx) => {
    const repo = repoOf(ctx);
    const run = ctx.state.checkRuns.find((r) => r.id === Number(ctx.params.check_run_id) && r.repo === repo);
    if (!run) throw new HttpError(404, 'Not Found');
    return { status: 200, body: ctx.render.checkRun(run) };
  },

  'checks/list-annotations': (ctx) => {
    const repo = repoOf(ctx);
    const run = ctx.state.checkRuns.find((r) => r.id === Number(ctx.params.check_run_id) && r.repo === repo);
    if (!run) throw new HttpError(404, 'Not Found');
    const list = run.annotations.map((a) => ({
      path: a.path,
      start_line: a.start_line,
      end_line: a.end_line,
      start_column: a.start_column ?? null,
      end_column: a.end_column ?? null,
      annotation_level: a.annotation_level,
      title: a.title ?? null,
      message: a.message,
      raw_details: a.raw_details ?? null,
      blob_href: `${ctx.render.repoUrl(repo)}/blob/${run.headSha}/${a.path}`,
    }));
    return paginate(ctx, list, `/check-runs/${run.id}/annotations`);
  },

  'checks/list-for-ref': (ctx) => {
    const repo = repoOf(ctx);
    const sha = ctx.state.resolveRef(repo, String(ctx.params.ref));
    if (!sha) throw new HttpError(422, `No commit found for SHA: ${ctx.params.ref}`);
    const runs = ctx.state.checkRuns
      .filter((r) => r.repo === repo && r.headSha === sha)
      .filter((r) => ctx.query.check_name === undefined || r.name === ctx.query.check_name)
      .filter((r) => ctx.query.status === undefined || r.status === ctx.query.status)
      .sort((a, b) => b.id - a.id);
    return {
      status: 200,
      body: { total_count: runs.length, check_runs: runs.map((r) => ctx.render.checkRun(r)) },
    };
  },

  'git/create-blob': (ctx) => {
    const repo = repoOf(ctx);
    const encoding = String(ctx.body.encoding ?? 'utf-8');
    const content = Buffer.from(String(ctx.body.content), encoding === 'base64' ? 'base64' : 'utf8');
    const sha = ctx.state.git.putBlob(content);
    return { status: 201, body: { url: `${ctx.render.repoUrl(repo)}/git/blobs/${sha}`, sha } };
  },

  'git/get-blob': (ctx) => {
    const repo = repoOf(ctx);
    const sha = String(ctx.params.file_sha);
    const blob = ctx.state.git.blobs.get(sha);
    if (!blob) throw new HttpError(404, 'Not Found');
    return {
      status: 200,
      body: {
        content: blob.toString('base64'),
        encoding: 'base64',
        url: `${ctx.render.repoUrl(repo)}/git/blobs/${sha}`,
        sha,
        size: blob.length,
        node_id: `B_${sha}`,
      },
    };
  },

  'git/create-tree': (ctx) => {
    const repo = repoOf(ctx);
    const git = ctx.state.git;
    const base = typeof ctx.body.base_tree === 'string' ? ctx.body.base_tree : undefined;
    if (base && !git.trees.has(base)) {
      throw new HttpError(422, 'base_tree is not a valid tree oid');
    }
    const flat = base ? git.flatten(base) : new Map();
    for (const entry of ctx.body.tree as Json[]) {
      const path = String(entry.path);
      if (path.startsWith('/') || path.split('/').some((s) => s === '' || s === '.' || s === '..')) {
        ctx.violation(`tree entry path "${path}" is not a clean relative path`);
        throw new HttpError(422, 'Invalid tree info');
      }
      for (const key of [...flat.keys()]) if (key.startsWith(`${path}/`)) flat.delete(key);
      if (entry.sha === null) {
        flat.delete(path);
        continue;
      }
      if (typeof entry.content === 'string' && typeof entry.sha === 'string') {
        ctx.violation('tree entry has both sha and content');
      }
      if (entry.type === 'tree' && typeof entry.sha === 'string') {
        for (const [p, e] of git.flatten(entry.sha)) flat.set(`${path}/${p}`, e);
        continue;
      }
      const sha =
        typeof entry.content === 'string' ? git.putBlob(Buffer.from(entry.content)) : String(entry.sha);
      if (!git.blobs.has(sha)) throw new HttpError(422, `Invalid tree info: unknown blob ${sha}`);
      flat.set(path, { mode: String(entry.mode ?? '100644'), sha });
    }
    const sha = git.buildTree(flat);
    return { status: 201, body: ctx.render.gitTree(repo, sha, false) };
  },

  'git/get-tree': (ctx) => {
    const repo = repoOf(ctx);
    let sha = String(ctx.params.tree_sha);
    if (!ctx.state.git.trees.has(sha)) {
      const commit = ctx.state.resolveRef(repo, sha);
      if (!commit) throw new HttpError(404, 'Not Found');
      sha = ctx.state.commit(commit).tree;
    }
    const recursive =
      ctx.query.recursive !== undefined && ctx.query.recursive !== 'false' && ctx.query.recursive !== '0';
    return { status: 200, body: ctx.render.gitTree(repo, sha, recursive) };
  },

  'git/create-commit': (ctx) => {
    const repo = repoOf(ctx);
    const git = ctx.state.git;
    const tree = String(ctx.body.tree);
    if (!git.trees.has(tree)) throw new HttpError(422, 'Tree SHA does not exist');
    const parents = ((ctx.body.parents as string[] | undefined) ?? []).map(String);
    for (const p of parents)
      if (!git.commits.has(p))
        throw new HttpError(422, 'Parent SHA does not exist or is not a commit object');
    const user = actor(ctx);
    const date = now();
    const person = (p: unknown) => {
      const given = p as Json | undefined;
      return {
        name: String(given?.name ?? user.login),
        email: String(given?.email ?? `${user.login}@users.noreply.github.com`),
        date: String(given?.date ?? date),
      };
    };
    const sha = git.putCommit({
      tree,
      parents,
      message: String(ctx.body.message),
      author: person(ctx.body.author),
      committer: person(ctx.body.committer ?? ctx.body.author),
    });
    return { status: 201, body: ctx.render.gitCommit(repo, sha) };
  },

  'git/get-commit': (ctx) => {
    const repo = repoOf(ctx);
    const sha = String(ctx.params.commit_sha);
    if (!ctx.state.git.commits.has(sha)) throw new HttpError(404, 'Not Found');
    return { status: 200, body: ctx.render.gitCommit(repo, sha) };
  },

  'git/get-ref': (ctx) => {
    const repo = repoOf(ctx);
    const ref = `refs/${String(ctx.params.ref).replace(/^refs\//, '')}`;
    const sha = repo.refs.get(ref);
    if (!sha) throw new HttpError(404, 'Not Found');
    return { status: 200, body: ctx.render.gitRef(repo, ref, sha) };
  },

  'git/create-ref': (ctx) => {
    const repo = repoOf(ctx);
    const ref = String(ctx.body.ref);
    if (!/^refs\/.+\/.+/.test(ref)) {
      ctx.violation(`create-ref: "${ref}" is not fully qualified (refs/heads/…)`);
      throw new HttpError(422, 'Reference name must start with refs/ and have at least two slashes');
    }
    if (repo.refs.has(ref)) throw new HttpError(422, 'Reference already exists');
    const sha = String(ctx.body.sha);
    if (!ctx.state.git.commits.has(sha)) throw new HttpError(422, 'Object does not exist');
    repo.refs.set(ref, sha);
    return { status: 201, body: ctx.render.gitRef(repo, ref, sha) };
  },

  'git/update-ref': (ctx) => {
    const repo = repoOf(ctx);
    const ref = `refs/${String(ctx.params.ref).replace(/^refs\//, '')}`;
    const current = repo.refs.get(ref);
    if (!current) throw new HttpError(422, 'Reference does not exist');
    const sha = String(ctx.body.sha);
    if (!ctx.state.git.commits.has(sha)) throw new HttpError(422, 'Object does not exist');
    if (ctx.body.force !== true && !ctx.state.git.isAncestor(current, sha)) {
      throw new HttpError(422, 'Update is not a fast forward');
    }
    repo.refs.set(ref, sha);
    return { status: 200, body: ctx.render.gitRef(repo, ref, sha) };
  },
};

/**
 * The GITHUB_TOKEN permission an operation needs (`permissions:` of a workflow), so a workflow
 * that asks for too little fails here as it would on GitHub.
 */
export function requiredPermission(operationId: string, method: string): [string, 'read' | 'write'] {
  const level = method === 'GET' ? 'read' : 'write';
  const [group] = operationId.split('/');
  if (group === 'checks') return ['checks', level];
  if (group === 'git') return ['contents', level];
  if (group === 'pulls') return ['pull-requests', level];
  // A new issue (the autopilot's dashboard) needs `issues: write`; pull-requests does not cover it.
  if (operationId === 'issues/create') return ['issues', level];
  if (group === 'issues' || group === 'reactions') return ['issues|pull-requests', level];
  if (operationId === 'repos/get-content') return ['contents', 'read'];
  if (operationId === 'actions/list-workflow-runs-for-repo') return ['actions', 'read'];
  return ['metadata', 'read'];
}

export const ERROR_DOCS = DOCS;
