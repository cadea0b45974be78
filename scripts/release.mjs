#!/usr/bin/env node
// Cuts a release: `node scripts/release.mjs <X.Y.Z> [--dry-run | --push]` on a clean default branch, and
// `node scripts/release.mjs --verify <tag>` checks a tagged tree.
//  1. checks: semver above the current version, a `## [X.Y.Z]` section in CHANGELOG.md, the committed
//     bundles equal a fresh build (scripts/build.mjs --check);
//  2. commits "Release vX.Y.Z" (package.json's and the lockfile's version) on the branch: the release commit;
//  3. on a commit of its own, off the branch, pins every reusable workflow's
//     `uses: <owner>/<name>/actions/<x>@…` to the release commit's full SHA (owner/name from package.json's
//     `repository`), tags it vX.Y.Z (annotated), moves the major tag vX to it, and verifies the tagged tree:
//     every remote `uses:` of every workflow must be a full 40-hex SHA, and the actions at the pinned SHA must
//     be the tagged tree's own;
//  4. --push pushes the branch and vX.Y.Z and force-pushes vX; --dry-run does all of it in a throwaway clone
//     of HEAD, prints the tagged workflows' pins and leaves this repository untouched.
// So a caller pinned to @vX.Y.Z or to the tag's SHA runs exactly the tagged code. docs/releasing.md.
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isFullSha, usesOf } from '../src/setup/workflow-uses.mjs';

const SEMVER = /^(\d+)\.(\d+)\.(\d+)$/;

export function parseVersion(text) {
  const m = SEMVER.exec(text);
  if (!m) throw new Error(`version ${JSON.stringify(text)} is not X.Y.Z (semver without a v)`);
  return m.slice(1, 4).map(Number);
}

export function isAfter(next, current) {
  const [a, b] = [parseVersion(next), parseVersion(current)];
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return false;
}

export function changelogHas(text, version) {
  return new RegExp(`^## \\[${version.replaceAll('.', '\\.')}\\]`, 'm').test(text);
}

/** owner/name from package.json's `repository`, read as src/cli/package-info.ts's repositoryOf reads it. */
export function repositoryOf(pkg) {
  const raw = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
  const m =
    /^(?:git\+)?(?:https?:\/\/|ssh:\/\/git@|git:\/\/)github\.com\/([\w.-]+\/[\w.-]+?)(?:\.git)?\/?$/.exec(
      raw ?? '',
    ) ??
    /^git@github\.com:([\w.-]+\/[\w.-]+?)(?:\.git)?$/.exec(raw ?? '') ??
    /^(?:github:)?([\w.-]+\/[\w.-]+)$/.exec(raw ?? '');
  if (!m) throw new Error(`package.json's repository ${JSON.stringify(raw)} is not a GitHub owner/name`);
  return m[1];
}

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Every `uses: <repository>/actions/<name>@<any ref>` (and its trailing comment) pinned to `sha # tag`. */
export function pinToSha(text, repository, sha, tag) {
  if (!/^[0-9a-f]{40}$/.test(sha)) throw new Error(`${sha} is not a full commit SHA`);
  return text.replace(
    new RegExp(
      `(uses:\\s*["']?${escapeRegExp(repository)}/actions/[\\w-]+)@[^\\s"'#]+["']?(?:[ \\t]*#[^\\n]*)?`,
      'g',
    ),
    `$1@${sha} # ${tag}`,
  );
}

/** The remote `uses:` references of a workflow's text that are not a full 40-hex SHA: [{ line, uses }]. */
export function unpinnedUses(text) {
  return usesOf(text).filter((u) => !isFullSha(u.uses.slice(u.uses.lastIndexOf('@') + 1)));
}

/**
 * Checks a tagged tree: every workflow's remote `uses:` is a full SHA, and each pin of this repository's
 * actions names a commit whose actions/ folder is the tag's own. Returns the pins; throws listing the faults.
 */
