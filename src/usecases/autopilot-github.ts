// The autopilot's GitHub side, a use case over src/github: bot pull requests on
// `topo/autopilot/<experiment>/<candidate>` (the branch is the lock: a second pass finding it does
// not open another; a pass that died between the branch and the pull request opens it from the
// branch), the bot pull requests read back (their round from the bot's own marker, a person's push
// as a take-over), and the dashboard issue with its controls, each from a commenter with write
// access (the /topo permission check).
import { botBranch } from '../autopilot/core.js';
import { type BotPull, readBotMarker } from '../autopilot/pulls.js';
import {
  type DashboardComment,
  EMPTY_PILOT_STATE,
  type PilotState,
  PilotStateError,
  parsePilotState,
  renderPilotState,
} from '../autopilot/state.js';
import type { Octokit } from '../github/client.js';
import { checkCommandAllowed } from '../github/permissions.js';

export interface AutopilotRepo {
  owner: string;
  repo: string;
  botLogin: string;
}

/** The trailer of the bot's one commit on a bot branch: a head without it was pushed by a person. */
export function botTrailer(experimentId: string, candidate: string): string {
  return `Topo-Autopilot: ${experimentId}/${candidate}`;
}

const status = (e: unknown) => (e as { status?: number }).status;

export interface BotPullRequest {
  experimentId: string;
  candidate: string;
  path: string;
  text: string;
  title: string;
  body: string;
}

/**
 * The bot's commit of one candidate file on top of the default branch, no branch pointing at it yet.
 * Its message is the pull request's title, its body and the bot's trailer, so the pull request can be
 * opened later from the commit alone (openBotPull), by whichever pass gets there.
 */
export async function commitBotProposal(
  octokit: Octokit,
  target: AutopilotRepo,
  p: BotPullRequest,
): Promise<string> {
  const repo = { owner: target.owner, repo: target.repo };
  const base = (await octokit.rest.repos.get(repo)).data.default_branch;
  const baseSha = (await octokit.rest.git.getRef({ ...repo, ref: `heads/${base}` })).data.object.sha;
  const baseTree = (await octokit.rest.git.getCommit({ ...repo, commit_sha: baseSha })).data.tree.sha;
  const tree = await octokit.rest.git.createTree({
    ...repo,
    base_tree: baseTree,
    tree: [{ path: p.path, mode: '100644', type: 'blob', content: p.text }],
  });
  const commit = await octokit.rest.git.createCommit({
    ...repo,
    message: `${p.title}\n\n${p.body}\n\n${botTrailer(p.experimentId, p.candidate)}`,
    tree: tree.data.sha,
    parents: [baseSha],
  });
  return commit.data.sha;
}

/** The title and body a bot commit's message carries (commitBotProposal): its trailer left out. */
export function pullTextOf(message: string, trailer: string): { title: string; body: string } {
  const text = message.trimEnd();
  const cut = text.endsWith(trailer) ? text.slice(0, -trailer.length) : text;
  const at = cut.indexOf('\n\n');
  return at < 0
    ? { title: cut.trim(), body: '' }
    : { title: cut.slice(0, at).trim(), body: cut.slice(at + 2).trim() };
}

/**
 * Opens the bot pull request of one candidate from the bot's commit; its branch is created first, at
 * that commit, as the lock. An existing branch with an open pull request is that one (`created:
 * false`); with a closed one the candidate was withdrawn or decided (null: never again); with none, the
 * pass that made it died before the pull request, which is opened now from the branch as it stands.
 */
export async function openBotPull(
  octokit: Octokit,
  target: AutopilotRepo,
  p: { experimentId: string; candidate: string; sha: string },
): Promise<{ pr: number; created: boolean } | null> {
  const repo = { owner: target.owner, repo: target.repo };
  const branch = botBranch(p.experimentId, p.candidate);
  try {
    await octokit.rest.git.createRef({ ...repo, ref: `refs/heads/${branch}`, sha: p.sha });
  } catch (error) {
    if (status(error) !== 422) throw error;
    const pulls = await pullsOfBranch(octokit, target, branch);
    const open = pulls.find((x) => x.state === 'open');
    if (open) return { pr: open.number, created: false };
    if (pulls.length > 0) return null;
  }
  const message = (await octokit.rest.git.getCommit({ ...repo, commit_sha: p.sha })).data.message;
  const text = pullTextOf(message, botTrailer(p.experimentId, p.candidate));
  const base = (await octokit.rest.repos.get(repo)).data.default_branch;
  try {
    const pull = await octokit.rest.pulls.create({ ...repo, head: branch, base, ...text });
    return { pr: pull.data.number, created: true };
  } catch (error) {
    // Another pass opened it between our look and our create (GitHub allows one open per head).
    if (status(error) !== 422) throw error;
    const open = (await pullsOfBranch(octokit, target, branch)).find((x) => x.state === 'open');
    if (!open) throw error;
    return { pr: open.number, created: false };
  }
}

