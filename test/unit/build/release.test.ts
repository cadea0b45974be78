// scripts/release.mjs: version rules, the changelog, the major tag, and the refusals (stale
// bundles, dirty tree, an existing tag), on a throwaway clone of this repository.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs module without types
import * as releaseScript from '../../../scripts/release.mjs';
import { repoRoot } from '../../support/run-action.js';

const { changelogHas, isAfter, parseVersion, pinToSha, release, repositoryOf, unpinnedUses, verify } =
  releaseScript;

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

// every clone is removed after the file: each is a full copy of the repository (~300 MB), and 236
// left behind filled the disk of a shared machine
const clones: string[] = [];
// removing them takes longer than the 10 s hook default when the shared machine is busy (load 20)
afterAll(() => {
  for (const dir of clones) rmSync(dir, { recursive: true, force: true });
}, 120_000);

/** A clone of HEAD with the working tree's sources, bundles rebuilt and committed. */
function clone(): string {
  const dir = mkdtempSync(join(tmpdir(), 'topo-release-'));
  clones.push(dir);
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

  it('pins only this repository actions, from any ref, to a full SHA', () => {
    const sha = 'b'.repeat(40);
    const text =
      'uses: alpasim-topo/alpasim-topo/actions/submit@v1\n' +
      "  - uses: 'alpasim-topo/alpasim-topo/actions/record@0123456789012345678901234567890123456789' # v1.0.0\n" +
      'uses: other/x/actions/y@v1\n';
    expect(pinToSha(text, 'alpasim-topo/alpasim-topo', sha, 'v1.1.0')).toBe(
      `uses: alpasim-topo/alpasim-topo/actions/submit@${sha} # v1.1.0\n` +
        `  - uses: 'alpasim-topo/alpasim-topo/actions/record@${sha} # v1.1.0\n` +
        'uses: other/x/actions/y@v1\n',
    );
    expect(() => pinToSha(text, 'a/b', 'v1', 'v1')).toThrow('not a full commit SHA');
  });

  it('finds every remote uses: that is not a full SHA', () => {
    const text = [
      '      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2',
      '        uses: o/n/actions/submit@v1',
      '    uses: ./.github/workflows/reusable-validate.yml',
      '      - uses: o/n/actions/record@1bd7190 # short',
      '      - uses: docker://alpine:3',
      '      # uses: o/n/actions/x@main (a comment)',
    ].join('\n');
    expect(unpinnedUses(text)).toEqual([
      { line: 2, uses: 'o/n/actions/submit@v1' },
      { line: 4, uses: 'o/n/actions/record@1bd7190' },
    ]);
  });

  it("reads owner/name from package.json's repository", () => {
    expect(repositoryOf({ repository: { url: 'https://github.com/acme/topo.git' } })).toBe('acme/topo');
    expect(repositoryOf({ repository: 'github:acme/topo' })).toBe('acme/topo');
    expect(() => repositoryOf({ repository: { url: 'https://gitlab.com/a/b' } })).toThrow(
      'not a GitHub owner/name',
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
    const before = git(dir, 'rev-parse', 'HEAD');
    const dry = release(dir, '1.1.0', { log, dryRun: true });
    clones.push(dry.dir);
    expect(git(dir, 'rev-parse', 'HEAD'), 'a dry run leaves the repository as it was').toBe(before);
    expect(git(dir, 'tag', '--list')).toBe('');
    expect(dry.pins.length).toBeGreaterThanOrEqual(4);
    const r = release(dir, '1.1.0', { log });
    expect(r).toMatchObject({ tag: 'v1.1.0', major: 'v1', releaseSha: git(dir, 'rev-parse', 'HEAD') });
    // The branch gets the release commit; the tag is its child, whose workflows pin the release commit.
    expect(git(dir, 'rev-parse', 'v1.1.0^{commit}^')).toBe(r.releaseSha);
    expect(git(dir, 'rev-parse', 'v1^{commit}')).toBe(git(dir, 'rev-parse', 'v1.1.0^{commit}'));
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version).toBe('1.1.0');
    expect(git(dir, 'log', '-1', '--format=%s')).toBe('Release v1.1.0');
    for (const f of ['monitor', 'record', 'submit', 'validate']) {
      const text = git(dir, 'show', `v1.1.0:.github/workflows/reusable-${f}.yml`);
      expect(unpinnedUses(text)).toEqual([]);
      expect(text).toContain(`alpasim-topo/alpasim-topo/actions/${f}@${r.releaseSha} # v1.1.0`);
    }
    expect(verify(dir, 'v1.1.0').length).toBe(r.pins.length);
    expect(() => verify(dir, 'HEAD')).toThrow(
      /reusable-submit\.yml:\d+: alpasim-topo\/alpasim-topo\/actions\/submit@v1 is not pinned/,
    );
    expect(() => release(dir, '1.1.0', { log })).toThrow('exists already');
    // A pin to a commit whose actions differ from the tag's own fails verification.
    git(dir, 'checkout', '-q', '--detach', 'v1.1.0');
    writeFileSync(
      join(dir, 'actions/submit/action.yml'),
      `${readFileSync(join(dir, 'actions/submit/action.yml'), 'utf8')}\n`,
    );
    git(dir, 'commit', '-qam', 'actions changed after the pin');
    expect(() => verify(dir, 'HEAD')).toThrow("runs actions other than HEAD's own");
    // The command line: --verify exits 1 with the faults, 0 on the tag.
    const cli = (...a: string[]) => {
      try {
        return {
          status: 0,
          out: execFileSync(process.execPath, [join(repoRoot, 'scripts/release.mjs'), ...a], {
            cwd: dir,
            encoding: 'utf8',
            stdio: 'pipe',
          }),
        };
      } catch (e) {
        const err = e as { status: number; stderr: string };
        return { status: err.status, out: err.stderr };
      }
    };
    const good = cli('--verify', 'v1.1.0');
    expect(good.out).toContain('every workflow');
    expect(good.status).toBe(0);
    const bad = cli('--verify', r.releaseSha);
    expect(bad.status).toBe(1);
    expect(bad.out).toContain('is not pinned to a full commit SHA');
  }, 240_000);
});
