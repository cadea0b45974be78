// Files of a commit read through the contents API, as DATA: this is how actions on self-hosted
// runners see a pull request's candidate without checking out (or running) anything from it.
// Matches the FileSource shape of src/usecases/validate.ts (read/list).
import type { Octokit } from './client.js';

export interface GitHubFileSource {
  read(path: string): Promise<string | undefined>;
  list(dir: string): Promise<string[] | undefined>;
}

const status = (e: unknown) => (e as { status?: number }).status;

export function githubFileSource(
  octokit: Octokit,
  at: { owner: string; repo: string; ref: string },
): GitHubFileSource {
  const cache = new Map<string, Promise<unknown>>();
  const get = (path: string) => {
    const clean = path.replace(/^\.?\/+/, '').replace(/\/+$/, '');
    // No file of a repository lives outside it: a path climbing out (or absolute) does not exist.
    if (path.startsWith('/') || clean.split('/').some((s) => s === '..')) return Promise.resolve(undefined);
    let pending = cache.get(clean);
    if (!pending) {
      pending = octokit.rest.repos
        .getContent({ owner: at.owner, repo: at.repo, path: clean, ref: at.ref })
        .then((r) => r.data)
        .catch((e) => {
          if (status(e) === 404) return undefined;
          throw e;
        });
      cache.set(clean, pending);
    }
    return pending;
  };
  return {
    async read(path) {
      const data = (await get(path)) as
        | { type?: string; path?: string; content?: string; encoding?: string }
        | undefined;
      if (!data || Array.isArray(data) || data.type !== 'file' || data.content === undefined)
        return undefined;
      // GitHub answers a symlink to a file of the repository with the TARGET's content (and path):
      // a symlinked candidate is refused without its target being read as the candidate.
      const clean = path.replace(/^\.?\/+/, '').replace(/\/+$/, '');
      if (data.path !== undefined && data.path !== clean) return undefined;
      return Buffer.from(data.content, data.encoding === 'base64' ? 'base64' : 'utf8').toString('utf8');
    },
    async list(dir) {
      const data = await get(dir);
      if (!Array.isArray(data)) return undefined;
      return data.map((entry: { name: string }) => entry.name).sort();
    },
  };
}

/** Paths a pull request adds or modifies (removed files excluded). */
export async function changedFiles(
  octokit: Octokit,
  pull: { owner: string; repo: string; pull_number: number },
): Promise<{ path: string; status: string }[]> {
  const files = await octokit.paginate(octokit.rest.pulls.listFiles, { ...pull, per_page: 100 });
  return files.filter((f) => f.status !== 'removed').map((f) => ({ path: f.filename, status: f.status }));
}