export function verify(
  root,
  ref,
  repository = repositoryOf(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))),
) {
  const commit = git(root, ['rev-parse', '--verify', `${ref}^{commit}`]);
  const files = git(root, ['ls-tree', '--name-only', `${commit}:.github/workflows`])
    .split('\n')
    .filter((f) => /\.ya?ml$/.test(f));
  const faults = [];
  const pins = [];
  const own = new RegExp(`^${escapeRegExp(repository)}/actions/[\\w-]+@([0-9a-f]{40})$`);
  const actionsTree = git(root, ['rev-parse', `${commit}:actions`]);
  for (const f of files) {
    const text = git(root, ['show', `${commit}:.github/workflows/${f}`]);
    for (const u of unpinnedUses(text))
      faults.push(`.github/workflows/${f}:${u.line}: ${u.uses} is not pinned to a full commit SHA`);
    for (const { uses } of usesOf(text)) {
      const sha = own.exec(uses)?.[1];
      if (!sha) continue;
      pins.push({ file: f, uses });
      let pinned;
      try {
        pinned = git(root, ['rev-parse', `${sha}:actions`]);
      } catch {
        faults.push(`.github/workflows/${f}: ${uses} names a commit this repository does not have`);
        continue;
      }
      if (pinned !== actionsTree)
        faults.push(`.github/workflows/${f}: ${uses} runs actions other than ${ref}'s own`);
    }
  }
  if (!pins.length) faults.push(`${ref}: no workflow uses ${repository}/actions/<name>@<sha>`);
  if (faults.length) throw new Error(`${ref} is not pinned:\n  ${faults.join('\n  ')}`);
  return pins;
}

function git(root, args) {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
}

function checks(root, version, pkg) {
  parseVersion(version);
  if (git(root, ['status', '--porcelain']))
    throw new Error('the working tree is not clean: commit or stash first');
  const tag = `v${version}`;
  if (git(root, ['tag', '--list', tag])) throw new Error(`tag ${tag} exists already`);
  if (pkg.version !== version && !isAfter(version, pkg.version))
    throw new Error(`${version} is not after the current version ${pkg.version}`);
  const changelog = existsSync(join(root, 'CHANGELOG.md'))
    ? readFileSync(join(root, 'CHANGELOG.md'), 'utf8')
    : '';
  if (!changelogHas(changelog, version))
    throw new Error(`CHANGELOG.md has no "## [${version}]" section: write what changed first`);
  try {
    execFileSync(process.execPath, [join(root, 'scripts/build.mjs'), '--check'], {
      cwd: root,
      stdio: 'pipe',
    });
  } catch (error) {
    throw new Error(
      `the committed bundles are stale: run \`npm run build\` and commit\n${error.stderr ?? ''}`,
    );
  }
}

function setVersion(root, pkg, version) {
  const pkgFile = join(root, 'package.json');
  writeFileSync(pkgFile, `${JSON.stringify({ ...pkg, version }, null, 2)}\n`);
  const lockFile = join(root, 'package-lock.json');
  if (existsSync(lockFile)) {
    const lock = JSON.parse(readFileSync(lockFile, 'utf8'));
    lock.version = version;
    if (lock.packages?.['']) lock.packages[''].version = version;
    writeFileSync(lockFile, `${JSON.stringify(lock, null, 2)}\n`);
  }
}

/** On a detached commit after the release commit: every reusable workflow's actions pinned to its SHA. */
function pinCommit(root, repository, releaseSha, tag, log) {
  git(root, ['checkout', '-q', '--detach', releaseSha]);
  const workflows = join(root, '.github/workflows');
  for (const f of readdirSync(workflows).filter((n) => n.startsWith('reusable-'))) {
    const file = join(workflows, f);
    const text = readFileSync(file, 'utf8');
    const pinned = pinToSha(text, repository, releaseSha, tag);
    if (pinned !== text) {
      writeFileSync(file, pinned);
      log(`pinned ${f}'s actions to ${releaseSha}`);
    }
  }
  git(root, ['commit', '-qam', `${tag}: the reusable workflows run the actions at ${releaseSha}`]);
  return git(root, ['rev-parse', 'HEAD']);
}

