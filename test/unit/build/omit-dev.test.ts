// `npm ci --omit=dev && node bin/topo.js …`: the CLI bundle runs from a copy of the package with no
// node_modules at all (what --omit=dev leaves is not even needed), and the demo finds what it reads
// at run time (mermaid.min.js beside the bundle, the local-cluster script, the twin's profiles).
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../support/run-action.js';

let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'topo-omit-dev-'));
  // The tracked files (as a clean clone has them), then the bundle and its vendored script as built.
  execFileSync('bash', ['-c', `git -C "${repoRoot}" archive HEAD | tar -x -C "${dir}"`]);
  for (const f of ['dist/topo.js', 'dist/mermaid.min.js'])
    if (existsSync(join(repoRoot, f))) cpSync(join(repoRoot, f), join(dir, f));
}, 60_000);

function topo(...args: string[]) {
  const r = spawnSync(process.execPath, [join(dir, 'bin/topo.js'), ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: dir },
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('the CLI without node_modules', () => {
  it('has no node_modules anywhere above the copy', () => {
    expect(existsSync(join(dir, 'node_modules'))).toBe(false);
    expect(existsSync(join(tmpdir(), 'node_modules'))).toBe(false);
  });

  it.each([
    [['help']],
    [['validate', 'topologies']],
    [['render', '--json', 'topologies/topology-opt-vavam-ord-20261202/more-workers.yaml']],
    [['sim', 'steady', '--profile', 'twin-balanced']],
    [['report', 'topology-opt-vavam-ord-20261202', '--out', '/dev/null']],
    [['site', '--out', 'site']],
    [['demo', '--help']],
  ])('topo %j runs', (args) => {
    const r = topo(...args);
    expect(r.out).not.toMatch(/Cannot find (module|package)|ERR_MODULE_NOT_FOUND/);
    expect(r.code, r.out).toBe(0);
  });

  it('the demo finds mermaid.min.js beside the bundle and its scripts', () => {
    expect(existsSync(join(dir, 'dist/mermaid.min.js'))).toBe(true);
    expect(existsSync(join(dir, 'scripts/local-cluster'))).toBe(true);
    expect(existsSync(join(dir, 'scripts/alpasim-twin/submit.sh'))).toBe(true);
  });
});