async function pullsOfBranch(octokit: Octokit, target: AutopilotRepo, branch: string) {
  const { data } = await octokit.rest.pulls.list({
    owner: target.owner,
    repo: target.repo,
    state: 'all',
    head: `${target.owner}:${branch}`,
    per_page: 100,
  });
  return data;
}

/**
 * The experiment's bot pull requests, open and closed: opened by the bot on a bot branch of the
 * repository itself with the bot's marker (a person's marker or a fork's branch is not one).
 */
export async function listBotPulls(
  octokit: Octokit,
  target: AutopilotRepo,
  experimentId: string,
  /** The bot's own commit of each candidate (its state): a pull whose candidate is here needs no commit read. */
  heads: Readonly<Record<string, string>> = {},
): Promise<BotPull[]> {
  const repo = { owner: target.owner, repo: target.repo };
  const prefix = `topo/autopilot/${experimentId}/`;
  const pulls = await octokit.paginate(octokit.rest.pulls.list, { ...repo, state: 'all', per_page: 100 });
  const out: BotPull[] = [];
  for (const pull of pulls) {
    const marker = readBotMarker(pull.body, experimentId);
    if (!marker || pull.user?.login !== target.botLogin || pull.head.ref !== `${prefix}${marker.candidate}`)
      continue;
    if (pull.head.repo?.full_name !== pull.base.repo.full_name) continue;
    const mine = heads[marker.candidate];
    // a head the state keeps decides by itself; older pulls by the trailer of their head commit
    const takenOver = mine
      ? mine !== pull.head.sha
      : pull.state === 'open' &&
        !(await octokit.rest.git.getCommit({ ...repo, commit_sha: pull.head.sha })).data.message.includes(
          botTrailer(experimentId, marker.candidate),
        );
    out.push({
      pr: pull.number,
      candidate: marker.candidate,
      round: marker.round,
      state: pull.merged_at ? 'merged' : pull.state === 'open' ? 'open' : 'closed',
      headSha: pull.head.sha,
      takenOver,
      labels: pull.labels.map((l) => (typeof l === 'string' ? l : (l.name ?? ''))),
    });
  }
  return out;
}

/** The files a pull request changes (a bot pull request may change its one candidate file only). */
export async function changedFiles(octokit: Octokit, target: AutopilotRepo, pr: number): Promise<string[]> {
  const files = await octokit.paginate(octokit.rest.pulls.listFiles, {
    owner: target.owner,
    repo: target.repo,
    pull_number: pr,
    per_page: 100,
  });
  return files.map((f) => f.filename);
}

/**
 * Closes a pull request with a comment saying why, once: one already closed (by an earlier pass, a
 * person, a pass at the same time) gets no comment, and the comment is not posted again when a pass
 * posted it and died before the close. False when it was closed already.
 */
export async function closeWithComment(
  octokit: Octokit,
  target: AutopilotRepo,
  pr: number,
  comment: string,
): Promise<boolean> {
  const repo = { owner: target.owner, repo: target.repo };
  const { data: pull } = await octokit.rest.pulls.get({ ...repo, pull_number: pr });
  if (pull.state !== 'open') return false;
  const comments = await octokit.paginate(octokit.rest.issues.listComments, {
    ...repo,
    issue_number: pr,
    per_page: 100,
  });
  if (!comments.some((c) => c.user?.login === target.botLogin && c.body === comment))
    await octokit.rest.issues.createComment({ ...repo, issue_number: pr, body: comment });
  await octokit.rest.pulls.update({ ...repo, pull_number: pr, state: 'closed' });
  return true;
}

export interface Dashboard {
  number: number;
  state: 'open' | 'closed';
  body: string;
}

/** The experiment's dashboard issue: the bot's issue carrying `marker`, open or closed (the newest). */
export async function findDashboard(
  octokit: Octokit,
  target: AutopilotRepo,
  marker: string,
): Promise<Dashboard | null> {
  const issues = await octokit.paginate(octokit.rest.issues.listForRepo, {
    owner: target.owner,
    repo: target.repo,
    state: 'all',
    creator: target.botLogin,
    per_page: 100,
  });
  // The oldest is the dashboard: a second one two passes made at once is closed as its duplicate.
  const found = issues
    .filter((i) => !i.pull_request && i.user?.login === target.botLogin && (i.body ?? '').startsWith(marker))
    .sort((a, b) => a.number - b.number)[0];
  return found
    ? { number: found.number, state: found.state === 'open' ? 'open' : 'closed', body: found.body ?? '' }
    : null;
}

