// A git server (GITHUB_SERVER_URL=file://…) holding alpasim-topo/alpasim-topo as scripts/release.mjs
// leaves it, and the third-party actions its reusable workflows call: what `topo setup` and
// `topo doctor` read over git, without the network.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error: a plain .mjs module without types
import * as releaseScript from '../../scripts/release.mjs';
import { repoRoot } from './run-action.js';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

export const REUSABLE_FILES = ['validate', 'submit', 'monitor', 'record'].map(
  (n) => `.github/workflows/reusable-${n}.yml`,
);

export interface GitServer {
  url: string;
  /** The tagged commit: its reusable workflows name every action by full SHA. */
  sha: string;
  /** The release commit R before the pins (as the default branch is: actions at @v1). */
  unpinned: string;
}

/** Publishes the folder `work` (a git work tree) as `<root>/<repository>.git`. */
function publish(root: string, work: string, repository: string) {
  mkdirSync(join(root, repository.split('/')[0] as string), { recursive: true });
  git(root, 'clone', '-q', '--bare', work, `${repository}.git`);
}

/** actions/checkout as a repository with an action.yml; its commit. */
function checkoutAction(root: string): string {
  const work = join(root, 'checkout-work');
  mkdirSync(work);
  git(work, 'init', '-q');
  writeFileSync(join(work, 'action.yml'), 'name: checkout\nruns:\n  using: node20\n  main: index.js\n');
  git(work, 'add', '.');
  git(work, 'commit', '-q', '-m', 'checkout');
  publish(root, work, 'actions/checkout');
  return git(work, 'rev-parse', 'HEAD');
}

/** The server, with the tags given on the pinned child of R (default: this version's release tag). */
export function gitServer(tags: string[] = [`v${packageVersion()}`]): GitServer {
  const root = mkdtempSync(join(tmpdir(), 'topo-git-server-'));
  const checkout = checkoutAction(root);
  const work = join(root, 'work');
  mkdirSync(join(work, '.github/workflows'), { recursive: true });
  git(work, 'init', '-q');
  for (const name of ['validate', 'submit', 'monitor', 'record']) {
    mkdirSync(join(work, 'actions', name), { recursive: true });
    cpSync(join(repoRoot, 'actions', name, 'action.yml'), join(work, 'actions', name, 'action.yml'));
  }
  for (const f of REUSABLE_FILES) {
    const text = readFileSync(join(repoRoot, f), 'utf8').replace(
      /actions\/checkout@[0-9a-f]{40}/g,
      `actions/checkout@${checkout}`,
    );
    writeFileSync(join(work, f), text);
  }
  git(work, 'add', '.');
  git(work, 'commit', '-q', '-m', 'release');
  const unpinned = git(work, 'rev-parse', 'HEAD');
  for (const f of REUSABLE_FILES) {
    const text = readFileSync(join(work, f), 'utf8');
    writeFileSync(join(work, f), releaseScript.pinToSha(text, 'alpasim-topo/alpasim-topo', unpinned, 'vX'));
  }
  git(work, 'commit', '-q', '-am', 'pins');
  for (const tag of tags) git(work, 'tag', '-a', tag, '-m', tag);
  publish(root, work, 'alpasim-topo/alpasim-topo');
  return { url: `file://${root}`, sha: git(work, 'rev-parse', 'HEAD'), unpinned };
}

/** A server holding `server`'s alpasim-topo under another name (a fork) too; its URL. */
export function serverWith(server: GitServer, repository: string): string {
  const root = server.url.slice('file://'.length);
  publish(root, `${root}/alpasim-topo/alpasim-topo.git`, repository);
  return server.url;
}

export function packageVersion(): string {
  return JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version as string;
}
