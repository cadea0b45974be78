// `topo doctor` against the local cluster (Slurm locally and over SSH with the pinned host key,
// Prometheus), a Grafana stand-in, and the local GitHub API: every check of a good setup passes, and
// accounting, which the shared cluster runs without, warns (the adoption test passes it on a private
// cluster with accounting, fails with slurmctld killed and warns with accounting off); each
// misconfiguration fails with its fix, and DNS, TLS, auth and permission failures are told apart.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { CliIO } from '../../../src/cli/command.js';
import { main } from '../../../src/cli/main.js';
import type { Repo } from '../../../src/github-local/index.js';
import { runTopo } from '../../support/cli.js';
import { cliSchemaErrors } from '../../support/cli-schemas.js';
import { requireCluster } from '../../support/cluster.js';
import { useLocalGitHub } from '../../support/local-github.js';

const cluster = requireCluster();
const { gh: github } = useLocalGitHub();
let grafana: Server;
let grafanaUrl = '';
let repo: Repo;
let tls: Server;
let tlsUrl = '';

interface Check {
  name: string;
  status: string;
  detail: string;
  fix?: string;
}

async function doctor(dir: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const { code, stdout, stderr } = await runTopo(['doctor', '--json', ...extra], dir, {
    TOPO_SSH_KEY_FILE: cluster.sshKeyPath,
    SLURM_CONF: cluster.slurmConf,
    GITHUB_API_URL: github.url,
    ...env,
  });
  const doc = stdout ? JSON.parse(stdout) : undefined;
  if (doc) expect(cliSchemaErrors(doc.error ? 'error' : 'doctor', doc)).toEqual([]);
  const byName = (name: string) => (doc?.checks as Check[] | undefined)?.find((c) => c.name === name);
  return { code, doc, stderr, byName };
}

/** A repository checkout after `topo setup`, with the local cluster's clusters.yaml, edited by `edit`. */
async function setupRepo(edit: (clusters: Record<string, Record<string, unknown>>) => void = () => {}) {
  const dir = mkdtempSync(join(tmpdir(), 'topo-doctor-'));
  const io: CliIO = { stdout: () => {}, stderr: () => {}, cwd: dir, env: {}, isTTY: false };
  expect(await main(['setup', '--ref', 'v1'], io)).toBe(0);
  const doc = parse(readFileSync(cluster.clustersFile, 'utf8'));
  for (const c of Object.values(doc.clusters) as Record<string, unknown>[]) c.grafana_url = grafanaUrl;
  edit(doc.clusters);
  writeFileSync(join(dir, 'topologies/clusters.yaml'), stringify(doc));
  return dir;
}

