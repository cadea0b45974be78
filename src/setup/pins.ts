// What a pinned version runs: the `uses:` of workflows, read as `owner/repo[/path]@ref`. `topo setup`
// refuses a commit whose reusable workflows call an action at a moving ref (a tag such as `@v1`, which
// does not exist before the first release and moves with every one), and `topo doctor` checks that
// every `uses:` the callers reach resolves. The text rules are pure; the reading is through a port (git-files.ts).
import { isFullSha, usesOf } from './workflow-uses.mjs';

/** One remote `uses:` of a workflow. */
export interface UsesRef {
  /** The workflow it was read from (a path, or `owner/repo/path@ref` of a reusable workflow). */
  file: string;
  line: number;
  /** As written: `owner/repo[/path]@ref`. */
  uses: string;
  owner: string;
  repo: string;
  /** Inside the repository: a workflow file, an action's folder, or '' (an action at the root). */
  path: string;
  ref: string;
}

const REMOTE = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)(?:\/([^@]+))?@(.+)$/;

/** The remote `uses:` of a workflow's text (local `./…` and `docker://` ones are not remote). */
export function remoteUses(file: string, text: string): UsesRef[] {
  return usesOf(text).flatMap(({ line, uses }) => {
    const m = REMOTE.exec(uses);
    return m ? [{ file, line, uses, owner: m[1]!, repo: m[2]!, path: m[3] ?? '', ref: m[4]! }] : [];
  });
}

export { isFullSha };

/** Whether a `uses:` names a reusable workflow (else an action). */
export const isWorkflow = (u: UsesRef) => /^\.github\/workflows\/[^/]+\.ya?ml$/.test(u.path);

/** `file:line: uses` for a message. */
export const where = (u: UsesRef) => `${u.file}:${u.line}: ${u.uses}`;

/** Reads a file of a GitHub repository at a ref: its text, or null when the ref or the file does not exist. */
export type RepoFileReader = (
  owner: string,
  repo: string,
  path: string,
  ref: string,
) => Promise<string | null>;

/** The reusable workflows callers call, by name (`.github/workflows/reusable-<name>.yml`). */
export const REUSABLE = ['validate', 'submit', 'monitor', 'record'] as const;

/**
 * The reusable workflows of `repository` at `sha` and their `uses:` that are not pinned to a full SHA.
 * `missing` lists the workflows the commit does not have (a SHA GitHub does not know: all of them).
 */
export async function movingActionsAt(
  read: RepoFileReader,
  repository: string,
  sha: string,
): Promise<{ moving: UsesRef[]; missing: string[] }> {
  const [owner, repo] = repository.split('/') as [string, string];
  const moving: UsesRef[] = [];
  const missing: string[] = [];
  for (const name of REUSABLE) {
    const path = `.github/workflows/reusable-${name}.yml`;
    const text = await read(owner, repo, path, sha);
    if (text === null) missing.push(path);
    else moving.push(...remoteUses(path, text).filter((u) => !isFullSha(u.ref)));
  }
  return { moving, missing };
}

/** Where an action is defined in its repository: action.yml or action.yaml in its folder. */
function actionFiles(u: UsesRef): string[] {
  const dir = u.path ? `${u.path.replace(/\/+$/, '')}/` : '';
  return [`${dir}action.yml`, `${dir}action.yaml`];
}

export interface Unresolved {
  ref: UsesRef;
  problem: string;
}

/**
 * Every `uses:` the callers reach, followed one level into the reusable workflows they call: each must
 * name a file that exists at its ref. Returns what does not resolve, and the moving refs found.
 */
export async function unresolvedUses(
  read: RepoFileReader,
  callers: readonly { file: string; text: string }[],
): Promise<{ checked: number; unresolved: Unresolved[]; moving: UsesRef[] }> {
  const unresolved: Unresolved[] = [];
  const moving: UsesRef[] = [];
  let checked = 0;
  const visit = async (u: UsesRef, follow: boolean) => {
    checked++;
    if (!isFullSha(u.ref)) moving.push(u);
    if (isWorkflow(u)) {
      const text = await read(u.owner, u.repo, u.path, u.ref);
      if (text === null)
        return unresolved.push({ ref: u, problem: `${u.owner}/${u.repo} has no ${u.path} at ${u.ref}` });
      if (follow)
        for (const inner of remoteUses(`${u.owner}/${u.repo}/${u.path}@${u.ref}`, text))
          await visit(inner, false);
      return;
    }
    for (const path of actionFiles(u)) if ((await read(u.owner, u.repo, path, u.ref)) !== null) return;
    unresolved.push({
      ref: u,
      problem: `${u.owner}/${u.repo} has no action ${u.path || '(root)'} at ${u.ref}`,
    });
  };
  for (const c of callers) for (const u of remoteUses(c.file, c.text)) await visit(u, true);
  return { checked, unresolved, moving };
}
