// Compare-and-swap commits through the Git Data API: read the branch head, compute the new files
// from what is there, write blobs → tree → commit, and move the branch with a non-forced ref update.
// When another writer moved the branch in between (GitHub answers 422 "not a fast forward", or 409),
// or the connection failed, re-read, re-compute and retry with backoff. The update function decides from the files it is
// given, so an outcome that already landed produces no change and no second commit.
import type { Octokit } from './client.js';

/** Current text of each requested path at the branch head; null when the file does not exist. */
export type FileSnapshot = Map<string, string | null>;

export interface CasCommitOptions {
  owner: string;
  repo: string;
  branch: string;
  /** Files the update reads (and may write). */
  paths: string[];
  /**
   * New contents by path (paths not listed stay as they are), or null for "nothing to do".
   * It may throw to abort without writing anything (e.g. a corrupt record).
   */
  update: (
    current: FileSnapshot,
    attempt: number,
  ) => Promise<Record<string, string> | null> | Record<string, string> | null;
  message: string;
  maxAttempts?: number;
  /** Delay before retry `attempt` (1-based), milliseconds. Default: exponential from 250 ms with jitter, capped at 8 s. */
  backoffMs?: (attempt: number) => number;
  sleep?: (ms: number) => Promise<void>;
}

export interface CasCommitResult {
  /** False when the files already had the wanted content. */
  committed: boolean;
  /** The new commit, or the head that already had the content. */
  sha: string;
  attempts: number;
  /** Paths whose content changed in the commit. */
  changed: string[];
}

export class CommitConflictError extends Error {
  constructor(
    readonly branch: string,
    readonly attempts: number,
  ) {
    super(
      `could not update branch "${branch}" after ${attempts} attempts: every ref update lost the race to another commit; re-run the job`,
    );
    this.name = 'CommitConflictError';
  }
}

export function defaultBackoff(attempt: number): number {
  const base = Math.min(8000, 250 * 2 ** (attempt - 1));
  return Math.round(base / 2 + Math.random() * (base / 2));
}

function status(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null && 'status' in error
    ? Number((error as { status: unknown }).status)
    : undefined;
}

/** A lost race: the ref moved since we read it. Other 422s (protected branch…) are real errors. */
export function isRefConflict(error: unknown): boolean {
  const code = status(error);
  if (code === 409) return true;
  if (code !== 422) return false;
  const message = error instanceof Error ? error.message : String(error);
  return /fast.?forward|reference cannot be updated|ref.*(moved|changed)/i.test(message);
}

async function readFile(
  octokit: Octokit,
  target: { owner: string; repo: string },
  path: string,
  ref: string,
): Promise<string | null> {
  try {
    const { data } = await octokit.rest.repos.getContent({ ...target, path, ref });
    if (Array.isArray(data) || data.type !== 'file') throw new Error(`${path} at ${ref} is not a file`);
    if ('content' in data && typeof data.content === 'string' && (data.content || data.size === 0)) {
      return Buffer.from(data.content, 'base64').toString('utf8');
    }
    // Files over 1 MB come without content: read the blob.
    const blob = await octokit.rest.git.getBlob({ ...target, file_sha: data.sha });
    return Buffer.from(blob.data.content, 'base64').toString('utf8');
  } catch (error) {
    if (status(error) === 404) return null;
    throw error;
  }
}

/** Reads files of a branch head (or any ref). */
export async function readFiles(
  octokit: Octokit,
  target: { owner: string; repo: string },
  paths: string[],
  ref: string,
): Promise<FileSnapshot> {
  const snapshot: FileSnapshot = new Map();
  for (const path of paths) snapshot.set(path, await readFile(octokit, target, path, ref));
  return snapshot;
}

/**
 * A failure of the connection rather than an answer (reset, closed socket, 5xx): the attempt is
 * safe to repeat because it starts by re-reading the branch, and a ref update that did land is
 * then seen as "already has the content".
 */
export function isTransient(error: unknown): boolean {
  const code = status(error);
  if (code !== undefined && !Number.isNaN(code)) return code >= 500;
  const text = `${error instanceof Error ? error.message : String(error)} ${String((error as { cause?: unknown })?.cause ?? '')}`;
  return /other side closed|socket hang up|ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|fetch failed|terminated/i.test(
    text,
  );
}

class UpdateFailed extends Error {
  constructor(readonly inner: unknown) {
    super('update failed');
  }
}

type Attempt = { done: true; result: CasCommitResult } | { done: false; why: string };

async function attemptOnce(octokit: Octokit, options: CasCommitOptions, attempt: number): Promise<Attempt> {
  const target = { owner: options.owner, repo: options.repo };
  const ref = `heads/${options.branch}`;
  const head = (await octokit.rest.git.getRef({ ...target, ref })).data.object.sha;
  const current = await readFiles(octokit, target, options.paths, head);
  let wanted: Record<string, string> | null;
  try {
    wanted = await options.update(current, attempt);
  } catch (error) {
    throw new UpdateFailed(error);
  }
  const changed = Object.entries(wanted ?? {}).filter(([path, text]) => current.get(path) !== text);
  if (changed.length === 0)
    return { done: true, result: { committed: false, sha: head, attempts: attempt, changed: [] } };
  const baseTree = (await octokit.rest.git.getCommit({ ...target, commit_sha: head })).data.tree.sha;
  const tree: { path: string; mode: '100644'; type: 'blob'; sha: string }[] = [];
  for (const [path, content] of changed) {
    const blob = await octokit.rest.git.createBlob({ ...target, content, encoding: 'utf-8' });
    tree.push({ path, mode: '100644', type: 'blob', sha: blob.data.sha });
  }
  const newTree = await octokit.rest.git.createTree({ ...target, base_tree: baseTree, tree });
  const commit = await octokit.rest.git.createCommit({
    ...target,
    message: options.message,
    tree: newTree.data.sha,
    parents: [head],
  });
  try {
    await octokit.rest.git.updateRef({ ...target, ref, sha: commit.data.sha, force: false });
  } catch (error) {
    // The unreferenced commit is harmless; the next attempt starts again from the new head.
    if (isRefConflict(error)) return { done: false, why: 'the branch moved' };
    throw error;
  }
  return {
    done: true,
    result: { committed: true, sha: commit.data.sha, attempts: attempt, changed: changed.map(([p]) => p) },
  };
}

export async function commitWithCompareAndSwap(
  octokit: Octokit,
  options: CasCommitOptions,
): Promise<CasCommitResult> {
  const maxAttempts = options.maxAttempts ?? 8;
  const backoff = options.backoffMs ?? defaultBackoff;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let lastTransient: unknown;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    try {
      const outcome = await attemptOnce(octokit, options, attempt);
      if (outcome.done) return outcome.result;
      lastTransient = undefined;
    } catch (error) {
      // The caller's own refusal (e.g. a corrupt record) is final: nothing was written.
      if (error instanceof UpdateFailed) throw error.inner;
      if (!isTransient(error)) throw error;
      lastTransient = error;
    }
    if (attempt < maxAttempts) await sleep(backoff(attempt));
  }
  if (lastTransient) throw lastTransient;
  throw new CommitConflictError(options.branch, maxAttempts);
}
