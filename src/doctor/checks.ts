// `topo doctor`: checks a real setup from the runner host, one check per thing that must work before
// the first candidate, each failure with the fix. The checks take their services as arguments
// (a transport, a Prometheus client, an octokit, fetch), so the command wires real ones and tests
// point them at a local cluster and the local GitHub API. A check is green only when the thing
// really works: the controller answers, the partition has usable nodes, sacct returns history.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { Octokit } from '../github/client.js';
import { HostKeyMismatchError, SlurmError } from '../slurm/errors.js';
import type { CommandResult, Transport } from '../slurm/types.js';
import type { PrometheusClient } from '../telemetry/prometheus.js';
import { placeholderIssues } from '../topology/placeholders.js';
import type { LoadedYaml } from '../topology/yaml.js';
import type { Cluster } from '../types/generated/clusters.js';
import { classifyRequestError, describeFailure, networkFix } from './network.js';

export interface Check {
  name: string;
  status: 'ok' | 'fail' | 'warn' | 'skip';
  detail: string;
  /** What to do about it (failures and warnings). */
  fix?: string;
}

const ok = (name: string, detail: string): Check => ({ name, status: 'ok', detail });
const fail = (name: string, detail: string, fix: string): Check => ({ name, status: 'fail', detail, fix });
const skip = (name: string, detail: string): Check => ({ name, status: 'skip', detail });

const SLURM_COMMANDS = ['sbatch', 'squeue', 'sacct', 'scancel'] as const;
const TIMEOUT = { timeoutMs: 20_000 };

/**
 * Runs a command; one that is not installed comes back as a result (exit 127 with the message) so
 * its check fails on its own, while a broken connection still ends every check.
 */
async function run(t: Transport, argv: string[]): Promise<CommandResult> {
  try {
    return await t.run(argv, TIMEOUT);
  } catch (error) {
    if (!/not installed or not on PATH/.test((error as Error).message)) throw error;
    return { code: 127, stdout: '', stderr: (error as Error).message };
  }
}

/** What a command printed, in one line for a check's detail. */
const said = (r: CommandResult) => (r.stderr || r.stdout).trim().replace(/\s+/g, ' ').slice(0, 300);

/** Values `topo setup` left to replace in the cluster's entry: a cluster cannot work with them. */
export function checkPlaceholders(loaded: LoadedYaml, clusterName: string): Check {
  const left = placeholderIssues(loaded, ['clusters', clusterName], 'error');
  return left.length
    ? fail(
        'clusters.yaml placeholders',
        `${left.length} value(s) of cluster ${clusterName} still hold what topo setup left to replace: ${left.map((i) => `${i.keyPath} (line ${i.line})`).join(', ')}`,
        "replace them with your cluster's values (docs/adopting.md, step 2); `topo validate topologies/clusters.yaml` shows each one at its line",
      )
    : ok('clusters.yaml placeholders', `no TODO, example.org or PLACEHOLDER left in cluster ${clusterName}`);
}

/** Slurm's commands, the controller, the partition, accounting and the submit script. */
export async function checkSlurm(
  clusterName: string,
  cluster: Cluster,
  transport: () => Transport,
): Promise<Check[]> {
  const where =
    cluster.transport === 'ssh' ? `${cluster.user}@${cluster.host}:${cluster.port ?? 22}` : 'this host';
  let t: Transport;
  try {
    t = transport();
  } catch (error) {
    return [
      fail(
        'slurm',
        (error as Error).message,
        'set TOPO_SSH_KEY (the key text) or TOPO_SSH_KEY_FILE (a path) on the runner host',
      ),
    ];
  }
  const checks: Check[] = [];
  try {
    checks.push(...(await commandChecks(t, clusterName, cluster, where)));
    const controller = await controllerCheck(t, where);
    checks.push(controller);
    checks.push(
      controller.status === 'ok'
        ? await partitionCheck(t, cluster, where)
        : skip('slurm partition', 'not asked: slurmctld does not answer'),
    );
    checks.push(await accountingCheck(t, where));
    checks.push(await submitScriptCheck(t, clusterName, cluster, where));
  } catch (error) {
    checks.push(slurmFailure(cluster, where, error));
  } finally {
    await t.close().catch(() => {});
  }
  return checks;
}

