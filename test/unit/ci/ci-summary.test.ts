// CI fails when a test was skipped or todo: vitest runs a real suite with one skipped and one todo test,
// and scripts/ci-summary.mjs (what .ci/run calls on vitest's JSON report) exits 1 naming them.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../../..');
const vitest = join(root, 'node_modules/vitest/vitest.mjs');
const summary = join(root, 'scripts/ci-summary.mjs');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs vitest (globals, no config) on one test file's text; returns ci-summary's exit and output. */
function runSuite(text: string) {
  const dir = mkdtempSync(join(tmpdir(), 'ci-summary-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'suite.test.js'), text);
  writeFileSync(join(dir, 'vitest.config.mjs'), 'export default {};\n');
  const report = join(dir, 'vitest.json');
  spawnSync(
    process.execPath,
    [vitest, 'run', '--root', dir, '--globals', '--reporter=json', `--outputFile=${report}`],
    { cwd: dir, encoding: 'utf8' },
  );
  const r = spawnSync(process.execPath, [summary, report], { cwd: dir, encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr, report: JSON.parse(readFileSync(report, 'utf8')) };
}

describe('.ci/run closing line (scripts/ci-summary.mjs)', () => {
  it('fails when a test was skipped or todo, naming each', () => {
    const r = runSuite("it('runs', () => {});\nit.skip('needs a cluster', () => {});\nit.todo('later');\n");
    expect(r.report.numPendingTests + r.report.numTodoTests).toBe(2);
    expect(r.status).toBe(1);
    expect(r.out).toContain('1 passed, 0 failed, 1 skipped, 1 todo');
    expect(r.out).toMatch(/skipped: suite\.test\.js › needs a cluster/);
    expect(r.out).toMatch(/todo: suite\.test\.js › later/);
  }, 60_000);

  it('fails when runIf turns a test off', () => {
    const r = runSuite("it('runs', () => {});\nit.runIf(false)('needs the mirror', () => {});\n");
    expect(r.status).toBe(1);
    expect(r.out).toContain('needs the mirror');
  }, 60_000);

  it('passes when every test ran and passed', () => {
    const r = runSuite("it('runs', () => {});\nit('runs too', () => {});\n");
    expect(r.out).toContain('2 passed, 0 failed, 0 skipped, 0 todo');
    expect(r.status).toBe(0);
  }, 60_000);

  it('fails when the report is missing', () => {
    const r = spawnSync(process.execPath, [summary, join(tmpdir(), 'no-such-report.json')], {
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('no test report');
  });
});