beforeAll(async () => {
  repo = github.createRepo('lab/topologies', { defaultBranch: 'main', files: { 'README.md': 'x\n' } });
  github.state.runners.set(repo.id, [
    { id: 1, name: 'login-1', status: 'online', labels: ['self-hosted', 'Linux', 'slurm'] },
  ]);
  grafana = createServer((req, res) => {
    res.writeHead(req.url === '/api/health' ? 200 : 404, { 'content-type': 'application/json' });
    res.end('{"database":"ok"}');
  });
  await new Promise<void>((r) => grafana.listen(0, '127.0.0.1', r));
  grafanaUrl = `http://127.0.0.1:${(grafana.address() as AddressInfo).port}`;
  // An HTTPS server with a self-signed certificate: what a TLS-inspecting proxy looks like.
  const certDir = mkdtempSync(join(tmpdir(), 'topo-doctor-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-keyout',
      join(certDir, 'key.pem'),
      '-out',
      join(certDir, 'cert.pem'),
    ],
    { stdio: 'pipe' },
  );
  tls = createTlsServer(
    { key: readFileSync(join(certDir, 'key.pem')), cert: readFileSync(join(certDir, 'cert.pem')) },
    (_req, res) => res.end('{}'),
  );
  await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
  tlsUrl = `https://127.0.0.1:${(tls.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => grafana?.close(r));
  await new Promise((r) => tls?.close(r));
});

describe('topo doctor', () => {
  it("reads the repository's fork approval and where the SSH key lives, and warns with the exact setting", async () => {
    const dir = await setupRepo();
    const owner = github.createToken('olga', { kind: 'user' });
    github.addCollaborator(repo, 'olga', 'admin');
    const run = async (token = owner) =>
      doctor(dir, ['--cluster', 'local-ssh', '--repo', 'lab/topologies'], { GITHUB_TOKEN: token });
    repo.actions = {
      forkApproval: 'first_time_contributors',
      secrets: ['TOPO_SSH_PRIVATE_KEY'],
      environments: new Map([['slurm', { secrets: [], defaultBranchOnly: false }]]),
    };
    const weak = await run();
    expect(weak.byName('fork pull requests')).toMatchObject({ status: 'warn' });
    expect(weak.byName('fork pull requests')?.fix).toContain(
      '"Require approval for all external contributors"',
    );
    const key = weak.byName('ssh key secret');
    expect(key?.status).toBe('warn');
    expect(key?.detail).toContain('the environment slurm has no secret TOPO_SSH_PRIVATE_KEY');
    expect(key?.detail).toContain('TOPO_SSH_PRIVATE_KEY is a repository secret');
    expect(key?.detail).toContain('accepts deployments from every branch');
    // warnings never fail doctor on their own
    expect((weak.doc.checks as Check[]).filter((c) => c.status === 'fail').map((c) => c.name)).toEqual([]);
    expect(weak.code).toBe(0);

    repo.actions = {
      forkApproval: 'all_external_contributors',
      secrets: [],
      environments: new Map([['slurm', { secrets: ['TOPO_SSH_PRIVATE_KEY'], defaultBranchOnly: true }]]),
    };
    const good = await run();
    expect(good.byName('fork pull requests')?.status).toBe('ok');
    expect(good.byName('ssh key secret')?.status).toBe('ok');
    const local = await doctor(dir, ['--cluster', 'local', '--repo', 'lab/topologies'], {
      GITHUB_TOKEN: owner,
    });
    expect(local.byName('ssh key secret'), 'transport local needs no key').toBeUndefined();

    // A token that may not read the settings: a warning that names the setting, never a pass.
    const writer = github.createToken('wanda', { kind: 'user' });
    github.addCollaborator(repo, 'wanda', 'write');
    const blind = await run(writer);
    expect(blind.byName('fork pull requests')).toMatchObject({ status: 'warn' });
    expect(blind.byName('fork pull requests')?.detail).toContain('the token cannot read');
    expect(blind.byName('fork pull requests')?.fix).toContain('Settings → Actions → General');
    expect(blind.byName('ssh key secret')?.status).toBe('warn');
    expect(blind.byName('ssh key secret')?.fix).toContain('Settings → Environments → slurm');
    repo.actions = undefined;
  });

  it('on a good setup without accounting, every check passes and accounting warns, locally and over SSH', async () => {
    const dir = await setupRepo();
    const admin = github.createToken('alice', { kind: 'user' });
    github.addCollaborator(repo, 'alice', 'admin');
    for (const name of ['local', 'local-ssh']) {
      const r = await doctor(dir, ['--cluster', name, '--repo', 'lab/topologies'], { GITHUB_TOKEN: admin });
      const failed = (r.doc.checks as Check[]).filter((c) => c.status === 'fail');
      expect(
        failed.map((c) => c.name),
        JSON.stringify(failed),
      ).toEqual([]);
      // The tool works through the controller without accounting: a warning, never a failure.
      // (the check's own words in the message: a CI run once read `ok` here, once, from a sacct that answered)
      expect(
        r.byName('slurm accounting')?.status,
        `${name}: ${JSON.stringify(r.byName('slurm accounting'))}`,
      ).toBe('warn');
      expect(r.byName('slurm accounting')?.detail).toContain('job accounting is disabled');
      expect(r.byName('slurm accounting')?.detail).toContain('read from the controller');
      expect(r.byName('slurm accounting')?.fix).toContain('MinJobAge');
      expect(r.code).toBe(0);
      for (const c of [
        'clusters.yaml placeholders',
        'slurm sbatch',
        'slurm squeue',
        'slurm sacct',
        'slurm scancel',
        'slurm controller',
        'slurm partition',
        'submit script',
        'prometheus',
        'recording rules',
        'grafana',
        'github token',
        'runner',
      ])
        expect(r.byName(c)?.status, `${name}: ${c}`).toBe('ok');
      expect(r.byName('slurm partition')?.detail).toMatch(/^gpu: 3 (idle|mix|alloc)/);
    }
  });

  it('fails on every value topo setup left to replace, at its line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-doctor-'));
    expect(
      (await runTopo(['setup', '--cluster', 'ord', '--transport', 'ssh', '--ref', 'v1'], dir)).code,
    ).toBe(0);
    const r = await doctor(dir, ['--cluster', 'ord']);
    expect(r.code).toBe(1);
    const check = r.byName('clusters.yaml placeholders');
    expect(check?.status).toBe('fail');
    for (const key of ['host', 'known_host_key', 'alpasim_checkout', 'prometheus_url', 'slurm.account'])
      expect(check?.detail).toMatch(
        new RegExp(`clusters\\.ord\\.${key.replace('.', '\\.')} \\(line \\d+\\)`),
      );
  });

  it('tells DNS, TLS, auth, permission and not-found apart (never "HTTP 500")', async () => {
    const dir = await setupRepo((c) => {
      (c.local as Record<string, unknown>).prometheus_url = 'http://prometheus.no-such-host.invalid:9090';
      (c.local as Record<string, unknown>).grafana_url = tlsUrl;
    });
    const admin = github.createToken('dora', { kind: 'user' });
    github.addCollaborator(repo, 'dora', 'admin');
    const run = (env: NodeJS.ProcessEnv, repoName = 'lab/topologies') =>
      doctor(dir, ['--cluster', 'local', '--repo', repoName], { GITHUB_TOKEN: admin, ...env });
    const dns = await run({ GITHUB_API_URL: 'http://api.no-such-host.invalid' });
    expect(dns.byName('github token')?.detail).toContain('the host name does not resolve (DNS) [ENOTFOUND]');
    expect(dns.byName('github token')?.detail).not.toContain('500');
    expect(dns.byName('github token')?.fix).toContain('cannot resolve api.no-such-host.invalid');
    expect(dns.byName('prometheus')?.detail).toContain('(DNS) [ENOTFOUND]');
    expect(dns.byName('grafana')?.detail).toContain('the TLS certificate is not trusted');
    expect(dns.byName('grafana')?.fix).toContain('NODE_EXTRA_CA_CERTS');
    const viaTls = await run({ GITHUB_API_URL: tlsUrl });
    expect(viaTls.byName('github token')?.detail).toContain('the TLS certificate is not trusted');
    const auth = await run({ GITHUB_TOKEN: 'ghp_nope' });
    expect(auth.byName('github token')?.detail).toContain('the credentials were refused (HTTP 401)');
    expect(auth.byName('github token')?.fix).toContain('invalid or expired');
    const noContents = github.createToken('app', { permissions: { metadata: 'none' } });
    const permission = await run({ GITHUB_TOKEN: noContents });
    expect(permission.byName('github token')?.detail).toContain('not allowed (HTTP 403)');
    expect(permission.byName('github token')?.fix).toContain('Contents: read');
    const missing = await run({}, 'lab/no-such-repo');
    expect(missing.byName('github token')?.detail).toContain('not found (HTTP 404)');
    expect(missing.byName('github token')?.fix).toContain('does not exist or the token cannot see it');
  });

  it('a changed host key fails with the ssh-keyscan fix', async () => {
    const dir = await setupRepo((c) => {
      (c['local-ssh'] as Record<string, unknown>).known_host_key =
        'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPLACEHOLDERPLACEHOLDERPLACEHOLDERPLACEHOLDE';
    });
    const r = await doctor(dir, ['--cluster', 'local-ssh']);
    expect(r.code).toBe(1);
    expect(r.byName('slurm')?.status).toBe('fail');
    expect(r.byName('slurm')?.fix).toContain('ssh-keyscan -t ed25519 -p');
  });

  it('a missing submit script, Prometheus and Grafana down each fail with a fix', async () => {
    const dir = await setupRepo((c) => {
      const local = c.local as Record<string, unknown>;
      local.submit_script = 'no/such/submit.sh';
      local.prometheus_url = 'http://127.0.0.1:9';
      local.grafana_url = 'http://127.0.0.1:9';
    });
    const r = await doctor(dir, ['--cluster', 'local']);
    expect(r.code).toBe(1);
    expect(r.byName('slurm squeue')?.status).toBe('ok');
    expect(r.byName('submit script')).toMatchObject({ status: 'fail' });
    expect(r.byName('submit script')?.fix).toContain('submit_script');
    expect(r.byName('prometheus')).toMatchObject({ status: 'fail' });
    expect(r.byName('prometheus')?.detail).toContain('cannot reach Prometheus at http://127.0.0.1:9');
    expect(r.byName('grafana')?.status).toBe('fail');
    expect(r.byName('grafana')?.fix).toContain('grafana_url');
  });

  it("Slurm's commands missing from PATH each fail with the PATH fix", async () => {
    const dir = await setupRepo();
    const bin = mkdtempSync(join(tmpdir(), 'topo-doctor-bin-'));
    symlinkSync('/usr/bin/test', join(bin, 'test'));
    // The runner account's PATH (the CLI's environment; Slurm commands see only its allowlist).
    const path = process.env.PATH;
    process.env.PATH = bin;
    try {
      const r = await doctor(dir, ['--cluster', 'local'], { PATH: bin });
      expect(r.code).toBe(1);
      for (const c of ['sbatch', 'squeue', 'sacct', 'scancel']) {
        expect(r.byName(`slurm ${c}`)?.status).toBe('fail');
        expect(r.byName(`slurm ${c}`)?.fix).toContain(
          "put Slurm's commands on PATH for the runner's account",
        );
      }
      expect(r.byName('submit script')?.status).toBe('ok');
    } finally {
      process.env.PATH = path;
    }
  });

  it('a workflow without the permissions its job needs fails', async () => {
    const dir = await setupRepo();
    const file = join(dir, '.github/workflows/topology-submit.yml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('      checks: write\n', ''));
    const r = await doctor(dir, ['--cluster', 'local']);
    expect(r.byName('workflow topology-submit.yml')).toMatchObject({ status: 'fail' });
    expect(r.byName('workflow topology-submit.yml')?.detail).toContain('job submit: checks: write');
    expect(r.byName('workflow topology-validate.yml')?.status).toBe('ok');
  });

  it('the monitor workflow needs issues: write (the dashboard) and contents: write (bot branches)', async () => {
    const dir = await setupRepo();
    const file = join(dir, '.github/workflows/topology-monitor.yml');
    const text = readFileSync(file, 'utf8');
    expect(text).toMatch(/contents: write/);
    writeFileSync(
      file,
      text.replace('      issues: write\n', '').replace(/contents: write[^\n]*/, 'contents: read'),
    );
    const r = await doctor(dir, ['--cluster', 'local']);
    expect(r.byName('workflow topology-monitor.yml')).toMatchObject({ status: 'fail' });
    expect(r.byName('workflow topology-monitor.yml')?.detail).toContain(
      'job monitor: contents: write, job monitor: issues: write',
    );
  });

  it('a read-only token, an invalid token, and no runner with the label each fail', async () => {
    const dir = await setupRepo();
    const reader = github.createToken('bob', { kind: 'user' });
    github.addCollaborator(repo, 'bob', 'read');
    const r = await doctor(dir, ['--cluster', 'local', '--repo', 'lab/topologies'], { GITHUB_TOKEN: reader });
    expect(r.byName('github token')).toMatchObject({ status: 'fail' });
    expect(r.byName('github token')?.detail).toContain('bob has only read');
    expect(r.byName('runner')?.status).toBe('skip');
    const bad = await doctor(dir, ['--cluster', 'local', '--repo', 'lab/topologies'], {
      GITHUB_TOKEN: 'ghp_nope',
    });
    expect(bad.byName('github token')?.detail).toContain('HTTP 401');
    const admin = github.createToken('carol', { kind: 'user' });
    github.addCollaborator(repo, 'carol', 'admin');
    const other = await doctor(
      dir,
      ['--cluster', 'local', '--repo', 'lab/topologies', '--runner-label', 'gpu-login'],
      {
        GITHUB_TOKEN: admin,
      },
    );
    expect(other.byName('runner')?.status).toBe('fail');
    expect(other.byName('runner')?.detail).toContain('login-1 [self-hosted, Linux, slurm]');
    github.state.runners.set(repo.id, [
      { id: 1, name: 'login-1', status: 'offline', labels: ['self-hosted', 'slurm'] },
    ]);
    const offline = await doctor(dir, ['--cluster', 'local', '--repo', 'lab/topologies'], {
      GITHUB_TOKEN: admin,
    });
    expect(offline.byName('runner')?.detail).toContain('offline');
    // The invalid token is the only request the local API refused.
    expect(github.violations().filter((v) => !/: (unknown token|token lacks permission)/.test(v))).toEqual(
      [],
    );
  });

  it('no clusters file or an unknown cluster is a configuration error (2)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-doctor-'));
    expect((await doctor(dir)).code).toBe(2);
    mkdirSync(join(dir, 'topologies'));
    copyFileSync(cluster.clustersFile, join(dir, 'topologies/clusters.yaml'));
    const r = await doctor(dir, ['--cluster', 'nowhere']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no cluster "nowhere"');
  });
});