/** A throwaway clone of `root`'s HEAD (its node_modules linked) for a dry run. */
function throwawayClone(root) {
  const dir = mkdtempSync(join(tmpdir(), 'topo-release-dry-run-'));
  git(root, ['clone', '-q', '--no-hardlinks', root, dir]);
  for (const key of ['user.email', 'user.name']) {
    let value = '';
    try {
      value = git(root, ['config', key]);
    } catch {}
    git(dir, ['config', key, value || 'release dry run']);
  }
  if (existsSync(join(root, 'node_modules'))) {
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    appendFileSync(join(dir, '.git/info/exclude'), 'node_modules\n');
  }
  return dir;
}

/**
 * Cuts release `version` in `root`: the release commit on the branch, the tag on a child commit that pins the
 * reusable workflows to it. With dryRun, in a throwaway clone (returned as `dir`); nothing is pushed.
 */
export function release(root, version, { push = false, dryRun = false, log = console.log } = {}) {
  if (dryRun && push) throw new Error('--dry-run and --push exclude each other');
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const repository = repositoryOf(pkg);
  checks(root, version, pkg);
  const dir = dryRun ? throwawayClone(root) : root;
  if (dryRun) log(`dry run in ${dir} (this repository is left as it is)`);
  const tag = `v${version}`;
  const major = `v${parseVersion(version)[0]}`;
  const branch = git(dir, ['rev-parse', '--abbrev-ref', 'HEAD']);
  setVersion(dir, pkg, version);
  if (git(dir, ['status', '--porcelain'])) git(dir, ['commit', '-qam', `Release ${tag}`]);
  const releaseSha = git(dir, ['rev-parse', 'HEAD']);
  let tagged;
  try {
    tagged = pinCommit(dir, repository, releaseSha, tag, log);
    git(dir, ['tag', '-a', tag, '-m', `alpasim-topo ${tag} (actions at ${releaseSha})`]);
    git(dir, ['tag', '-f', '-a', major, '-m', `alpasim-topo ${major} (now ${tag})`]);
  } finally {
    git(dir, ['checkout', '-q', branch === 'HEAD' ? releaseSha : branch]);
  }
  const pins = verify(dir, tag, repository);
  for (const p of pins) log(`${tag} ${p.file}: uses ${p.uses}`);
  log(`release commit ${releaseSha} on ${branch}; tagged ${tag} and moved ${major} to ${tagged}`);
  const pushArgs = ['push', 'origin', `${branch === 'HEAD' ? releaseSha : branch}`, tag];
  if (push) {
    git(root, pushArgs);
    git(root, ['push', '-f', 'origin', major]);
    log(`pushed ${branch}, ${tag} and ${major}`);
  } else if (!dryRun) log(`push with: git ${pushArgs.join(' ')} && git push -f origin ${major}`);
  return { tag, major, releaseSha, tagged, pins, dir };
}

const USAGE =
  'usage: node scripts/release.mjs <X.Y.Z> [--dry-run | --push]\n' +
  '       node scripts/release.mjs --verify <tag or commit>     (docs/releasing.md)';

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  // The repository the command runs in (its top level), so a clone's release uses this script's rules.
  const root = execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim();
  const positional = args.filter((a) => !a.startsWith('-'));
  if (!positional.length || args.includes('--help')) {
    console.error(USAGE);
    process.exit(2);
  }
  try {
    if (args.includes('--verify')) {
      for (const p of verify(root, positional[0])) console.log(`${p.file}: uses ${p.uses}`);
      console.log(`${positional[0]}: every workflow's actions are pinned to a full commit SHA`);
    } else
      release(root, positional[0], { push: args.includes('--push'), dryRun: args.includes('--dry-run') });
  } catch (error) {
    console.error(`release: ${error.message}`);
    process.exit(1);
  }
}
