// The adoption path as a new team walks it (issue 24), on one private local cluster with accounting:
// `topo setup` in an empty repository, the cluster described, `topo init` from a realistic AlpaSim
// command, `topo validate`, `topo doctor` green only while the cluster really works (it fails with
// slurmctld killed, when every Slurm command exits 3 on both transports, and with accounting off), and a release dry run whose tagged workflows name every
// action by a full commit SHA.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
// @ts-expect-error: a plain .mjs module without types
import * as releaseScript from '../../../scripts/release.mjs';
import { runTopo } from '../../support/cli.js';
import { cliSchemaErrors } from '../../support/cli-schemas.js';
import { repoRoot } from '../../support/cluster.js';
import { useLocalGitHub } from '../../support/local-github.js';
import { type PrivateCluster, startPrivateCluster } from '../../support/private-cluster.js';

const { gh: github } = useLocalGitHub();
const COMMAND =
  'sbatch --account=av_alpamayo_sim --gpus-per-node=8 src/tools/run-on-slurm/submit.sh deploy=local topology=8gpu_64rollouts driver=vavam';
let cluster: PrivateCluster;
let grafana: Server;
let grafanaUrl = '';
let dir = '';
let token = '';
const cleanup: string[] = [];

interface Check {
  name: string;
  status: string;
  detail: string;
  fix?: string;
}

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

async function doctor() {
  const r = await runTopo(['doctor', '--json', '--cluster', 'local', '--repo', 'lab/topologies'], dir, {
    SLURM_CONF: cluster.env.slurmConf,
    TOPO_SSH_KEY_FILE: cluster.env.sshKeyPath,
    GITHUB_API_URL: github.url,
    GITHUB_TOKEN: token,
  });
  const doc = JSON.parse(r.stdout);
  expect(cliSchemaErrors(doc.error ? 'error' : 'doctor', doc)).toEqual([]);
  const checks = doc.checks as Check[];
  return {
    code: r.code,
    failed: checks.filter((c) => c.status === 'fail'),
    byName: (name: string) => checks.find((c) => c.name === name),
  };
}

beforeAll(async () => {
  cluster = startPrivateCluster({ accounting: true });
  grafana = createServer((req, res) => {
    res.writeHead(req.url === '/api/health' ? 200 : 404, { 'content-type': 'application/json' });
    res.end('{"database":"ok"}');
  });
  await new Promise<void>((r) => grafana.listen(0, '127.0.0.1', r));
  grafanaUrl = `http://127.0.0.1:${(grafana.address() as AddressInfo).port}`;
  const repo = github.createRepo('lab/topologies', { defaultBranch: 'main', files: { 'README.md': 'x\n' } });
  github.state.runners.set(repo.id, [
    { id: 1, name: 'login-1', status: 'online', labels: ['self-hosted', 'Linux', 'slurm'] },
  ]);
  token = github.createToken('alice', { kind: 'user' });
  github.addCollaborator(repo, 'alice', 'admin');
}, 300_000);

