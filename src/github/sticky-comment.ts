// One comment per purpose (validate, submit, monitor) on a pull request, edited in place. It is
// found by a hidden marker AND the bot's login (a user quoting the marker cannot hijack it), is
// not written when unchanged (no notification noise, no API spend), and long bodies continue in
// extra parts that carry their own markers.
import type { Octokit } from './client.js';
import { GITHUB_COMMENT_LIMIT, splitComment } from './comment-split.js';

export type StickyPurpose = 'validate' | 'submit' | 'monitor' | (string & {});

export interface StickyTarget {
  owner: string;
  repo: string;
  issue_number: number;
  purpose: StickyPurpose;
  botLogin: string;
}

export interface StickyComment {
  id: number;
  /** The body as stored, markers included. */
  body: string;
  /** When the comment was last edited (ISO 8601). */
  updatedAt: string;
}

export function stickyMarker(purpose: string, part = 1): string {
  if (!/^[a-z][a-z0-9-]*$/.test(purpose))
    throw new Error(`sticky comment purpose "${purpose}" must be lower-case letters, digits, dashes`);
  return part === 1 ? `<!-- topo:sticky:${purpose} -->` : `<!-- topo:sticky:${purpose}:part-${part} -->`;
}

/** A comment as listed (REST) or read from a pull-request snapshot (GraphQL). */
export interface ListedComment {
  id: number;
  login: string | undefined;
  body: string | null | undefined;
  updatedAt: string;
}

/** Pure: the bot's comments for a purpose among `comments`, ordered by part (part 1 first). */
export function stickyParts(
  comments: readonly ListedComment[],
  target: Pick<StickyTarget, 'purpose' | 'botLogin'>,
): StickyComment[] {
  const found: { part: number; id: number; body: string; updatedAt: string }[] = [];
  for (const c of comments) {
    if (c.login !== target.botLogin || !c.body) continue;
    const first = c.body.split('\n', 1)[0]?.trim();
    if (first === stickyMarker(target.purpose))
      found.push({ part: 1, id: c.id, body: c.body, updatedAt: c.updatedAt });
    const m = /^<!-- topo:sticky:([a-z0-9-]+):part-(\d+) -->$/.exec(first ?? '');
    if (m && m[1] === target.purpose)
      found.push({ part: Number(m[2]), id: c.id, body: c.body, updatedAt: c.updatedAt });
  }
  // If an earlier run crashed between writes there can be duplicates: the oldest of each part wins.
  const byPart = new Map<number, StickyComment>();
  for (const f of found) if (!byPart.has(f.part)) byPart.set(f.part, f);
  return [...byPart.entries()].sort((a, b) => a[0] - b[0]).map(([, v]) => v);
}

/** The bot's comments for a purpose, ordered by part (part 1 first): one listing of the PR's comments. */
export async function findStickyComments(octokit: Octokit, target: StickyTarget): Promise<StickyComment[]> {
  const comments = await octokit.paginate(octokit.rest.issues.listComments, {
    owner: target.owner,
    repo: target.repo,
    issue_number: target.issue_number,
    per_page: 100,
  });
  return stickyParts(
    comments.map((c) => ({ id: c.id, login: c.user?.login, body: c.body, updatedAt: c.updated_at })),
    target,
  );
}

/** The text of sticky parts without markers (parts joined), or undefined when there are none. */
export function stickyText(parts: readonly StickyComment[]): string | undefined {
  if (!parts.length) return undefined;
  return parts.map((p) => p.body.split('\n').slice(1).join('\n')).join('\n');
}

/** The sticky comment's text without markers (parts joined), or undefined when absent. */
export async function readStickyComment(octokit: Octokit, target: StickyTarget): Promise<string | undefined> {
  return stickyText(await findStickyComments(octokit, target));
}

/**
 * Writes the comment (only the parts that changed). `existing` (the parts already read, e.g. from
 * the pass's pull-request snapshot) saves listing the pull request's comments again. Returns the
 * parts as they now stand, so a caller can keep writing without reading them back.
 */
export async function upsertStickyComment(
  octokit: Octokit,
  target: StickyTarget & { body: string },
  existing?: readonly StickyComment[],
): Promise<{ id: number; changed: boolean; parts: StickyComment[] }> {
  const reserve = stickyMarker(target.purpose, 99).length + 1;
  const bodies = splitComment(target.body, GITHUB_COMMENT_LIMIT - reserve).map(
    (part, i) => `${stickyMarker(target.purpose, i + 1)}\n${part}`,
  );
  const current = existing ?? (await findStickyComments(octokit, target));
  const { owner, repo, issue_number } = target;
  let changed = false;
  const parts: StickyComment[] = [];
  for (const [i, body] of bodies.entries()) {
    const part = current[i];
    if (part && part.body === body) {
      parts.push(part);
      continue;
    }
    changed = true;
    const written = part
      ? await octokit.rest.issues.updateComment({ owner, repo, comment_id: part.id, body })
      : await octokit.rest.issues.createComment({ owner, repo, issue_number, body });
    parts.push({ id: written.data.id, body, updatedAt: written.data.updated_at });
  }
  for (const stale of current.slice(bodies.length)) {
    changed = true;
    await octokit.rest.issues.deleteComment({ owner, repo, comment_id: stale.id });
  }
  return { id: parts[0]?.id ?? 0, changed, parts };
}