/** Creates or updates the dashboard (unchanged text is not written); closed once concluded, else open. */
export async function writeDashboard(
  octokit: Octokit,
  target: AutopilotRepo,
  input: { marker: string; title: string; body: string; close: boolean; found?: Dashboard | null },
): Promise<number> {
  const repo = { owner: target.owner, repo: target.repo };
  const found = input.found === undefined ? await findDashboard(octokit, target, input.marker) : input.found;
  if (!found) {
    const made = await octokit.rest.issues.create({ ...repo, title: input.title, body: input.body });
    const oldest = await findDashboard(octokit, target, input.marker);
    if (oldest && oldest.number !== made.data.number) {
      // another pass made one first: ours is a duplicate, closed; theirs is written below
      await octokit.rest.issues.update({
        ...repo,
        issue_number: made.data.number,
        state: 'closed',
        body: `${input.marker.replace('topo:autopilot-dashboard', 'topo:autopilot-duplicate')}\nA duplicate of #${oldest.number}, the dashboard.`,
      });
      return writeDashboard(octokit, target, { ...input, found: oldest });
    }
    if (input.close)
      await octokit.rest.issues.update({ ...repo, issue_number: made.data.number, state: 'closed' });
    return made.data.number;
  }
  // Its open state is a view of the bot's: closed with the conclusion, reopened if someone closed it before.
  const state = input.close ? 'closed' : 'open';
  if (found.body !== input.body || found.state !== state)
    await octokit.rest.issues.update({
      ...repo,
      issue_number: found.number,
      body: input.body,
      ...(found.state !== state ? { state } : {}),
    });
  return found.number;
}

/** Whether a login may give /topo commands (write, maintain, admin), asked once per login per pass. */
export type PermissionCache = Map<string, Promise<boolean>>;

/** The dashboard's /topo comments after comment `since`, oldest first, each with its author's permission checked. */
export async function dashboardControls(
  octokit: Octokit,
  target: AutopilotRepo,
  issue: number,
  since = 0,
  cache: PermissionCache = new Map(),
): Promise<DashboardComment[]> {
  const repo = { owner: target.owner, repo: target.repo };
  const comments = await octokit.paginate(octokit.rest.issues.listComments, {
    ...repo,
    issue_number: issue,
    per_page: 100,
  });
  const out: DashboardComment[] = [];
  for (const c of comments) {
    const login = c.user?.login;
    const body = c.body ?? '';
    if (!login || c.id <= since || login === target.botLogin || !body.trimStart().startsWith('/topo'))
      continue;
    out.push({ id: c.id, login, body, allowed: await mayCommand(octokit, target, login, cache) });
  }
  return out;
}

function mayCommand(octokit: Octokit, target: AutopilotRepo, login: string, cache: PermissionCache) {
  let known = cache.get(login);
  if (!known) {
    const full = `${target.owner}/${target.repo}`;
    known = checkCommandAllowed(octokit, {
      owner: target.owner,
      repo: target.repo,
      username: login,
      command: 'pause',
      pull: { headRepoFullName: full, baseRepoFullName: full, state: 'open' },
    }).then((d) => d.allowed);
    cache.set(login, known);
  }
  return known;
}

/** The bot's own branch holding an experiment's autopilot state (one commit per change). */
export function pilotStateBranch(experimentId: string): string {
  return `topo/autopilot-state/${experimentId}`;
}

const STATE_FILE = 'autopilot-state.json';
const STATE_HEAD = 'topo autopilot state';

/** The experiment's autopilot state and the commit holding it (none yet: the empty state). */
export async function readPilotState(
  octokit: Octokit,
  target: AutopilotRepo,
  experimentId: string,
): Promise<{ state: PilotState; sha: string | null }> {
  const repo = { owner: target.owner, repo: target.repo };
  let sha: string;
  try {
    sha = (await octokit.rest.git.getRef({ ...repo, ref: `heads/${pilotStateBranch(experimentId)}` })).data
      .object.sha;
  } catch (error) {
    if (status(error) === 404) return { state: EMPTY_PILOT_STATE, sha: null };
    throw error;
  }
  const message = (await octokit.rest.git.getCommit({ ...repo, commit_sha: sha })).data.message;
  const at = message.indexOf('\n\n');
  if (!message.startsWith(STATE_HEAD) || at < 0)
    throw new PilotStateError(
      `the autopilot state branch ${pilotStateBranch(experimentId)} does not hold the bot's state at ${sha.slice(0, 7)}`,
    );
  return { state: parsePilotState(message.slice(at + 2)), sha };
}

/**
 * Read, change, compare-and-swap: the new commit's parent is the state as read and the branch moves
 * only fast-forward, so a pass that wrote in between makes ours fail and the change is applied again
 * to its state. Returns the state as written (or as it stands when the change changes nothing).
 */
