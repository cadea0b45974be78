// State → REST payloads. Each payload starts from the OpenAPI description's own example (so it has
// every field the schema requires) and is overwritten with the state's values; the server then
// validates the result against the response schema, so a drift here is reported, not hidden.
import type { OpenApiValidator } from './openapi.js';
import type {
  CheckRun,
  Comment,
  GitHubState,
  Label,
  Pull,
  Reaction,
  Repo,
  Review,
  User,
  WorkflowRun,
} from './state.js';

type Json = Record<string, unknown>;

export class Renderer {
  constructor(
    private readonly api: OpenApiValidator,
    private readonly state: GitHubState,
    private readonly baseUrl: string,
  ) {}

  private get web(): string {
    return `${this.baseUrl}/_web`;
  }

  user(user: User): Json {
    // Bot logins carry brackets (`github-actions[bot]`): GitHub percent-encodes them in URLs.
    const login = encodeURIComponent(user.login);
    const api = `${this.baseUrl}/users/${login}`;
    return {
      login: user.login,
      id: user.id,
      node_id: `U_${user.id}`,
      avatar_url: `${this.web}/avatars/${login}`,
      gravatar_id: '',
      url: api,
      html_url: `${this.web}/${login}`,
      followers_url: `${api}/followers`,
      following_url: `${api}/following{/other_user}`,
      gists_url: `${api}/gists{/gist_id}`,
      starred_url: `${api}/starred{/owner}{/repo}`,
      subscriptions_url: `${api}/subscriptions`,
      organizations_url: `${api}/orgs`,
      repos_url: `${api}/repos`,
      events_url: `${api}/events{/privacy}`,
      received_events_url: `${api}/received_events`,
      type: user.type,
      site_admin: false,
      user_view_type: 'public',
    };
  }

  repoUrl(repo: Repo): string {
    return `${this.baseUrl}/repos/${repo.owner.login}/${repo.name}`;
  }

