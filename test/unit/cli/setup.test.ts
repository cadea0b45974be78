// `topo setup` in an empty repository: four caller workflows that pass the workflow schema and call
// the reusable workflows this repository ships (with the same triggers and permissions as this
// repository's own callers), pages.yml, and a clusters.yaml that validates with a warning per value
// left to replace; nothing is overwritten without --force; never `npx topo` (another npm package).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
// @ts-expect-error: a plain .mjs module without types
import * as releaseScript from '../../../scripts/release.mjs';
import { checkGrafana } from '../../../src/doctor/checks.js';
import { runTopo } from '../../support/cli.js';
import { cliSchemaErrors } from '../../support/cli-schemas.js';
import { gitServer, serverWith as serverWith_ } from '../../support/git-server.js';
import { repoRoot } from '../../support/run-action.js';

const version = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version as string;

const server = gitServer();
const serverWith = (repository: string) => serverWith_(server, repository);

function topo(args: string[], cwd: string, env: NodeJS.ProcessEnv = { GITHUB_SERVER_URL: server.url }) {
  return runTopo(args, cwd, env);
}

const WORKFLOWS = ['validate', 'submit', 'monitor', 'record'].map(
  (n) => `.github/workflows/topology-${n}.yml`,
);

describe('topo setup', { timeout: 120_000 }, () => {
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
        // Same triggers and permissions as this repository's own caller; the reusable workflow at the
        // release's full SHA, its tag in a comment.
        expect(written.on).toEqual(ours.on);
        expect(written.permissions).toEqual({});
        const [job] = Object.values(written.jobs) as { uses: string; permissions: unknown }[];
        const [own] = Object.values(ours.jobs) as { uses: string; permissions: unknown }[];
        expect(job?.permissions).toEqual(own?.permissions);
        const m = new RegExp(
          `^alpasim-topo/alpasim-topo/(\\.github/workflows/reusable-[a-z]+\\.yml)@${server.sha}$`,
        ).exec(job?.uses ?? '');
        expect(readFileSync(join(dir, file), 'utf8')).toContain(`@${server.sha} # v${version}\n`);
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
        `repository: alpasim-topo/alpasim-topo\n          ref: ${server.sha} # v${version}\n`,
      );
      for (const file of [...WORKFLOWS, '.github/workflows/pages.yml', 'topologies/clusters.yaml'])
        expect(readFileSync(join(dir, file), 'utf8'), file).not.toMatch(/npx (--yes |-y )?topo\b/);
      expect(r.stdout).not.toMatch(/npx (--yes |-y )?topo\b/);
      expect(r.stdout).toContain(
        `npx --yes github:alpasim-topo/alpasim-topo#${server.sha} doctor --cluster ord`,
      );
      expect(readFileSync(join(dir, 'topologies/clusters.yaml'), 'utf8')).toContain(
        `transport: ${transport}`,
      );
    },
  );

  it('refuses to overwrite, writing nothing, unless --force', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-setup-'));
    expect((await topo(['setup', '--ref', 'v1'], dir)).code).toBe(0);
    writeFileSync(join(dir, 'topologies/clusters.yaml'), '# mine\n');
    const again = await topo(['setup', '--ref', 'v1.2.3'], dir);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('not overwriting');
    expect(again.stderr).toContain('topologies/clusters.yaml');
    expect(readFileSync(join(dir, 'topologies/clusters.yaml'), 'utf8')).toBe('# mine\n');
    expect(readFileSync(join(dir, WORKFLOWS[0] as string), 'utf8')).toContain('@v1\n');
    const forced = await topo(['setup', '--ref', `v${version}`, '--sha', server.sha, '--force'], dir);
    expect(forced.code, forced.stderr).toBe(0);
    expect(readFileSync(join(dir, WORKFLOWS[0] as string), 'utf8')).toContain(
      `@${server.sha} # v${version}\n`,
    );
  });

  it('--sha beside a tag: refused when the tag names another commit or does not exist, with the way out; taken on trust offline, with a warning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-setup-'));
    // the tag names server.sha: the callers would say `# v1.0.0` beside another commit
    const other = await topo(['setup', '--ref', `v${version}`, '--sha', server.unpinned], dir);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(
      `v${version} of alpasim-topo/alpasim-topo is ${server.sha}, not ${server.unpinned}`,
    );
    expect(other.stderr).toContain(`--ref ${server.unpinned} to pin this commit without a tag comment`);
    expect(existsSync(join(dir, '.github'))).toBe(false);
    // no such tag (there is no release yet): the comment would name nothing
    const none = await topo(['setup', '--ref', 'v1.2.3', '--sha', server.sha], dir);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('has no tag v1.2.3');
    expect(none.stderr).toContain(`pass --ref ${server.sha} to pin the commit without a tag comment`);
    expect(existsSync(join(dir, '.github'))).toBe(false);
    // the honest spelling: the commit, no tag comment
    const commit = await topo(['setup', '--ref', server.sha], dir);
    expect(commit.code, commit.stderr).toBe(0);
    expect(readFileSync(join(dir, WORKFLOWS[0] as string), 'utf8')).toContain(`@${server.sha}\n`);
    // offline: written, each unchecked claim named in a warning with its way out
    const offline = await topo(['setup', '--sha', server.sha, '--force'], dir, {
      GITHUB_SERVER_URL: 'http://127.0.0.1:9',
    });
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stderr).toContain(
      `the callers say \`# v${version}\` beside ${server.sha} on trust; --ref ${server.sha} pins the commit without a tag comment`,
    );
  });

  it('--repo and --runner-label reach every caller; the self-hosted ones name the label', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-setup-'));
    const fork = serverWith('my-org/topo-fork');
    const sha = server.sha;
    const r = await topo(
      ['setup', '--repo', 'my-org/topo-fork', '--ref', sha, '--runner-label', 'gpu-login'],
      dir,
      { GITHUB_SERVER_URL: fork },
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
    const r = await topo(['setup', '--transport', 'ssh', '--ref', 'v1'], dir);
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

  it('pins a full SHA by default, says which; --ref v1 follows the moving tag; no tag yet is exit 2 with the way out', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-setup-'));
    const r = await topo(['setup', '--json'], dir);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(cliSchemaErrors('setup', doc)).toEqual([]);
    expect(doc).toMatchObject({
      ref: `v${version}`,
      sha: server.sha,
      repository: 'alpasim-topo/alpasim-topo',
    });
    const monitor = readFileSync(join(dir, '.github/workflows/topology-monitor.yml'), 'utf8');
    expect(monitor).toContain(`reusable-monitor.yml@${server.sha} # v${version}\n`);
    expect(monitor).toContain('Pinned by full SHA');
    const moving = mkdtempSync(join(tmpdir(), 'topo-setup-'));
    const v1 = await topo(['setup', '--ref', 'v1'], moving);
    expect(v1.code).toBe(0);
    expect(v1.stdout).toContain('following the moving tag v1');
    expect(readFileSync(join(moving, '.github/workflows/topology-monitor.yml'), 'utf8')).toContain(
      'reusable-monitor.yml@v1\n',
    );
    const untagged = gitServer([]);
    const none = await topo(['setup'], mkdtempSync(join(tmpdir(), 'topo-setup-')), {
      GITHUB_SERVER_URL: untagged.url,
    });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`has no tag v${version} yet`);
    expect(none.stderr).toContain('docs/adopting.md');
    const down = await topo(['setup'], mkdtempSync(join(tmpdir(), 'topo-setup-')), {
      GITHUB_SERVER_URL: 'file:///no/such/server',
    });
    expect(down.code).toBe(3);
    expect(down.stderr).toContain('pass --sha');
  });

  it('refuses a commit whose reusable workflows run actions at a moving tag, with the way out, writing nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-setup-'));
    const r = await topo(['setup', '--ref', server.unpinned], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /\.github\/workflows\/reusable-submit\.yml:\d+: alpasim-topo\/alpasim-topo\/actions\/submit@v1\n/,
    );
    expect(r.stderr).toContain('Pin a release tag instead');
    expect(r.stderr).toContain('--ref v1');
    expect(existsSync(join(dir, '.github'))).toBe(false);
    // a SHA the server does not have is a mistake named as such
    const unknown = await topo(['setup', '--ref', 'f'.repeat(40)], dir);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(`has no commit ${'f'.repeat(40)}`);
    // a server that cannot be reached: written, with a warning that doctor checks it
    const offline = await topo(['setup', '--sha', server.sha], dir, {
      GITHUB_SERVER_URL: 'http://127.0.0.1:9',
    });
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stderr).toMatch(/warning: could not check that .* pins its actions .*topo doctor/);
  });

  it('leaves grafana_url out (optional): doctor skips it instead of failing on a placeholder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-setup-'));
    expect((await topo(['setup', '--ref', 'v1'], dir)).code).toBe(0);
    const text = readFileSync(join(dir, 'topologies/clusters.yaml'), 'utf8');
    const cluster = parse(text).clusters.mycluster;
    expect(cluster.grafana_url).toBeUndefined();
    expect(text).toMatch(/# grafana_url: .*optional/);
    expect((await checkGrafana(cluster)).status).toBe('skip');
  });

  it("the monitor's contents: write is what the reusable workflow asks, and the README's table says so and why", () => {
    const reusable = parse(readFileSync(join(repoRoot, '.github/workflows/reusable-monitor.yml'), 'utf8'));
    expect(reusable.jobs.monitor.permissions.contents).toBe('write');
    const row = readFileSync(join(repoRoot, 'README.md'), 'utf8')
      .split('\n')
      .find((l) => l.startsWith('| `topology-monitor.yml`'));
    expect(row).toContain('`contents: write`');
    expect(row).not.toContain('`contents: read`');
    const github = readFileSync(join(repoRoot, 'docs/github.md'), 'utf8')
      .split('\n')
      .find((l) => l.startsWith('| `topology-monitor.yml`'));
    expect(github).toContain('`contents: write`');
  });

  it("docs/adopting.md's fork steps give a tree the release script pins whole, and setup pins the fork's tag", async () => {
    const fork = mkdtempSync(join(tmpdir(), 'topo-fork-'));
    cpSync(join(repoRoot, 'package.json'), join(fork, 'package.json'));
    cpSync(join(repoRoot, '.github/workflows'), join(fork, '.github/workflows'), { recursive: true });
    // the two commands of the page, run as written (the clone, commit and release are the script's own)
    const doc = readFileSync(join(repoRoot, 'docs/adopting.md'), 'utf8');
    const steps = doc.split('\n').filter((l) => l.startsWith('npm pkg set ') || l.startsWith('sed -i '));
    expect(steps).toHaveLength(2);
    for (const step of steps) execFileSync('bash', ['-c', step], { cwd: fork });
    const pkg = JSON.parse(readFileSync(join(fork, 'package.json'), 'utf8'));
    expect(releaseScript.repositoryOf(pkg)).toBe('my-org/alpasim-topo');
    const sha = 'c'.repeat(40);
    for (const name of ['validate', 'submit', 'monitor', 'record']) {
      const text = readFileSync(join(fork, `.github/workflows/reusable-${name}.yml`), 'utf8');
      const pinned = releaseScript.pinToSha(text, 'my-org/alpasim-topo', sha, 'v1.0.0');
      expect(releaseScript.unpinnedUses(pinned), name).toEqual([]);
      expect(pinned).toContain(`my-org/alpasim-topo/actions/${name}@${sha} # v1.0.0`);
    }
    const forkServer = serverWith('my-org/alpasim-topo');
    const dir = mkdtempSync(join(tmpdir(), 'topo-setup-'));
    const r = await topo(['setup', '--repo', 'my-org/alpasim-topo', '--ref', 'v1.0.0'], dir, {
      GITHUB_SERVER_URL: forkServer,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(dir, '.github/workflows/topology-submit.yml'), 'utf8')).toContain(
      `my-org/alpasim-topo/.github/workflows/reusable-submit.yml@${server.sha} # v1.0.0\n`,
    );
  });
});
