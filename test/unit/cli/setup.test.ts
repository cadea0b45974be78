// `topo setup` in an empty repository: four caller workflows that pass the workflow schema and call
// the reusable workflows this repository ships (with the same triggers and permissions as this
// repository's own callers), and a clusters.yaml that validates; nothing is overwritten without --force.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runTopo } from '../../support/cli.js';
import { repoRoot } from '../../support/run-action.js';

function topo(args: string[], cwd: string) {
  return runTopo(args, cwd);
}

const WORKFLOWS = ['validate', 'submit', 'monitor', 'record'].map(
  (n) => `.github/workflows/topology-${n}.yml`,
);

describe('topo setup', () => {
  it.each(['local', 'ssh'])(
    'writes callers of the shipped reusable workflows and a valid clusters.yaml (%s)',
    async (transport) => {
      const dir = mkdtempSync(join(tmpdir(), 'topo-setup-'));
      const r = await topo(['setup', '--cluster', 'ord', '--transport', transport], dir);
      expect(r.code, r.stderr).toBe(0);
      for (const file of WORKFLOWS) {
        const out = execFileSync(join(repoRoot, 'node_modules/.bin/action-validator'), [join(dir, file)], {
          encoding: 'utf8',
        });
        expect(out.replace(/WARNING: Glob validation.*\n?/g, '')).toBe('');
        const written = parse(readFileSync(join(dir, file), 'utf8'));
        const ours = parse(readFileSync(join(repoRoot, file), 'utf8'));
        // Same triggers and permissions as this repository's own caller; the reusable workflow at v1.
        expect(written.on).toEqual(ours.on);
        expect(written.permissions).toEqual({});
        const [job] = Object.values(written.jobs) as { uses: string; permissions: unknown }[];
        const [own] = Object.values(ours.jobs) as { uses: string; permissions: unknown }[];
        expect(job?.permissions).toEqual(own?.permissions);
        const m = /^alpasim-topo\/alpasim-topo\/(\.github\/workflows\/reusable-[a-z]+\.yml)@v1$/.exec(
          job?.uses ?? '',
        );
        expect(m, job?.uses).not.toBeNull();
        expect(own?.uses).toBe(`./${m?.[1]}`);
      }
      const validate = await topo(['validate', 'topologies/clusters.yaml'], dir);
      expect(validate.stdout, validate.stdout).toContain('0 error(s)');
      expect(validate.code).toBe(0);
      expect(readFileSync(join(dir, 'topologies/clusters.yaml'), 'utf8')).toContain(
        `transport: ${transport}`,
      );
    },
  );

  it('refuses to overwrite, writing nothing, unless --force', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-setup-'));
    expect((await topo(['setup'], dir)).code).toBe(0);
    writeFileSync(join(dir, 'topologies/clusters.yaml'), '# mine\n');
    const again = await topo(['setup', '--ref', 'v1.2.3'], dir);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('not overwriting');
    expect(again.stderr).toContain('topologies/clusters.yaml');
    expect(readFileSync(join(dir, 'topologies/clusters.yaml'), 'utf8')).toBe('# mine\n');
    expect(readFileSync(join(dir, WORKFLOWS[0] as string), 'utf8')).toContain('@v1\n');
    const forced = await topo(['setup', '--ref', 'v1.2.3', '--force'], dir);
    expect(forced.code).toBe(0);
    expect(readFileSync(join(dir, WORKFLOWS[0] as string), 'utf8')).toContain('@v1.2.3\n');
  });

  it('refuses bad values with exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-setup-'));
    expect((await topo(['setup', '--ref', 'main; rm -rf /'], dir)).code).toBe(2);
    expect((await topo(['setup', '--transport', 'telnet'], dir)).code).toBe(2);
    expect((await topo(['setup', '--cluster', 'Bad Name'], dir)).code).toBe(2);
    expect(existsSync(join(dir, '.github'))).toBe(false);
  });
});
