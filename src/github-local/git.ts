// A content-addressed git object store with real git SHA-1s (blob, tree, commit), shared by a
// repository and its forks exactly like GitHub's repository networks.
import { createHash } from 'node:crypto';

export interface TreeEntry {
  path: string;
  mode: string;
  type: 'blob' | 'tree';
  sha: string;
}

export interface GitPerson {
  name: string;
  email: string;
  date: string;
}

export interface CommitObject {
  sha: string;
  tree: string;
  parents: string[];
  message: string;
  author: GitPerson;
  committer: GitPerson;
}

export interface FlatEntry {
  mode: string;
  sha: string;
}

function sha1(type: string, payload: Buffer): string {
  const header = Buffer.from(`${type} ${payload.length}\0`);
  return createHash('sha1')
    .update(Buffer.concat([header, payload]))
    .digest('hex');
}

export class GitStore {
  readonly blobs = new Map<string, Buffer>();
  readonly trees = new Map<string, TreeEntry[]>();
  readonly commits = new Map<string, CommitObject>();

  putBlob(content: Buffer): string {
    const sha = sha1('blob', content);
    this.blobs.set(sha, content);
    return sha;
  }

  /** Stores one tree level (names without slashes); returns its sha. */
  putTree(entries: TreeEntry[]): string {
    // Git orders tree entries by name, with directories compared as if they ended in "/".
    const key = (e: TreeEntry) => (e.type === 'tree' ? `${e.path}/` : e.path);
    const sorted = [...entries].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    const payload = Buffer.concat(
      sorted.map((e) =>
        Buffer.concat([
          Buffer.from(`${e.mode === '040000' ? '40000' : e.mode} ${e.path}\0`),
          Buffer.from(e.sha, 'hex'),
        ]),
      ),
    );
    const sha = sha1('tree', payload);
    this.trees.set(sha, sorted);
    return sha;
  }

  putCommit(input: Omit<CommitObject, 'sha'>): string {
    const stamp = (p: GitPerson) => `${p.name} <${p.email}> ${Math.floor(Date.parse(p.date) / 1000)} +0000`;
    const text = [
      `tree ${input.tree}`,
      ...input.parents.map((p) => `parent ${p}`),
      `author ${stamp(input.author)}`,
      `committer ${stamp(input.committer)}`,
      '',
      input.message,
    ].join('\n');
    const sha = sha1('commit', Buffer.from(text));
    this.commits.set(sha, { sha, ...input });
    return sha;
  }

  /** All files of a tree, by full path. */
  flatten(treeSha: string, prefix = '', out = new Map<string, FlatEntry>()): Map<string, FlatEntry> {
    const entries = this.trees.get(treeSha);
    if (!entries) throw new Error(`unknown tree ${treeSha}`);
    for (const e of entries) {
      const path = prefix ? `${prefix}/${e.path}` : e.path;
      if (e.type === 'tree') this.flatten(e.sha, path, out);
      else out.set(path, { mode: e.mode, sha: e.sha });
    }
    return out;
  }

  /** Builds nested trees from full paths; returns the root tree sha. */
  buildTree(files: Map<string, FlatEntry>): string {
    const direct: TreeEntry[] = [];
    const sub = new Map<string, Map<string, FlatEntry>>();
    for (const [path, entry] of files) {
      const slash = path.indexOf('/');
      if (slash < 0) {
        direct.push({ path, mode: entry.mode, type: 'blob', sha: entry.sha });
      } else {
        const dir = path.slice(0, slash);
        let inner = sub.get(dir);
        if (!inner) {
          inner = new Map();
          sub.set(dir, inner);
        }
        inner.set(path.slice(slash + 1), entry);
      }
    }
    for (const [dir, inner] of sub) {
      direct.push({ path: dir, mode: '040000', type: 'tree', sha: this.buildTree(inner) });
    }
    return this.putTree(direct);
  }

  /** Files of a commit as text, by path. */
  filesAt(commitSha: string): Map<string, string> {
    const commit = this.commits.get(commitSha);
    if (!commit) throw new Error(`unknown commit ${commitSha}`);
    const out = new Map<string, string>();
    for (const [path, entry] of this.flatten(commit.tree)) {
      out.set(path, (this.blobs.get(entry.sha) as Buffer).toString('utf8'));
    }
    return out;
  }

  /** True when `ancestor` is reachable from `descendant` through parents (or equal). */
  isAncestor(ancestor: string, descendant: string): boolean {
    const seen = new Set<string>();
    const queue = [descendant];
    while (queue.length) {
      const sha = queue.shift() as string;
      if (sha === ancestor) return true;
      if (seen.has(sha)) continue;
      seen.add(sha);
      queue.push(...(this.commits.get(sha)?.parents ?? []));
    }
    return false;
  }
}
