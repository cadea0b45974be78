// One supported Node range for the runtime (issue 35): package.json's engines, the bundles' esbuild
// target, CI's floor job, the README and docs/cli.md name the same lowest version; the actions run on
// node24 and pages.yml on 24, above it; and the CLI bundle runs on this machine's Node, which is on
// the lowest supported line (the whole suite here runs on the floor).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
// @ts-expect-error: a plain .mjs module without types
import { nodeBundleOptions } from '../../../scripts/esbuild-options.mjs';
import { pagesWorkflow } from '../../../src/setup/templates.js';
import { repoRoot } from '../../support/run-action.js';

const read = (f: string) => readFileSync(join(repoRoot, f), 'utf8');
const floor = /^>=(\d+)\.(\d+)$/.exec(JSON.parse(read('package.json')).engines.node);

describe('the supported Node range', () => {
  it('engines, the esbuild target, CI, the README and docs/cli.md agree on the floor', () => {
    expect(floor, 'engines is ">=X.Y"').not.toBeNull();
    const version = `${floor?.[1]}.${floor?.[2]}`;
    expect(nodeBundleOptions().target).toBe(`node${version}`);
    const ci = parse(read('.github/workflows/ci.yml'));
    const nodeOf = (job: string) =>
      ci.jobs[job].steps.find((s: { uses?: string }) => s.uses?.startsWith('actions/setup-node@'))?.with[
        'node-version'
      ];
    expect(String(nodeOf('check'))).toBe(version);
    expect(String(nodeOf('node24'))).toBe('24');
    expect(read('README.md')).toContain(`Node.js ${version} or later`);
    expect(read('docs/cli.md')).toContain(`Node.js ${version} or later`);
  });

  it('the actions and the experiments site run above the floor (node24)', () => {
    for (const name of ['monitor', 'record', 'submit', 'validate'])
      expect(read(`actions/${name}/action.yml`)).toMatch(/using: "?node24"?/);
    expect(read('.github/workflows/pages.yml')).toContain('node-version: 24');
    expect(pagesWorkflow({ repository: 'o/n', ref: 'v1', cluster: 'c', transport: 'local' }).text).toContain(
      'node-version: 24',
    );
  });

  it("the CLI bundle runs on this machine's Node, on the lowest supported line", () => {
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
    expect(major).toBe(Number(floor?.[1]));
    expect(minor).toBeGreaterThanOrEqual(Number(floor?.[2]));
    const out = execFileSync(process.execPath, [join(repoRoot, 'bin/topo.js'), '--version'], {
      encoding: 'utf8',
    });
    expect(out).toMatch(/^topo \d+\.\d+\.\d+ /);
  });
});