  /** The `repository` schema (pull request head/base, webhook payloads). */
  repository(repo: Repo): Json {
    const template = (this.api.example('pull-request').head as Json).repo as Json;
    const url = this.repoUrl(repo);
    const out: Json = { ...template };
    // Every `…_url` of the template points at the example repository: rewrite them all.
    for (const [key, value] of Object.entries(out)) {
      if (typeof value === 'string' && key.endsWith('url') && value.includes('api.github.com/repos/')) {
        out[key] = value.replace(/^https:\/\/api\.github\.com\/repos\/[^/{]+\/[^/{]+/, url);
      }
    }
    Object.assign(out, {
      id: repo.id,
      node_id: `R_${repo.id}`,
      name: repo.name,
      full_name: `${repo.owner.login}/${repo.name}`,
      owner: this.user(repo.owner),
      private: repo.private,
      visibility: repo.private ? 'private' : 'public',
      html_url: `${this.web}/${repo.owner.login}/${repo.name}`,
      url,
      clone_url: `${this.web}/${repo.owner.login}/${repo.name}.git`,
      git_url: `git://localhost/${repo.owner.login}/${repo.name}.git`,
      ssh_url: `git@localhost:${repo.owner.login}/${repo.name}.git`,
      svn_url: `${this.web}/${repo.owner.login}/${repo.name}`,
      mirror_url: null,
      homepage: null,
      description: null,
      fork: Boolean(repo.parent),
      default_branch: repo.defaultBranch,
      created_at: repo.createdAt,
      updated_at: repo.createdAt,
      pushed_at: repo.createdAt,
      permissions: undefined,
      topics: [],
      archived: false,
      disabled: false,
    });
    delete out.permissions;
    delete out.template_repository;
    return out;
  }

  fullRepository(repo: Repo): Json {
    const template = this.api.example('full-repository-default-response');
    const out: Json = { ...template, ...this.repository(repo) };
    delete out.parent;
    delete out.source;
    delete out.organization;
    delete out.template_repository;
    delete out.security_and_analysis;
    delete out.license;
    out.license = null;
    out.network_count = 0;
    out.subscribers_count = 0;
    if (repo.parent) {
      out.parent = this.repository(repo.parent);
      out.source = this.repository(repo.parent);
    }
    return out;
  }

  label(repo: Repo, label: Label): Json {
    return {
      id: label.id,
      node_id: `LA_${label.id}`,
      url: `${this.repoUrl(repo)}/labels/${encodeURIComponent(label.name)}`,
      name: label.name,
      description: label.description,
      color: label.color,
      default: false,
    };
  }

  private pullLabels(pull: Pull): Json[] {
    return pull.labels.map((name) =>
      this.label(pull.base.repo, this.state.ensureLabel(pull.base.repo, name)),
    );
  }

  private branch(repo: Repo, ref: string, sha: string, owner: User): Json {
    return {
      label: `${owner.login}:${ref}`,
      ref,
      sha,
      user: this.user(owner),
      repo: this.repository(repo),
    };
  }

  /** The `pull-request` schema (GET/POST/PATCH one pull request). */
  pull(pull: Pull): Json {
    const template = this.api.example('pull-request');
    const repo = pull.base.repo;
    const url = `${this.repoUrl(repo)}/pulls/${pull.number}`;
    const html = `${this.web}/${repo.owner.login}/${repo.name}/pull/${pull.number}`;
    const changes = this.state.changedFiles(pull);
    const lines = (s?: string) => (s ? s.split('\n').length : 0);
    return {
      ...template,
      ...this.pullCore(pull, url, html),
      merged: pull.merged,
      mergeable: pull.state === 'open' ? true : null,
      rebaseable: pull.state === 'open' ? true : null,
      mergeable_state: pull.state === 'open' ? 'clean' : 'unknown',
      merged_by: pull.mergedBy ? this.user(pull.mergedBy) : null,
      comments: this.state.commentsOn(repo, pull.number).length,
      review_comments: 0,
      maintainer_can_modify: false,
      commits: 1,
      additions: changes.reduce((n, c) => n + lines(c.after), 0),
      deletions: changes.reduce((n, c) => n + lines(c.before), 0),
      changed_files: changes.length,
    };
  }

  /** The `pull-request-simple` schema (list items). */
  pullSimple(pull: Pull): Json {
    const template = (this.api.example('pull-request-simple-items') as unknown as Json[])[0] as Json;
    const repo = pull.base.repo;
    const url = `${this.repoUrl(repo)}/pulls/${pull.number}`;
    const html = `${this.web}/${repo.owner.login}/${repo.name}/pull/${pull.number}`;
    const core = this.pullCore(pull, url, html);
    // The list schema (`pull-request-simple`) types a label's description as a plain string.
    core.labels = (core.labels as Json[]).map((l) => ({ ...l, description: l.description ?? '' }));
    return { ...template, ...core };
  }

  private pullCore(pull: Pull, url: string, html: string): Json {
    const repo = pull.base.repo;
    const issueUrl = `${this.repoUrl(repo)}/issues/${pull.number}`;
    return {
      url,
      id: pull.id,
      node_id: `PR_${pull.id}`,
      html_url: html,
      diff_url: `${html}.diff`,
      patch_url: `${html}.patch`,
      issue_url: issueUrl,
      commits_url: `${url}/commits`,
      review_comments_url: `${url}/comments`,
      review_comment_url: `${this.repoUrl(repo)}/pulls/comments{/number}`,
      comments_url: `${issueUrl}/comments`,
      statuses_url: `${this.repoUrl(repo)}/statuses/${pull.head.sha}`,
      number: pull.number,
      state: pull.state,
      locked: false,
      title: pull.title,
      user: this.user(pull.user),
      body: pull.body,
      labels: this.pullLabels(pull),
      milestone: null,
      active_lock_reason: null,
      created_at: pull.createdAt,
      updated_at: pull.updatedAt,
      closed_at: pull.closedAt,
      merged_at: pull.mergedAt,
      merge_commit_sha: pull.mergeCommitSha,
      assignee: null,
      assignees: [],
      requested_reviewers: [],
      requested_teams: [],
      head: this.branch(pull.head.repo, pull.head.ref, pull.head.sha, pull.head.repo.owner),
      base: this.branch(repo, pull.base.ref, pull.base.sha, repo.owner),
      _links: {
        self: { href: url },
        html: { href: html },
        issue: { href: issueUrl },
        comments: { href: `${issueUrl}/comments` },
        review_comments: { href: `${url}/comments` },
        review_comment: { href: `${this.repoUrl(repo)}/pulls/comments{/number}` },
        commits: { href: `${url}/commits` },
        statuses: { href: `${this.repoUrl(repo)}/statuses/${pull.head.sha}` },
      },
      author_association: this.association(repo, pull.user.login),
      auto_merge: null,
      draft: false,
    };
  }

  association(repo: Repo, login: string): string {
    if (repo.owner.login === login) return 'OWNER';
    return repo.collaborators.has(login) ? 'COLLABORATOR' : 'NONE';
  }

  /** The `issue` schema for a pull request's issue. */
  issue(pull: Pull): Json {
    const template = this.api.example('issue');
    const repo = pull.base.repo;
    const url = `${this.repoUrl(repo)}/issues/${pull.number}`;
    const out: Json = {
      ...template,
      id: pull.id,
      node_id: `I_${pull.id}`,
      url,
      repository_url: this.repoUrl(repo),
      labels_url: `${url}/labels{/name}`,
      comments_url: `${url}/comments`,
      events_url: `${url}/events`,
      html_url: `${this.web}/${repo.owner.login}/${repo.name}/${pull.isIssue ? 'issues' : 'pull'}/${pull.number}`,
      number: pull.number,
      state: pull.state,
      state_reason: pull.isIssue && pull.state === 'closed' ? 'completed' : null,
      title: pull.title,
      body: pull.body,
      user: this.user(pull.user),
      labels: this.pullLabels(pull),
      assignee: null,
      assignees: [],
      milestone: null,
      locked: false,
      active_lock_reason: null,
      comments: this.state.commentsOn(repo, pull.number).length,
      pull_request: {
        url: `${this.repoUrl(repo)}/pulls/${pull.number}`,
        html_url: `${this.web}/${repo.owner.login}/${repo.name}/pull/${pull.number}`,
        diff_url: `${this.web}/${repo.owner.login}/${repo.name}/pull/${pull.number}.diff`,
        patch_url: `${this.web}/${repo.owner.login}/${repo.name}/pull/${pull.number}.patch`,
        merged_at: pull.mergedAt,
      },
      closed_at: pull.closedAt,
      created_at: pull.createdAt,
      updated_at: pull.updatedAt,
      closed_by: null,
      author_association: this.association(repo, pull.user.login),
      reactions: {
        url: `${url}/reactions`,
        total_count: 0,
        '+1': 0,
        '-1': 0,
        laugh: 0,
        confused: 0,
        heart: 0,
        hooray: 0,
        eyes: 0,
        rocket: 0,
      },
    };
    if (pull.isIssue) delete out.pull_request;
    delete out.repository;
    delete out.type;
    delete out.issue_field_values;
    return out;
  }

  review(review: Review): Json {
    const repo = review.repo;
    const html = `${this.web}/${repo.owner.login}/${repo.name}/pull/${review.pullNumber}#pullrequestreview-${review.id}`;
    const pullUrl = `${this.repoUrl(repo)}/pulls/${review.pullNumber}`;
    return {
      id: review.id,
      node_id: `PRR_${review.id}`,
      user: this.user(review.user),
      body: review.body,
      state: review.state,
      html_url: html,
      pull_request_url: pullUrl,
      _links: { html: { href: html }, pull_request: { href: pullUrl } },
      submitted_at: review.submittedAt,
      commit_id: review.commitId,
      author_association: this.association(repo, review.user.login),
    };
  }

  comment(comment: Comment): Json {
    const repo = comment.repo;
    const reactions = this.state.reactions.filter((r) => r.commentId === comment.id);
    const count = (content: string) => reactions.filter((r) => r.content === content).length;
    const url = `${this.repoUrl(repo)}/issues/comments/${comment.id}`;
    return {
      id: comment.id,
      node_id: `IC_${comment.id}`,
      url,
      html_url: `${this.web}/${repo.owner.login}/${repo.name}/pull/${comment.issueNumber}#issuecomment-${comment.id}`,
      body: comment.body,
      user: this.user(comment.user),
      created_at: comment.createdAt,
      updated_at: comment.updatedAt,
      issue_url: `${this.repoUrl(repo)}/issues/${comment.issueNumber}`,
      author_association: this.association(repo, comment.user.login),
      performed_via_github_app: null,
      reactions: {
        url: `${url}/reactions`,
        total_count: reactions.length,
        '+1': count('+1'),
        '-1': count('-1'),
        laugh: count('laugh'),
        confused: count('confused'),
        heart: count('heart'),
        hooray: count('hooray'),
        eyes: count('eyes'),
        rocket: count('rocket'),
      },
    };
  }

  reaction(reaction: Reaction): Json {
    return {
      id: reaction.id,
      node_id: `REA_${reaction.id}`,
      user: this.user(reaction.user),
      content: reaction.content,
      created_at: reaction.createdAt,
    };
  }

  workflowRun(repo: Repo, run: WorkflowRun): Json {
    const url = `${this.repoUrl(repo)}/actions/runs/${run.id}`;
    return {
      id: run.id,
      name: run.name,
      node_id: `WFR_${run.id}`,
      head_branch: run.headBranch,
      head_sha: run.headSha,
      path: run.path,
      display_title: run.name,
      run_number: run.id,
      event: run.event,
      status: run.status,
      conclusion: null,
      workflow_id: 1,
      url,
      html_url: `${this.web}/${repo.owner.login}/${repo.name}/actions/runs/${run.id}`,
      pull_requests: [],
      created_at: run.createdAt,
      updated_at: run.createdAt,
      jobs_url: `${url}/jobs`,
      logs_url: `${url}/logs`,
      check_suite_url: `${this.repoUrl(repo)}/check-suites/${run.id}`,
      artifacts_url: `${url}/artifacts`,
      cancel_url: `${url}/cancel`,
      rerun_url: `${url}/rerun`,
      workflow_url: `${this.repoUrl(repo)}/actions/workflows/1`,
      head_commit: null,
      repository: this.repository(repo),
      head_repository: this.repository(repo),
    };
  }

  checkRun(run: CheckRun): Json {
    const url = `${this.repoUrl(run.repo)}/check-runs/${run.id}`;
    return {
      id: run.id,
      head_sha: run.headSha,
      node_id: `CR_${run.id}`,
      external_id: run.externalId,
      url,
      html_url: `${this.web}/${run.repo.owner.login}/${run.repo.name}/runs/${run.id}`,
      details_url: run.detailsUrl,
      status: run.status,
      conclusion: run.conclusion,
      started_at: run.startedAt,
      completed_at: run.completedAt,
      output: {
        title: run.output.title,
        summary: run.output.summary,
        text: run.output.text,
        annotations_count: run.annotations.length,
        annotations_url: `${url}/annotations`,
      },
      name: run.name,
      check_suite: { id: run.id },
      app: null,
      pull_requests: [],
    };
  }

  gitRef(repo: Repo, ref: string, sha: string): Json {
    return {
      ref,
      node_id: `REF_${Buffer.from(ref).toString('hex')}`,
      url: `${this.repoUrl(repo)}/git/${ref}`,
      object: { type: 'commit', sha, url: `${this.repoUrl(repo)}/git/commits/${sha}` },
    };
  }

  gitCommit(repo: Repo, sha: string): Json {
    const commit = this.state.commit(sha);
    const base = this.repoUrl(repo);
    return {
      sha,
      node_id: `C_${sha}`,
      url: `${base}/git/commits/${sha}`,
      html_url: `${this.web}/${repo.owner.login}/${repo.name}/commit/${sha}`,
      author: commit.author,
      committer: commit.committer,
      message: commit.message,
      tree: { sha: commit.tree, url: `${base}/git/trees/${commit.tree}` },
      parents: commit.parents.map((p) => ({
        sha: p,
        url: `${base}/git/commits/${p}`,
        html_url: `${this.web}/${repo.owner.login}/${repo.name}/commit/${p}`,
      })),
      verification: {
        verified: false,
        reason: 'unsigned',
        signature: null,
        payload: null,
        verified_at: null,
      },
    };
  }

  gitTree(repo: Repo, sha: string, recursive: boolean): Json {
    const base = this.repoUrl(repo);
    const entries: Json[] = [];
    const walk = (treeSha: string, prefix: string) => {
      for (const e of this.state.git.trees.get(treeSha) ?? []) {
        const path = prefix ? `${prefix}/${e.path}` : e.path;
        const entry: Json = {
          path,
          mode: e.mode,
          type: e.type,
          sha: e.sha,
          url: `${base}/git/${e.type === 'tree' ? 'trees' : 'blobs'}/${e.sha}`,
        };
        if (e.type === 'blob') entry.size = this.state.git.blobs.get(e.sha)?.length ?? 0;
        entries.push(entry);
        if (recursive && e.type === 'tree') walk(e.sha, path);
      }
    };
    walk(sha, '');
    return { sha, url: `${base}/git/trees/${sha}`, tree: entries, truncated: false };
  }
}