/** Slurm's four commands are installed (`--version`). */
async function commandChecks(
  t: Transport,
  clusterName: string,
  cluster: Cluster,
  where: string,
): Promise<Check[]> {
  const pathFix =
    cluster.transport === 'local'
      ? `put Slurm's commands on PATH for the runner's account (cluster ${clusterName} uses transport local: the runner must sit on a login node)`
      : `put Slurm's commands on PATH for ${cluster.user} on ${cluster.host} (non-interactive shells too)`;
  const checks: Check[] = [];
  for (const command of SLURM_COMMANDS) {
    let r: CommandResult;
    try {
      r = await t.run([command, '--version'], TIMEOUT);
    } catch (error) {
      // A command that is not installed is this check's failure; a broken connection ends them all.
      if (!/not installed or not on PATH/.test((error as Error).message)) throw error;
      checks.push(fail(`slurm ${command}`, (error as Error).message, pathFix));
      continue;
    }
    checks.push(
      r.code === 0
        ? ok(
            `slurm ${command}`,
            // Installed only: whether slurmctld and accounting answer are the checks after these.
            `installed (${(r.stdout || r.stderr).trim().split('\n')[0]}) on ${where}`,
          )
        : fail(
            `slurm ${command}`,
            `\`${command} --version\` exited ${r.code} on ${where}: ${said(r)}`,
            pathFix,
          ),
    );
  }
  return checks;
}

/** slurmctld answers (`scontrol ping`): `--version` alone answers without a controller. */
async function controllerCheck(t: Transport, where: string): Promise<Check> {
  const r = await run(t, ['scontrol', 'ping']);
  if (r.code === 0 && /\bUP\b/.test(r.stdout))
    return ok('slurm controller', `${r.stdout.trim().split('\n')[0]} (scontrol ping on ${where})`);
  return fail(
    'slurm controller',
    `slurmctld does not answer from ${where}: \`scontrol ping\` exited ${r.code}: ${said(r)}`,
    `nothing can be submitted or watched until it does: start slurmctld, or check that ${where} reaches SlurmctldHost and SlurmctldPort of the slurm.conf it reads (SLURM_CONF); on a shared cluster, ask its admins`,
  );
}

/** The partition candidates run in exists, is up and has usable nodes (`sinfo`). */
async function partitionCheck(t: Transport, cluster: Cluster, where: string): Promise<Check> {
  const wanted = cluster.slurm?.partition?.split(',').filter(Boolean) ?? [];
  // every partition, so a wrong name is answered with the ones that exist
  const r = await run(t, ['sinfo', '--noheader', '--format=%P|%a|%D|%t']);
  if (r.code !== 0)
    return fail('slurm partition', `\`sinfo\` exited ${r.code} on ${where}: ${said(r)}`, 'see the message');
  const rows = r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [name = '', avail = '', nodes = '0', state = ''] = line.split('|');
      return {
        name: name.replace(/\*$/, ''),
        isDefault: name.endsWith('*'),
        avail,
        nodes: Number(nodes),
        state,
      };
    });
  const names = wanted.length
    ? wanted
    : rows
        .filter((x) => x.isDefault)
        .map((x) => x.name)
        .slice(0, 1);
  if (names.length === 0)
    return fail(
      'slurm partition',
      `no partition given and sinfo on ${where} shows no default one`,
      'set slurm.partition of the cluster in clusters.yaml',
    );
  const usable = /^(idle|mix|alloc|allocated|comp|completing|resv|planned)/;
  for (const name of names) {
    const mine = rows.filter((x) => x.name === name);
    if (mine.length === 0)
      return fail(
        'slurm partition',
        `partition ${name} does not exist on ${where} (sinfo lists: ${[...new Set(rows.map((x) => x.name))].join(', ') || 'none'})`,
        `fix slurm.partition of the cluster in clusters.yaml`,
      );
    if (mine.every((x) => x.avail !== 'up'))
      return fail(
        'slurm partition',
        `partition ${name} is ${mine[0]?.avail} on ${where}`,
        'a partition that is not up starts no job: ask the cluster admins',
      );
    const up = mine.filter((x) => usable.test(x.state)).reduce((n, x) => n + x.nodes, 0);
    if (up === 0)
      return fail(
        'slurm partition',
        `partition ${name} has no usable node on ${where} (${mine.map((x) => `${x.nodes} ${x.state}`).join(', ')})`,
        'resume or repair its nodes (scontrol update nodename=… state=resume), or ask the cluster admins',
      );
  }
  const summary = rows.filter((x) => names.includes(x.name)).map((x) => `${x.name}: ${x.nodes} ${x.state}`);
  return ok('slurm partition', `${summary.join(', ')} (sinfo on ${where})`);
}