export async function updatePilotState(
  octokit: Octokit,
  target: AutopilotRepo,
  experimentId: string,
  change: (state: PilotState) => PilotState,
  attempts = 8,
): Promise<PilotState> {
  const repo = { owner: target.owner, repo: target.repo };
  const ref = `heads/${pilotStateBranch(experimentId)}`;
  for (let attempt = 1; ; attempt++) {
    const read = await readPilotState(octokit, target, experimentId);
    const next = change(read.state);
    const text = renderPilotState(next);
    if (read.sha && text === renderPilotState(read.state)) return next;
    const tree = await octokit.rest.git.createTree({
      ...repo,
      tree: [{ path: STATE_FILE, mode: '100644', type: 'blob', content: `${text}\n` }],
    });
    const commit = await octokit.rest.git.createCommit({
      ...repo,
      message: `${STATE_HEAD} of ${experimentId}\n\n${text}`,
      tree: tree.data.sha,
      parents: read.sha ? [read.sha] : [],
    });
    try {
      if (read.sha) await octokit.rest.git.updateRef({ ...repo, ref, sha: commit.data.sha, force: false });
      else await octokit.rest.git.createRef({ ...repo, ref: `refs/${ref}`, sha: commit.data.sha });
      return next;
    } catch (error) {
      if (status(error) !== 422 || attempt >= attempts) throw error;
    }
  }
}

/**
 * The writer who approved a pull request's current head in a review, if any: each reviewer's latest
 * deciding review (approved, changes requested or dismissed; a comment decides nothing) counts when
 * it approved the head the pull request has now and its author may run /topo commands.
 */
export async function approvedBy(
  octokit: Octokit,
  target: AutopilotRepo,
  pull: { pr: number; headSha: string },
  cache: PermissionCache = new Map(),
): Promise<string | undefined> {
  const reviews = await octokit.paginate(octokit.rest.pulls.listReviews, {
    owner: target.owner,
    repo: target.repo,
    pull_number: pull.pr,
    per_page: 100,
  });
  const latest = new Map<string, { state: string; commit: string | null }>();
  for (const r of reviews) {
    const login = r.user?.login;
    if (!login || login === target.botLogin || r.state === 'COMMENTED' || r.state === 'PENDING') continue;
    latest.set(login, { state: r.state, commit: r.commit_id ?? null });
  }
  for (const [login, r] of latest)
    if (
      r.state === 'APPROVED' &&
      r.commit === pull.headSha &&
      (await mayCommand(octokit, target, login, cache))
    )
      return login;
  return undefined;
}

/** Each check run's latest conclusion on a commit, by name (null while it runs). */
export async function checkConclusions(
  octokit: Octokit,
  target: AutopilotRepo,
  sha: string,
): Promise<Record<string, string | null>> {
  const runs = await octokit.paginate(octokit.rest.checks.listForRef, {
    owner: target.owner,
    repo: target.repo,
    ref: sha,
    per_page: 100,
  });
  const out: Record<string, string | null> = {};
  for (const r of [...runs].sort((a, b) => a.id - b.id))
    out[r.name] = r.status === 'completed' ? (r.conclusion ?? null) : null;
  return out;
}

/**
 * The candidates people's open pull requests add or change in an experiment's folder (the bot's own
 * left out): from the pass's snapshot when there is one, else read through the API.
 */
export async function othersCandidates(
  octokit: Octokit,
  target: AutopilotRepo,
  experimentId: string,
  topologiesDir = 'topologies',
): Promise<Array<{ pr: number; candidate: string }>> {
  const repo = { owner: target.owner, repo: target.repo };
  const pulls = await octokit.paginate(octokit.rest.pulls.list, { ...repo, state: 'open', per_page: 100 });
  const out: Array<{ pr: number; candidate: string }> = [];
  for (const pull of pulls) {
    if (pull.head.ref.startsWith(`topo/autopilot/${experimentId}/`) && pull.user?.login === target.botLogin)
      continue;
    const files = await octokit.paginate(octokit.rest.pulls.listFiles, {
      ...repo,
      pull_number: pull.number,
      per_page: 100,
    });
    out.push(
      ...candidatesIn(
        pull.number,
        files.map((f) => f.filename),
        experimentId,
        topologiesDir,
      ),
    );
  }
  return out;
}

/** The candidate names (file stems) a pull request's changed paths give in the experiment's folder. */
export function candidatesIn(
  pr: number,
  paths: readonly string[],
  experimentId: string,
  topologiesDir = 'topologies',
): Array<{ pr: number; candidate: string }> {
  const dir = `${topologiesDir}/${experimentId}/`;
  return paths
    .filter(
      (p) =>
        p.startsWith(dir) && /^[^/]+\.ya?ml$/.test(p.slice(dir.length)) && !/\/experiment\.ya?ml$/.test(p),
    )
    .map((p) => ({ pr, candidate: p.slice(dir.length).replace(/\.ya?ml$/, '') }));
}
