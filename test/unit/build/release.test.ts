// scripts/release.mjs: version rules, the changelog, the major tag, and the refusals (stale
// bundles, dirty tree, an existing tag), on a throwaway clone of this repository.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs module without types
import { changelogHas, isAfter, parseVersion, pointAtMajor, release } from '../../../scripts/release.mjs';
import { repoRoot } from '../../support/run-action.js';

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/** A clone of HEAD with the working tree's sources, bundles rebuilt and committed. */
function clone(): string {
  const dir = mkdtempSync(join(tmpdir(), 'topo-release-'));
  git(repoRoot, 'clone', '-q', '--no-hardlinks', repoRoot, dir);
  git(dir, 'config', 'user.email', 'release@test');
  git(dir, 'config', 'user.name', 'release test');
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, '.git/info/exclude'), 'node_modules\n');
  return dir;
}

describe('release rules', () => {
  it('reads semver and orders versions', () => {
    expect(parseVersion('1.2.3')).toEqual([1, 2, 3]);
    expect(() => parseVersion('v1.2.3')).toThrow('not X.Y.Z');
    expect(isAfter('1.10.0', '1.9.9')).toBe(true);
    expect(isAfter('1.0.0', '1.0.0')).toBe(false);
    expect(changelogHas('# C\n\n## [1.2.0]\n', '1.2.0')).toBe(true);
    expect(changelogHas('## [1.2.01]\n', '1.2.0')).toBe(false);
  });

  it('moves only this repository actions to the new major', () => {
    const text = 'uses: alpasim-topo/alpasim-topo/actions/submit@v1\nuses: other/x/actions/y@v1\n';
    expect(pointAtMajor(text, 'alpasim-topo/alpasim-topo', 2)).toBe(
      'uses: alpasim-topo/alpasim-topo/actions/submit@v2\nuses: other/x/actions/y@v1\n',
    );
  });
});

describe('scripts/release.mjs on a clone', () => {
  it('refuses stale bundles, then tags vX.Y.Z and moves vX; refuses the same tag twice', () => {
    const dir = clone();
    const logs: string[] = [];
    const log = (m: string) => logs.push(m);
    const changelog = readFileSync(join(dir, 'CHANGELOG.md'), 'utf8');
    writeFileSync(
      join(dir, 'CHANGELOG.md'),
      changelog.replace('## [1.0.0]', '## [1.1.0]\n\n- test\n\n## [1.0.0]'),
    );
    git(dir, 'commit', '-qam', 'changelog');
    // Bundles are committed by whoever merges; the clone's may be stale: a release refuses them.
    const fresh = (() => {
      try {
        execFileSync(process.execPath, ['scripts/build.mjs', '--check'], { cwd: dir, stdio: 'pipe' });
        return true;
      } catch {
        return false;
      }
    })();
    if (!fresh) {
      expect(() => release(dir, '1.1.0', { log })).toThrow('the committed bundles are stale');
      execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: dir, stdio: 'pipe' });
      git(dir, 'add', '-A');
      git(dir, 'commit', '-qm', 'bundles');
    }
    expect(() => release(dir, '0.9.0', { log })).toThrow('is not after the current version');
    expect(() => release(dir, '1.2.0', { log })).toThrow('CHANGELOG.md has no "## [1.2.0]" section');
    writeFileSync(join(dir, 'stray.txt'), 'x');
    expect(() => release(dir, '1.1.0', { log })).toThrow('not clean');
    git(dir, 'clean', '-qf');
    expect(release(dir, '1.1.0', { log })).toEqual({ tag: 'v1.1.0', major: 'v1' });
    expect(git(dir, 'rev-parse', 'v1.1.0^{commit}')).toBe(git(dir, 'rev-parse', 'HEAD'));
    expect(git(dir, 'rev-parse', 'v1^{commit}')).toBe(git(dir, 'rev-parse', 'HEAD'));
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version).toBe('1.1.0');
    expect(git(dir, 'log', '-1', '--format=%s')).toBe('Release v1.1.0');
    expect(() => release(dir, '1.1.0', { log })).toThrow('exists already');
  }, 180_000);
});