/** Accounting answers a real `sacct` query: without it finished jobs vanish after MinJobAge. */
async function accountingCheck(t: Transport, where: string): Promise<Check> {
  const r = await run(t, [
    'sacct',
    '--noheader',
    '--parsable2',
    '--allocations',
    '--starttime=now-1days',
    '--format=JobID,State',
  ]);
  if (r.code === 0) {
    const jobs = r.stdout.trim().split('\n').filter(Boolean).length;
    return ok(
      'slurm accounting',
      `sacct answered on ${where}: ${jobs} job(s) of this account in the last day`,
    );
  }
  const text = said(r);
  const consequence =
    'the monitor then sees a finished job only while slurmctld keeps it (MinJobAge, 300 s by default) and may record it lost';
  // Without accounting the tool lists jobs through the controller alone: it works, with a shorter memory.
  if (/accounting storage is disabled/i.test(text))
    return {
      name: 'slurm accounting',
      status: 'warn',
      detail: `job accounting is disabled on ${where} (AccountingStorageType=accounting_storage/none): jobs are read from the controller (squeue) alone, which forgets an ended job after MinJobAge`,
      fix: `enable accounting (slurmdbd) or ask the cluster admins if runs may outlive MinJobAge unwatched: ${consequence}`,
    };
  if (/Connection refused|Problem talking to the database|persistent connection|slurmdbd/i.test(text))
    return fail(
      'slurm accounting',
      `sacct cannot reach the accounting daemon (slurmdbd) from ${where}: ${text}`,
      `start slurmdbd or check AccountingStorageHost/Port; ${consequence}`,
    );
  return fail(
    'slurm accounting',
    `\`sacct\` exited ${r.code} on ${where}: ${text}`,
    `see the message; ${consequence}`,
  );
}

async function submitScriptCheck(
  t: Transport,
  clusterName: string,
  cluster: Cluster,
  where: string,
): Promise<Check> {
  const script = `${cluster.alpasim_checkout.replace(/\/+$/, '')}/${cluster.submit_script}`;
  const test = await run(t, ['test', '-f', script]);
  return test.code === 0
    ? ok('submit script', `${script} exists on ${where}`)
    : fail(
        'submit script',
        `${script} is not a file on ${where}`,
        `set alpasim_checkout (AlpaSim's checkout) and submit_script (relative to it) in clusters.yaml for cluster ${clusterName}`,
      );
}

function slurmFailure(cluster: Cluster, where: string, error: unknown): Check {
  const message = (error as Error).message;
  if (error instanceof HostKeyMismatchError)
    return fail(
      'slurm',
      message,
      `the login node's host key is not the pinned known_host_key: if it changed legitimately, replace known_host_key with the output of \`ssh-keyscan -t ${cluster.known_host_key?.split(' ')[0]?.replace('ssh-', '') ?? 'ed25519'} -p ${cluster.port ?? 22} ${cluster.host}\` (checked out of band); otherwise do not connect`,
    );
  if (error instanceof SlurmError)
    return fail(
      'slurm',
      message,
      cluster.transport === 'ssh'
        ? `check that this host reaches ${where} (host, port, user in clusters.yaml) and that the key in TOPO_SSH_KEY/TOPO_SSH_KEY_FILE is authorised for ${cluster.user}`
        : "check that Slurm's commands run for the runner's account on this host",
    );
  return fail('slurm', message, 'see the message; this is unexpected (please report it)');
}

const hostOf = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
};

