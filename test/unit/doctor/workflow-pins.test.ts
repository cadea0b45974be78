// doctor's "workflow pins" over a real git server (file://): callers `topo setup` wrote at a release
// tag resolve; at a commit of the default branch they reach actions at @v1, which does not exist before
// the first release (fail, naming the line); at the moving tag they warn; no server is a warning.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkWorkflowPins } from '../../../src/doctor/workflow-pins.js';
import { runTopo } from '../../support/cli.js';
import { type GitServer, gitServer } from '../../support/git-server.js';

const server = gitServer(['v1.0.0', 'v1']);

async function callers(args: string[], on: GitServer = server): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'topo-pins-'));
  const r = await runTopo(['setup', ...args], dir, { GITHUB_SERVER_URL: on.url });
  expect(r.code, r.stderr).toBe(0);
  return dir;
}

describe('topo doctor: workflow pins', { timeout: 180_000 }, () => {
  it('passes callers pinned to a release tag: every uses: resolves at a full SHA', async () => {
    const dir = await callers(['--ref', 'v1.0.0']);
    const check = await checkWorkflowPins(dir, { GITHUB_SERVER_URL: server.url });
    expect(check, check.detail).toMatchObject({ name: 'workflow pins', status: 'ok' });
    // 4 callers and, inside each reusable workflow, its checkout and its action (submit has two jobs)
    expect(check.detail).toMatch(/^1[0-9] uses: resolve, each at a full commit SHA$/);
  });

  it('fails callers pinned to a commit whose workflows call actions at a tag that does not exist yet', async () => {
    // as `topo setup --ref <a commit of main>` wrote them before the first release: a full SHA whose
    // reusable workflows call actions/<x>@v1, a tag no one has pushed
    const early = gitServer(['v1.0.0']);
    const dir = await callers(['--ref', 'v1.0.0'], early);
    for (const f of ['submit', 'monitor', 'validate', 'record']) {
      const path = join(dir, `.github/workflows/topology-${f}.yml`);
      writeFileSync(path, readFileSync(path, 'utf8').replaceAll(early.sha, early.unpinned));
    }
    const check = await checkWorkflowPins(dir, { GITHUB_SERVER_URL: early.url });
    expect(check.status).toBe('fail');
    expect(check.detail).toMatch(
      /reusable-submit\.yml@[0-9a-f]{40}:\d+: alpasim-topo\/alpasim-topo\/actions\/submit@v1: alpasim-topo\/alpasim-topo has no action actions\/submit at v1/,
    );
    expect(check.fix).toContain('--ref vX.Y.Z');
    // the same callers once v1 exists: they resolve, but through a moving tag
    const later = await callers(['--ref', 'v1.0.0']);
    for (const f of ['submit', 'monitor', 'validate', 'record']) {
      const path = join(later, `.github/workflows/topology-${f}.yml`);
      writeFileSync(path, readFileSync(path, 'utf8').replaceAll(server.sha, server.unpinned));
    }
    const moving = await checkWorkflowPins(later, { GITHUB_SERVER_URL: server.url });
    expect(moving.status, moving.detail).toBe('warn');
    expect(moving.detail).toContain('alpasim-topo/alpasim-topo/actions/submit@v1');
  });

  it('warns on the moving tag, and when the server cannot be reached', async () => {
    const dir = await callers(['--ref', 'v1']);
    const moving = await checkWorkflowPins(dir, { GITHUB_SERVER_URL: server.url });
    expect(moving.status, moving.detail).toBe('warn');
    expect(moving.detail).toContain('.github/workflows/topology-submit.yml:');
    const down = await checkWorkflowPins(dir, { GITHUB_SERVER_URL: 'http://127.0.0.1:9' });
    expect(down.status).toBe('warn');
    expect(down.detail).toContain('could not look');
  });
});
