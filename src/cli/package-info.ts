// Who this CLI is: name, version and GitHub repository from the package.json it ships with (the
// one place the repository's owner/name is written; `topo setup --repo` overrides it).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { shippedRoot } from '../topology/shipped.js';

export interface PackageInfo {
  name: string;
  version: string;
  /** owner/name on GitHub. */
  repository: string;
  /** The major tag adopters follow (v1). */
  major: string;
}

/**
 * owner/name from package.json's `repository` (a string or `{url}`): https://github.com/o/n(.git),
 * git+https://…, git@github.com:o/n.git, github:o/n or o/n. scripts/release.mjs reads it the same way.
 */
export function repositoryOf(repository: unknown): string | undefined {
  const raw = typeof repository === 'string' ? repository : (repository as { url?: unknown })?.url;
  if (typeof raw !== 'string') return undefined;
  const m =
    /^(?:git\+)?(?:https?:\/\/|ssh:\/\/git@|git:\/\/)github\.com\/([\w.-]+\/[\w.-]+?)(?:\.git)?\/?$/.exec(
      raw,
    ) ??
    /^git@github\.com:([\w.-]+\/[\w.-]+?)(?:\.git)?$/.exec(raw) ??
    /^(?:github:)?([\w.-]+\/[\w.-]+)$/.exec(raw);
  return m?.[1];
}

export function packageInfo(root: string | undefined = shippedRoot()): PackageInfo {
  const pkg = root ? JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) : {};
  const version = String(pkg.version ?? '0.0.0');
  const repository = repositoryOf(pkg.repository);
  if (!repository)
    throw new Error(
      `package.json at ${root ?? '(not found)'} has no GitHub repository (its "repository" field): cannot tell which alpasim-topo to call`,
    );
  return {
    name: String(pkg.name ?? 'alpasim-topo'),
    version,
    repository,
    major: `v${version.split('.')[0]}`,
  };
}