/** Prometheus answers, scrapes AlpaSim (its series exist) and evaluates the shipped recording rules. */
export async function checkPrometheus(
  cluster: Cluster,
  prometheus: PrometheusClient,
  fetcher: typeof fetch = fetch,
): Promise<Check[]> {
  const url = cluster.prometheus_url;
  try {
    await prometheus.instant('vector(1)');
  } catch (error) {
    const f = classifyRequestError(error);
    return [
      fail(
        'prometheus',
        f.kind === 'unknown'
          ? (error as Error).message
          : describeFailure(`cannot reach Prometheus at ${url}`, f),
        networkFix(f, hostOf(url), 'prometheus_url in clusters.yaml') ??
          (f.kind === 'auth' || f.kind === 'permission'
            ? `Prometheus at ${url} wants credentials the runner does not send: give the runner a Prometheus it may query without them (or a proxy on the runner host)`
            : `start Prometheus where the runner reaches ${url} (scripts/start-prometheus-grafana.sh), or fix prometheus_url in clusters.yaml`),
      ),
    ];
  }
  const checks: Check[] = [ok('prometheus', `${url} answers`)];
  const series = await prometheus.instant(
    'count by (__name__) (last_over_time({__name__=~"alpasim_.+"}[7d]))',
  );
  checks.push(
    series.series.length > 0
      ? ok('alpasim series', `${series.series.length} AlpaSim metric(s) in the last 7 days`)
      : {
          name: 'alpasim series',
          status: 'warn',
          detail: `no AlpaSim metric (alpasim_*) at ${url} in the last 7 days`,
          fix: `Prometheus must scrape the compute nodes: add ${cluster.file_sd} to its file_sd_configs (scripts/start-prometheus-grafana.sh does) and run a job; expected while no run has happened yet`,
        },
  );
  try {
    const res = await fetcher(`${url.replace(/\/+$/, '')}/api/v1/rules?type=record`);
    const body = (await res.json()) as { data?: { groups?: { rules?: { name?: string }[] }[] } };
    const names = (body.data?.groups ?? []).flatMap((g) => (g.rules ?? []).map((r) => r.name ?? ''));
    const ours = names.filter((n) => n.startsWith('alpasim:'));
    checks.push(
      ours.length > 0
        ? ok('recording rules', `${ours.length} alpasim:* recording rule(s) loaded`)
        : fail(
            'recording rules',
            `Prometheus at ${url} has no alpasim:* recording rule`,
            "load telemetry/prometheus/alpasim.rules.yml of this alpasim-topo version in Prometheus' rule_files (the queries fall back to raw metrics, slower)",
          ),
    );
  } catch (error) {
    checks.push(
      fail('recording rules', `cannot list the rules: ${(error as Error).message}`, 'check prometheus_url'),
    );
  }
  return checks;
}

/** The Grafana URL answers (its health endpoint). */
export async function checkGrafana(cluster: Cluster, fetcher: typeof fetch = fetch): Promise<Check> {
  if (!cluster.grafana_url)
    return skip('grafana', 'no grafana_url in clusters.yaml (comments carry no dashboard links)');
  const url = `${cluster.grafana_url.replace(/\/+$/, '')}/api/health`;
  try {
    const res = await fetcher(url, { signal: AbortSignal.timeout(10_000) });
    return res.ok
      ? ok('grafana', `${cluster.grafana_url} answers (${res.status})`)
      : fail(
          'grafana',
          `${url} answered HTTP ${res.status}`,
          'fix grafana_url in clusters.yaml or start Grafana',
        );
  } catch (error) {
    const f = classifyRequestError(error);
    return fail(
      'grafana',
      describeFailure(`cannot reach ${url}`, f),
      networkFix(f, hostOf(url), 'grafana_url in clusters.yaml') ??
        'start Grafana (scripts/start-prometheus-grafana.sh --grafana-port …) or fix grafana_url in clusters.yaml',
    );
  }
}

/** The permissions each caller workflow's job must grant (what the reusable workflows need). */
export const WORKFLOW_PERMISSIONS: Record<string, Record<string, string>> = {
  'topology-validate.yml': { checks: 'write', contents: 'read', 'pull-requests': 'read' },
  'topology-submit.yml': { contents: 'read', checks: 'write', issues: 'write', 'pull-requests': 'write' },
  // contents: write for the autopilot's bot branches; issues: write for its dashboard
  'topology-monitor.yml': { contents: 'write', checks: 'write', issues: 'write', 'pull-requests': 'write' },
  'topology-record.yml': { contents: 'write', 'pull-requests': 'write' },
};

/** The caller workflows of the repository grant the workflow token what each job needs. */
export function checkWorkflowPermissions(repoDir: string): Check[] {
  return Object.entries(WORKFLOW_PERMISSIONS).map(([file, need]) => {
    const path = join(repoDir, '.github/workflows', file);
    if (!existsSync(path))
      return fail(
        `workflow ${file}`,
        `${path} does not exist`,
        'run `topo setup` in the repository (then review and commit)',
      );
    let doc: { jobs?: Record<string, { permissions?: Record<string, string> }> };
    try {
      doc = parse(readFileSync(path, 'utf8'));
    } catch (error) {
      return fail(
        `workflow ${file}`,
        `not valid YAML: ${(error as Error).message}`,
        'run `topo setup --force` to rewrite it',
      );
    }
    const missing: string[] = [];
    for (const [job, spec] of Object.entries(doc.jobs ?? {})) {
      for (const [scope, level] of Object.entries(need)) {
        const have = spec.permissions?.[scope];
        if (have !== level && !(level === 'read' && have === 'write'))
          missing.push(`job ${job}: ${scope}: ${level}`);
      }
    }
    return missing.length
      ? fail(
          `workflow ${file}`,
          `the workflow token lacks ${missing.join(', ')}`,
          `grant them in the job's permissions block (topo setup writes them)`,
        )
      : ok(`workflow ${file}`, 'grants the token what the job needs');
  });
}

