// The in-memory state of the local GitHub: users, repositories (with forks), git objects and refs,
// pull requests, issue comments, reactions, labels, check runs. Seeding helpers for tests live
// here; the HTTP routes only read and change this state.
import type { CheckAnnotation } from '../github/check-runs.js';
import { type FlatEntry, GitStore } from './git.js';

export type Permission = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';

export interface User {
  login: string;
  id: number;
  type: 'User' | 'Bot';
}

export interface Repo {
  id: number;
  owner: User;
  name: string;
  defaultBranch: string;
  private: boolean;
  /** The repository this one was forked from. */
  parent?: Repo;
  refs: Map<string, string>;
  collaborators: Map<string, Permission>;
  labels: Map<string, Label>;
  createdAt: string;
  /** Actions settings `topo doctor` reads (admin only); tests set them. */
  actions?: RepoActions;
  /**
   * Branch protection of the default branch: the status checks a merge requires (each check run's
   * latest conclusion on the head must pass), as GitHub refuses a merge without them (405).
   */
  requiredChecks?: string[];
}

/** A pull request review (`pulls/create-review`, or a test's `review`). */
export interface Review {
  id: number;
  repo: Repo;
  pullNumber: number;
  user: User;
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'DISMISSED';
  body: string;
  commitId: string;
  submittedAt: string;
}

/** A repository's Actions settings: fork-PR approval, repository secrets and environments. */
export interface RepoActions {
  forkApproval?:
    | 'first_time_contributors_new_to_github'
    | 'first_time_contributors'
    | 'all_external_contributors';
  secrets: string[];
  environments: Map<string, { secrets: string[]; defaultBranchOnly: boolean }>;
}

export interface Label {
  id: number;
  name: string;
  color: string;
  description: string | null;
}

export interface Pull {
  number: number;
  id: number;
  title: string;
  body: string | null;
  user: User;
  base: { repo: Repo; ref: string; sha: string };
  head: { repo: Repo; ref: string; sha: string };
  state: 'open' | 'closed';
  merged: boolean;
  mergedAt: string | null;
  mergedBy: User | null;
  closedAt: string | null;
  mergeCommitSha: string | null;
  labels: string[];
  createdAt: string;
  updatedAt: string;
  /** An issue, not a pull request (numbers share one sequence; its base and head are unused). */
  isIssue?: boolean;
}

export interface Comment {
  id: number;
  repo: Repo;
  issueNumber: number;
  user: User;
  body: string;
  createdAt: string;
  updatedAt: string;
}

export interface Reaction {
  id: number;
  commentId: number;
  user: User;
  content: string;
  createdAt: string;
}

export interface CheckRun {
  id: number;
  repo: Repo;
  name: string;
  headSha: string;
  status: string;
  conclusion: string | null;
  startedAt: string | null;
  completedAt: string | null;
  detailsUrl: string | null;
  externalId: string | null;
  output: { title: string | null; summary: string | null; text: string | null };
  /** As src/github sends them. */
  annotations: CheckAnnotation[];
  app: User;
}

export interface Identity {
  user: User;
  /** An installation token (GITHUB_TOKEN) cannot call `GET /user`, like on GitHub. */
  kind: 'installation' | 'user';
  /** GITHUB_TOKEN scopes (`contents: write`, …); undefined means every permission. */
  permissions?: Record<string, 'read' | 'write' | 'none'>;
}

/** A self-hosted runner registered for a repository (Settings → Actions → Runners). */
export interface Runner {
  id: number;
  name: string;
  status: 'online' | 'offline';
  labels: string[];
}

/** A workflow run of a repository (Actions), as far as the monitor's loop reads it: queued or not. */
export interface WorkflowRun {
  id: number;
  name: string;
  /** `.github/workflows/<file>.yml`. */
  path: string;
  event: string;
  status: 'queued' | 'in_progress' | 'completed' | 'waiting' | 'pending';
  headSha: string;
  headBranch: string;
  createdAt: string;
}

export interface FileMap {
  [path: string]: string | null;
}

