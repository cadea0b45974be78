// `topo setup` in an empty repository: four caller workflows that pass the workflow schema and call
// the reusable workflows this repository ships (with the same triggers and permissions as this
// repository's own callers), pages.yml, and a clusters.yaml that validates with a warning per value
// left to replace; nothing is overwritten without --force; never `npx topo` (another npm package).
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
      // every value setup leaves to replace is a warning, at its line
      for (const key of ['alpasim_checkout', 'run_dir', 'file_sd', 'prometheus_url', 'slurm.account'])
        expect(validate.stdout).toMatch(
          new RegExp(`warning \\[placeholder\\] clusters\\.ord\\.${key.replace('.', '\\.')}`),
        );
      if (transport === 'ssh') expect(validate.stdout).toMatch(/clusters\.ord\.known_host_key/);
      const pages = join(dir, '.github/workflows/pages.yml');
      const out = execFileSync(join(repoRoot, 'node_modules/.bin/action-validator'), [pages], {
        encoding: 'utf8',
      });
      expect(out.replace(/WARNING: Glob validation.*\n?/g, '')).toBe('');
      expect(readFileSync(pages, 'utf8')).toContain(
        'repository: alpasim-topo/alpasim-topo\n          ref: v1\n',
      );
      for (const file of [...WORKFLOWS, '.github/workflows/pages.yml', 'topologies/clusters.yaml'])
        expect(readFileSync(join(dir, file), 'utf8'), file).not.toMatch(/npx (--yes |-y )?topo\b/);
      expect(r.stdout).not.toMatch(/npx (--yes |-y )?topo\b/);
      expect(r.stdout).toContain('npx --yes github:alpasim-topo/alpasim-topo#v1 doctor --cluster ord');
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

  it('--repo and --runner-label reach every caller; the self-hosted ones name the label', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-setup-'));
    const sha = 'a'.repeat(40);
    const r = await topo(
      ['setup', '--repo', 'my-org/topo-fork', '--ref', sha, '--runner-label', 'gpu-login'],
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    for (const file of WORKFLOWS) {
      const written = parse(readFileSync(join(dir, file), 'utf8'));
      const [job] = Object.values(written.jobs) as { uses: string; with?: Record<string, string> }[];
      expect(job?.uses).toMatch(
        new RegExp(`^my-org/topo-fork/\\.github/workflows/reusable-[a-z]+\\.yml@${sha}$`),
      );
      if (!file.includes('validate')) expect(job?.with?.['runner-label']).toBe('gpu-login');
    }
    // every self-hosted reusable workflow takes the label as an input, default slurm
    for (const name of ['submit', 'monitor', 'record']) {
      const reusable = parse(readFileSync(join(repoRoot, `.github/workflows/reusable-${name}.yml`), 'utf8'));
      expect(reusable.on.workflow_call.inputs['runner-label'].default).toBe('slurm');
      for (const job of Object.values(reusable.jobs) as { 'runs-on': string[] }[]) {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a template
        expect(job['runs-on']).toEqual(['self-hosted', '${{ inputs.runner-label }}']);
      }
    }
  });

  it('the callers, setup and the docs agree where the SSH key lives: a secret of the default-branch-only "slurm" environment', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-setup-'));
    const r = await topo(['setup', '--transport', 'ssh'], dir);
    expect(r.code, r.stderr).toBe(0);
    const says = /secret of the "slurm" environment \(deployment branches: the default branch only\)/;
    for (const file of WORKFLOWS.filter((f) => !f.includes('validate'))) {
      const text = readFileSync(join(dir, file), 'utf8');
      const written = parse(text);
      const [job] = Object.values(written.jobs) as { secrets?: Record<string, string> }[];
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a template
      expect(job?.secrets?.TOPO_SSH_PRIVATE_KEY, file).toBe('${{ secrets.TOPO_SSH_PRIVATE_KEY }}');
      expect(text.replace(/\n\s*# /g, ' '), file).toMatch(says);
      expect(text, file).toMatch(/never a\s+(# )?repository secret/);
    }
    expect(r.stdout).toMatch(
      /create the "slurm" environment \(deployment branches: the default branch only\) with the secret TOPO_SSH_PRIVATE_KEY/,
    );
    const adopting = readFileSync(join(repoRoot, 'docs/adopting.md'), 'utf8');
    expect(adopting).toMatch(
      /New environment `slurm`; \*Deployment branches and\s+tags\*: your default branch only/,
    );
    expect(adopting).toMatch(/add the secret `TOPO_SSH_PRIVATE_KEY`\s+there/);
  });

  it('refuses bad values with exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-setup-'));
    expect((await topo(['setup', '--ref', 'main; rm -rf /'], dir)).code).toBe(2);
    expect((await topo(['setup', '--transport', 'telnet'], dir)).code).toBe(2);
    expect((await topo(['setup', '--cluster', 'Bad Name'], dir)).code).toBe(2);
    expect((await topo(['setup', '--repo', 'not a repo'], dir)).code).toBe(2);
    expect((await topo(['setup', '--runner-label', 'self-hosted'], dir)).code).toBe(2);
    expect(existsSync(join(dir, '.github'))).toBe(false);
  });
});