/** Why GitHub refused or could not be reached, with the fix for that cause (never a 500 for a DNS failure). */
function githubFailure(name: string, what: string, error: unknown, apiUrl: string, access: string): Check {
  const f = classifyRequestError(error);
  const byStatus: Partial<Record<typeof f.kind, string>> = {
    auth: 'the token is invalid or expired: create a new one (GITHUB_TOKEN)',
    permission: `the token may not do this: ${access}; an organisation with SAML SSO must also authorise the token`,
    'not-found': `the repository does not exist or the token cannot see it: check --repo, and give the token access to it (fine-grained: Repository access; ${access})`,
    'rate-limited': 'the token is rate limited: wait for the reset, or use another token',
    server: 'GitHub failed to answer: try again later (githubstatus.com)',
  };
  return fail(
    name,
    describeFailure(what, f),
    networkFix(f, hostOf(apiUrl), 'GITHUB_API_URL') ?? byStatus[f.kind] ?? 'see the message',
  );
}

/** The token doctor is given reads the repository and, for a person's token, has write access. */
export async function checkToken(
  octokit: Octokit,
  owner: string,
  repo: string,
  apiUrl = 'https://api.github.com',
): Promise<Check> {
  try {
    await octokit.rest.repos.get({ owner, repo });
  } catch (error) {
    return githubFailure('github token', `cannot read ${owner}/${repo}`, error, apiUrl, 'Contents: read');
  }
  let login: string;
  try {
    login = (await octokit.rest.users.getAuthenticated()).data.login;
  } catch {
    return ok(
      'github token',
      `reads ${owner}/${repo} (an app or workflow token: its permissions are the workflows' blocks)`,
    );
  }
  const level = (await octokit.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: login }))
    .data.permission;
  return ['admin', 'maintain', 'write'].includes(level)
    ? ok('github token', `${login} has ${level} on ${owner}/${repo}`)
    : fail(
        'github token',
        `${login} has only ${level} on ${owner}/${repo}`,
        `/topo commands and topo suggest --open-prs need write: give ${login} write access or use another token`,
      );
}

/** A self-hosted runner with the label is registered for the repository and online. */
export async function checkRunner(
  octokit: Octokit,
  owner: string,
  repo: string,
  label: string,
  apiUrl = 'https://api.github.com',
): Promise<Check> {
  let runners: { name: string; status: string; labels: { name: string }[] }[];
  try {
    runners = (await octokit.rest.actions.listSelfHostedRunnersForRepo({ owner, repo, per_page: 100 })).data
      .runners;
  } catch (error) {
    const status = (error as { status?: number }).status;
    const f = classifyRequestError(error);
    if (f.kind === 'permission' || f.kind === 'not-found')
      return {
        name: 'runner',
        status: 'skip',
        detail: `cannot list the runners of ${owner}/${repo} (HTTP ${status})`,
        fix: 'listing runners needs an admin token (Administration: read); check Settings → Actions → Runners by hand',
      };
    return githubFailure(
      'runner',
      `cannot list the runners of ${owner}/${repo}`,
      error,
      apiUrl,
      'Administration: read',
    );
  }
  const labelled = runners.filter(
    (r) => r.labels.some((l) => l.name === 'self-hosted') && r.labels.some((l) => l.name === label),
  );
  const online = labelled.filter((r) => r.status === 'online');
  if (online.length)
    return ok('runner', `${online.map((r) => r.name).join(', ')} online with labels self-hosted, ${label}`);
  return fail(
    'runner',
    labelled.length
      ? `runner(s) ${labelled.map((r) => r.name).join(', ')} with label ${label} are offline`
      : `no self-hosted runner of ${owner}/${repo} has the label ${label} (have: ${runners.map((r) => `${r.name} [${r.labels.map((l) => l.name).join(', ')}]`).join('; ') || 'none'})`,
    labelled.length
      ? 'start the runner service on its host (sudo ./svc.sh start in the runner folder)'
      : `register a runner with \`./config.sh --labels ${label}\`, or add the label in Settings → Actions → Runners (the workflows' runner-label input names it)`,
  );
}