/** ISO 8601 without milliseconds, as GitHub writes it. */
export function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export class GitHubState {
  readonly git = new GitStore();
  readonly users = new Map<string, User>();
  readonly repos = new Map<string, Repo>();
  readonly pulls = new Map<string, Pull[]>();
  readonly comments: Comment[] = [];
  readonly reactions: Reaction[] = [];
  readonly checkRuns: CheckRun[] = [];
  readonly reviews: Review[] = [];
  readonly tokens = new Map<string, Identity>();
  /** Self-hosted runners by repository id. */
  readonly runners = new Map<number, Runner[]>();
  /** Workflow runs by repository id (tests queue them: a command waiting for the self-hosted runner). */
  readonly workflowRuns = new Map<number, WorkflowRun[]>();
  private nextId = 1000;

  id(): number {
    return this.nextId++;
  }

  user(login: string, type: 'User' | 'Bot' = login.endsWith('[bot]') ? 'Bot' : 'User'): User {
    let user = this.users.get(login);
    if (!user) {
      user = { login, id: this.id(), type };
      this.users.set(login, user);
    }
    return user;
  }

  repo(fullName: string): Repo {
    const repo = this.repos.get(fullName.toLowerCase());
    if (!repo) throw new Error(`no repository ${fullName} in the local GitHub`);
    return repo;
  }

  findRepo(owner: string, name: string): Repo | undefined {
    return this.repos.get(`${owner}/${name}`.toLowerCase());
  }

  /** Creates a repository whose default branch holds `files` in one commit. */
  createRepo(
    fullName: string,
    options: { defaultBranch?: string; files?: FileMap; private?: boolean } = {},
  ): Repo {
    const [ownerLogin, name] = fullName.split('/') as [string, string];
    const repo: Repo = {
      id: this.id(),
      owner: this.user(ownerLogin),
      name,
      defaultBranch: options.defaultBranch ?? 'main',
      private: options.private ?? false,
      refs: new Map(),
      collaborators: new Map([[ownerLogin, 'admin']]),
      labels: new Map(),
      createdAt: now(),
    };
    this.repos.set(fullName.toLowerCase(), repo);
    const sha = this.commitFiles(repo.owner, undefined, options.files ?? {}, 'Initial commit');
    repo.refs.set(`refs/heads/${repo.defaultBranch}`, sha);
    return repo;
  }

  /** Forks a repository for another user: same objects, own refs. */
  fork(base: Repo, ownerLogin: string): Repo {
    const fork: Repo = {
      ...base,
      id: this.id(),
      owner: this.user(ownerLogin),
      parent: base,
      refs: new Map(base.refs),
      collaborators: new Map([[ownerLogin, 'admin']]),
      labels: new Map(),
      createdAt: now(),
    };
    this.repos.set(`${ownerLogin}/${base.name}`.toLowerCase(), fork);
    return fork;
  }

  setCollaborator(repo: Repo, login: string, permission: Permission): void {
    this.user(login);
    repo.collaborators.set(login, permission);
  }

  permissionOf(repo: Repo, login: string): Permission {
    return repo.collaborators.get(login) ?? (repo.private ? 'none' : 'read');
  }

  /** A commit on top of `parent` that sets (string) or deletes (null) the given files. */
  commitFiles(author: User, parent: string | undefined, files: FileMap, message: string): string {
    const flat = new Map<string, FlatEntry>(parent ? this.git.flatten(this.commit(parent).tree) : []);
    for (const [path, content] of Object.entries(files)) {
      if (content === null) flat.delete(path);
      else flat.set(path, { mode: '100644', sha: this.git.putBlob(Buffer.from(content)) });
    }
    const person = { name: author.login, email: `${author.login}@users.noreply.github.com`, date: now() };
    return this.git.putCommit({
      tree: this.git.buildTree(flat),
      parents: parent ? [parent] : [],
      message,
      author: person,
      committer: person,
    });
  }

  commit(sha: string) {
    const commit = this.git.commits.get(sha);
    if (!commit) throw new Error(`unknown commit ${sha}`);
    return commit;
  }

  branchSha(repo: Repo, branch: string): string {
    const sha = repo.refs.get(`refs/heads/${branch}`);
    if (!sha) throw new Error(`no branch ${branch} in ${repo.owner.login}/${repo.name}`);
    return sha;
  }

  /** Resolves a branch name, a `heads/…`/`refs/heads/…` ref, a tag or a commit sha. */
  resolveRef(repo: Repo, ref: string): string | undefined {
    for (const candidate of [ref, `refs/${ref}`, `refs/heads/${ref}`, `refs/tags/${ref}`]) {
      const sha = repo.refs.get(candidate);
      if (sha) return sha;
    }
    if (/^[0-9a-f]{40}$/.test(ref) && this.git.commits.has(ref)) return ref;
    return undefined;
  }

  /** The repository's pull requests (issues are left out: itemsOf holds both). */
  pullsOf(repo: Repo): Pull[] {
    return this.itemsOf(repo).filter((p) => !p.isIssue);
  }

  /** Issues and pull requests, in number order. */
  itemsOf(repo: Repo): Pull[] {
    const key = `${repo.owner.login}/${repo.name}`.toLowerCase();
    let list = this.pulls.get(key);
    if (!list) {
      list = [];
      this.pulls.set(key, list);
    }
    return list;
  }

  /** Issue and pull request numbers share one sequence per repository. */
  nextNumber(repo: Repo): number {
    return this.itemsOf(repo).length + 1;
  }

  /**
   * Opens a pull request from a new branch `head` (in `headRepo`, the base repository itself or a
   * fork) that changes `files` on top of the base branch.
   */
  openPull(options: {
    repo: Repo;
    author: string;
    title: string;
    body?: string;
    head: string;
    headRepo?: Repo;
    base?: string;
    files: FileMap;
  }): Pull {
    const { repo } = options;
    const headRepo = options.headRepo ?? repo;
    const baseRef = options.base ?? repo.defaultBranch;
    const baseSha = this.branchSha(repo, baseRef);
    const author = this.user(options.author);
    const headSha = this.commitFiles(author, baseSha, options.files, options.title);
    headRepo.refs.set(`refs/heads/${options.head}`, headSha);
    return this.addPull({
      repo,
      user: author,
      title: options.title,
      body: options.body ?? null,
      base: { repo, ref: baseRef, sha: baseSha },
      head: { repo: headRepo, ref: options.head, sha: headSha },
    });
  }

  /** Records a new open pull request (the test helper and `pulls/create` both end here). */
  addPull(fields: Pick<Pull, 'title' | 'body' | 'user' | 'base' | 'head'> & { repo: Repo }): Pull {
    const { repo, ...rest } = fields;
    const stamp = now();
    const pull: Pull = {
      number: this.nextNumber(repo),
      id: this.id(),
      ...rest,
      state: 'open',
      merged: false,
      mergedAt: null,
      mergedBy: null,
      closedAt: null,
      mergeCommitSha: null,
      labels: [],
      createdAt: stamp,
      updatedAt: stamp,
    };
    this.itemsOf(repo).push(pull);
    return pull;
  }

  /** Records a new open issue (`issues/create`). */
  addIssue(repo: Repo, user: User, title: string, body: string | null): Pull {
    const sha = this.branchSha(repo, repo.defaultBranch);
    const side = { repo, ref: repo.defaultBranch, sha };
    const issue = this.addPull({ repo, user, title, body, base: side, head: side });
    issue.isIssue = true;
    return issue;
  }

  /** An issue or a pull request by its number. */
  item(repo: Repo, number: number): Pull | undefined {
    return this.itemsOf(repo).find((p) => p.number === number);
  }

  pull(repo: Repo, number: number): Pull | undefined {
    return this.pullsOf(repo).find((p) => p.number === number);
  }

  /** Pushes another commit to the pull request's head branch. */
  pushToPull(pull: Pull, files: FileMap, message = 'Update'): string {
    const sha = this.commitFiles(pull.user, pull.head.sha, files, message);
    pull.head.sha = sha;
    pull.head.repo.refs.set(`refs/heads/${pull.head.ref}`, sha);
    pull.updatedAt = now();
    return sha;
  }

  /** Files changed by the pull request: head versus the base it was opened from. */
  changedFiles(
    pull: Pull,
  ): { path: string; status: 'added' | 'modified' | 'removed'; before?: string; after?: string }[] {
    const before = this.git.flatten(this.commit(pull.base.sha).tree);
    const after = this.git.flatten(this.commit(pull.head.sha).tree);
    const text = (sha: string) => (this.git.blobs.get(sha) as Buffer).toString('utf8');
    const out: ReturnType<GitHubState['changedFiles']> = [];
    for (const path of [...new Set([...before.keys(), ...after.keys()])].sort()) {
      const a = before.get(path);
      const b = after.get(path);
      if (a && b && a.sha === b.sha) continue;
      if (!a && b) out.push({ path, status: 'added', after: text(b.sha) });
      else if (a && !b) out.push({ path, status: 'removed', before: text(a.sha) });
      else if (a && b) out.push({ path, status: 'modified', before: text(a.sha), after: text(b.sha) });
    }
    return out;
  }

  /** A review of the pull request's current head. */
  addReview(pull: Pull, login: string, state: Review['state'], body = ''): Review {
    const review: Review = {
      id: this.id(),
      repo: pull.base.repo,
      pullNumber: pull.number,
      user: this.user(login),
      state,
      body,
      commitId: pull.head.sha,
      submittedAt: now(),
    };
    this.reviews.push(review);
    return review;
  }

  /** The required status checks (branch protection) whose latest run on the pull request's head did not pass. */
  missingChecks(pull: Pull): string[] {
    const passing = new Set(['success', 'neutral', 'skipped']);
    return (pull.base.repo.requiredChecks ?? []).filter((name) => {
      const latest = this.checkRuns
        .filter((r) => r.repo === pull.base.repo && r.headSha === pull.head.sha && r.name === name)
        .sort((a, b) => b.id - a.id)[0];
      return !(latest?.status === 'completed' && passing.has(latest.conclusion ?? ''));
    });
  }

  /** Merges: a merge commit on the base branch applying the pull request's changes. */
  mergePull(pull: Pull, by: string): string {
    if (pull.state !== 'open') throw new Error(`pull request #${pull.number} is not open`);
    const files: FileMap = {};
    for (const change of this.changedFiles(pull)) files[change.path] = change.after ?? null;
    const baseHead = this.branchSha(pull.base.repo, pull.base.ref);
    const merger = this.user(by);
    const applied = this.commitFiles(merger, baseHead, files, `Merge pull request #${pull.number}`);
    const commit = this.commit(applied);
    const sha = this.git.putCommit({ ...commit, parents: [baseHead, pull.head.sha] });
    pull.base.repo.refs.set(`refs/heads/${pull.base.ref}`, sha);
    const stamp = now();
    Object.assign(pull, {
      state: 'closed',
      merged: true,
      mergedAt: stamp,
      mergedBy: merger,
      closedAt: stamp,
      mergeCommitSha: sha,
      updatedAt: stamp,
    });
    return sha;
  }

  closePull(pull: Pull): void {
    const stamp = now();
    Object.assign(pull, { state: 'closed', closedAt: stamp, updatedAt: stamp });
  }

  addComment(repo: Repo, issueNumber: number, login: string, body: string): Comment {
    const stamp = now();
    const comment: Comment = {
      id: this.id(),
      repo,
      issueNumber,
      user: this.user(login),
      body,
      createdAt: stamp,
      updatedAt: stamp,
    };
    this.comments.push(comment);
    return comment;
  }

  commentsOn(repo: Repo, issueNumber: number): Comment[] {
    return this.comments.filter((c) => c.repo === repo && c.issueNumber === issueNumber);
  }

  ensureLabel(repo: Repo, name: string): Label {
    let label = repo.labels.get(name.toLowerCase());
    if (!label) {
      label = { id: this.id(), name, color: 'ededed', description: null };
      repo.labels.set(name.toLowerCase(), label);
    }
    return label;
  }

  /** The file at a path of a repository's ref, or undefined. */
  fileAt(repo: Repo, ref: string, path: string): string | undefined {
    const sha = this.resolveRef(repo, ref);
    if (!sha) return undefined;
    return this.git.filesAt(sha).get(path);
  }
}
