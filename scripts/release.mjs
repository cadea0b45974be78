#!/usr/bin/env node
// Cuts a release: `node scripts/release.mjs <X.Y.Z> [--push]` on a clean default branch.
//  1. checks: semver above the current version, a `## [X.Y.Z]` section in CHANGELOG.md, the committed
//     bundles equal a fresh build (scripts/build.mjs --check);
//  2. sets package.json's version (and the lockfile's); on a new major, points the reusable
//     workflows at the new major tag of the actions (`<repo>/actions/<name>@vX`);
//  3. commits "Release vX.Y.Z", tags vX.Y.Z (annotated) and moves the major tag vX to it;
//  4. with --push, pushes the commit and vX.Y.Z, and force-pushes vX (the tag adopters follow).
// Adopters pin `@vX` (every X.y.z) or `@vX.Y.Z`/a commit SHA. docs/releasing.md explains it.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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

/** The reusable workflows' `uses: <repository>/actions/<name>@vN`, moved to the new major. */
export function pointAtMajor(text, repository, major) {
  const escaped = repository.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return text.replace(new RegExp(`(${escaped}/actions/[a-z-]+)@v\\d+\\b`, 'g'), `$1@v${major}`);
}

function git(root, args) {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
}

export function release(root, version, { push = false, log = console.log } = {}) {
  const pkgFile = join(root, 'package.json');
  const pkg = JSON.parse(readFileSync(pkgFile, 'utf8'));
  const repository = pkg.repository.url.replace(/^https:\/\/github\.com\//, '').replace(/\.git$/, '');
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
  const major = parseVersion(version)[0];
  pkg.version = version;
  writeFileSync(pkgFile, `${JSON.stringify(pkg, null, 2)}\n`);
  const lockFile = join(root, 'package-lock.json');
  if (existsSync(lockFile)) {
    const lock = JSON.parse(readFileSync(lockFile, 'utf8'));
    lock.version = version;
    if (lock.packages?.['']) lock.packages[''].version = version;
    writeFileSync(lockFile, `${JSON.stringify(lock, null, 2)}\n`);
  }
  const workflows = join(root, '.github/workflows');
  for (const f of readdirSync(workflows).filter((n) => n.startsWith('reusable-'))) {
    const file = join(workflows, f);
    const text = readFileSync(file, 'utf8');
    const moved = pointAtMajor(text, repository, major);
    if (moved !== text) {
      writeFileSync(file, moved);
      log(`pointed ${f} at the actions' v${major}`);
    }
  }
  if (git(root, ['status', '--porcelain'])) {
    git(root, ['commit', '-qam', `Release ${tag}`]);
  }
  git(root, ['tag', '-a', tag, '-m', `alpasim-topo ${tag}`]);
  git(root, ['tag', '-f', '-a', `v${major}`, '-m', `alpasim-topo v${major} (now ${tag})`]);
  log(`tagged ${tag} and moved v${major} to ${git(root, ['rev-parse', '--short', 'HEAD'])}`);
  if (push) {
    git(root, ['push', 'origin', 'HEAD', tag]);
    git(root, ['push', '-f', 'origin', `v${major}`]);
    log(`pushed ${tag} and v${major}`);
  } else log(`push with: git push origin HEAD ${tag} && git push -f origin v${major}`);
  return { tag, major: `v${major}` };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const version = args.find((a) => !a.startsWith('-'));
  if (!version || args.includes('--help')) {
    console.error('usage: node scripts/release.mjs <X.Y.Z> [--push]   (docs/releasing.md)');
    process.exit(2);
  }
  try {
    release(join(dirname(fileURLToPath(import.meta.url)), '..'), version, { push: args.includes('--push') });
  } catch (error) {
    console.error(`release: ${error.message}`);
    process.exit(1);
  }
}