afterAll(async () => {
  await new Promise((r) => grafana?.close(r));
  cluster?.stop();
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

describe('a team adopts alpasim-topo', () => {
  it('setup in an empty repository writes the callers and a clusters.yaml whose placeholders validate warns about', async () => {
    dir = mkdtempSync(join(tmpdir(), 'topo-adoption-'));
    cleanup.push(dir);
    git(dir, 'init', '-q');
    // pinned to a commit the team checked (offline: no tag lookup); the release below pins the tag's own
    const sha = git(repoRoot, 'rev-parse', 'HEAD');
    const setup = await runTopo(['setup', '--sha', sha], dir);
    expect(setup.code, setup.stderr).toBe(0);
    expect(readFileSync(join(dir, '.github/workflows/topology-submit.yml'), 'utf8')).toContain(`@${sha} # v`);
    expect(readdirSync(join(dir, '.github/workflows')).sort()).toEqual([
      'pages.yml',
      'topology-monitor.yml',
      'topology-record.yml',
      'topology-submit.yml',
      'topology-validate.yml',
    ]);
    const fresh = await runTopo(['validate', 'topologies/clusters.yaml'], dir);
    expect(fresh.code).toBe(0);
    expect(fresh.stdout + fresh.stderr).toMatch(
      /warning \[placeholder\] clusters\.mycluster\.slurm\.account/,
    );
  });

  it('with the cluster described, init from a realistic command and validate pass', async () => {
    // Step 2 of docs/adopting.md: the team writes its cluster (here the private local one).
    const described = parse(readFileSync(join(cluster.env.stateDir, 'clusters.yaml'), 'utf8'));
    described.clusters.local.grafana_url = grafanaUrl;
    delete described.clusters['local-ssh'];
    writeFileSync(join(dir, 'topologies/clusters.yaml'), stringify(described));
    const init = await runTopo(['init', '--command', COMMAND, '--date', '20261205'], dir);
    expect(init.code, init.stderr).toBe(0);
    const id = 'topology-opt-vavam-local-20261205';
    for (const f of [
      `topologies/${id}/experiment.yaml`,
      `topologies/${id}/baseline.yaml`,
      `experiments/${id}.json`,
    ])
      expect(readFileSync(join(dir, f), 'utf8').length, f).toBeGreaterThan(0);
    const validate = await runTopo(['validate', 'topologies'], dir);
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
    expect(validate.stdout + validate.stderr).toMatch(/0 error\(s\), 0 warning\(s\)/);
  });

  it('doctor is green while the cluster works, fails with slurmctld killed, and warns with accounting off', async () => {
    const green = await doctor();
    expect(green.failed, JSON.stringify(green.failed)).toEqual([]);
    expect(green.code).toBe(0);
    for (const c of [
      'slurm controller',
      'slurm partition',
      'slurm sacct',
      'slurm accounting',
      'github token',
      'runner',
    ])
      expect(green.byName(c)?.status, c).toBe('ok');

    cluster.killController();
    const killed = await doctor();
    expect(killed.code).toBe(1);
    expect(killed.byName('slurm controller')?.status).toBe('fail');
    // The CLI's contract with the controller down: exit 3 and an `unreachable` error document on
    // either transport (217b54c exited 1 with "`scontrol show config` failed").
    for (const name of ['local', 'local-ssh']) {
      const started = Date.now();
      const jobs = await runTopo(
        ['jobs', 'topology-opt-vavam-local-20261205', '--json', '--cluster', name],
        dir,
        {
          SLURM_CONF: cluster.env.slurmConf,
          TOPO_SSH_KEY_FILE: cluster.env.sshKeyPath,
          TOPO_CLUSTERS_FILE: join(cluster.env.stateDir, 'clusters.yaml'),
        },
      );
      expect(jobs.code, `${name}: ${jobs.stdout}${jobs.stderr}`).toBe(3);
      const doc = JSON.parse(jobs.stdout);
      expect(cliSchemaErrors('error', doc)).toEqual([]);
      expect(doc.error, name).toMatchObject({ kind: 'unreachable', exit_code: 3 });
      expect(doc.error.message, name).toMatch(/slurmctld/);
      // at once, from `scontrol ping` (issue 41: 12-14 s, as squeue and `scontrol show config` retry a
      // controller that refuses the connection for about MessageTimeout before they say so)
      expect(doc.error.message, name).toMatch(/Slurmctld\(primary\) at \S+ is DOWN/);
      expect(Date.now() - started, name).toBeLessThan(8_000);
    }

    cluster.up({ TOPO_CLUSTER_ACCOUNTING: 'off' });
    const noAccounting = await doctor();
    expect(noAccounting.code).toBe(0); // the tool works through the controller: a warning
    expect(noAccounting.byName('slurm controller')?.status).toBe('ok');
    expect(noAccounting.byName('slurm accounting')?.status).toBe('warn');
    expect(noAccounting.byName('slurm accounting')?.detail).toContain('job accounting is disabled');
    // "ok slurm sacct" says only that the command is installed, never that accounting works.
    expect(noAccounting.byName('slurm sacct')?.detail).toMatch(/^installed \(slurm-wlm [\d.]+\) on /);
  });

  it('a release dry run tags workflows that name every action by a full commit SHA', () => {
    // A clone of HEAD with node_modules hard-linked in (same file system: under test-artifacts/), so its
    // bundles build byte for byte as the committed ones and the release's freshness check holds.
    mkdirSync(join(repoRoot, 'test-artifacts'), { recursive: true });
    const clone = mkdtempSync(join(repoRoot, 'test-artifacts', 'adoption-release-'));
    cleanup.push(clone);
    git(repoRoot, 'clone', '-q', '--no-hardlinks', repoRoot, clone);
    git(clone, 'config', 'user.email', 'release@test');
    git(clone, 'config', 'user.name', 'release test');
    execFileSync('cp', ['-al', join(repoRoot, 'node_modules'), join(clone, 'node_modules')]);
    writeFileSync(join(clone, '.git/info/exclude'), 'node_modules\n');
    // The first tag: package.json's version, whose CHANGELOG.md section exists.
    const version = JSON.parse(readFileSync(join(clone, 'package.json'), 'utf8')).version;
    const dry = releaseScript.release(clone, version, { dryRun: true, log: () => {} });
    cleanup.push(dry.dir);
    expect(git(clone, 'tag', '--list'), 'the dry run tags nothing in the repository').toBe('');
    const files = git(dry.dir, 'ls-tree', '--name-only', `v${version}:.github/workflows`).split('\n');
    let ownPins = 0;
    for (const f of files) {
      const text = git(dry.dir, 'show', `v${version}:.github/workflows/${f}`);
      for (const m of text.matchAll(/^\s*(?:-\s+)?uses:\s*["']?([^\s"'#]+)/gm)) {
        const uses = m[1] as string;
        if (uses.startsWith('./')) continue;
        expect(uses, `${f}: ${uses}`).toMatch(/@[0-9a-f]{40}$/);
        if (uses.startsWith('alpasim-topo/alpasim-topo/actions/')) {
          expect(uses.endsWith(`@${dry.releaseSha}`), `${f}: ${uses}`).toBe(true);
          ownPins++;
        }
      }
    }
    expect(ownPins).toBe(5);
  });
});
