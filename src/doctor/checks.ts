// `topo doctor`: checks a real setup from the runner host, one check per thing that must work before
// the first candidate, each failure with the fix. The checks take their services as arguments
// (a transport, a Prometheus client, an octokit, fetch), so the command wires real ones and tests
// point them at the local cluster and the local GitHub API.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { Octokit } from '../github/client.js';
import { HostKeyMismatchError, SlurmError } from '../slurm/errors.js';
import type { Transport } from '../slurm/types.js';
import type { PrometheusClient } from '../telemetry/prometheus.js';
import type { Cluster } from '../types/generated/clusters.js';

export interface Check {
  name: string;
  status: 'ok' | 'fail' | 'warn' | 'skip';
  detail: string;
  /** What to do about it (failures and warnings). */
  fix?: string;
}

const ok = (name: string, detail: string): Check => ({ name, status: 'ok', detail });
const fail = (name: string, detail: string, fix: string): Check => ({ name, status: 'fail', detail, fix });

const SLURM_COMMANDS = ['sbatch', 'squeue', 'sacct', 'scancel'] as const;

/** Slurm's four commands answer `--version` through the cluster's transport (local or SSH). */
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
  const pathFix =
    cluster.transport === 'local'
      ? `put Slurm's commands on PATH for the runner's account (cluster ${clusterName} uses transport local: the runner must sit on a login node)`
      : `put Slurm's commands on PATH for ${cluster.user} on ${cluster.host} (non-interactive shells too)`;
  try {
    for (const command of SLURM_COMMANDS) {
      let r: Awaited<ReturnType<Transport['run']>>;
      try {
        r = await t.run([command, '--version'], { timeoutMs: 20_000 });
      } catch (error) {
        // A command that is not installed is this check's failure; a broken connection ends them all.
        if (!/not installed or not on PATH/.test((error as Error).message)) throw error;
        checks.push(fail(`slurm ${command}`, (error as Error).message, pathFix));
        continue;
      }
      if (r.code === 0)
        checks.push(ok(`slurm ${command}`, `${(r.stdout || r.stderr).trim().split('\n')[0]} on ${where}`));
      else
        checks.push(
          fail(
            `slurm ${command}`,
            `\`${command} --version\` exited ${r.code} on ${where}: ${(r.stderr || r.stdout).trim().slice(0, 200)}`,
            pathFix,
          ),
        );
    }
    const script = `${cluster.alpasim_checkout.replace(/\/+$/, '')}/${cluster.submit_script}`;
    const test = await t.run(['test', '-f', script], { timeoutMs: 20_000 });
    checks.push(
      test.code === 0
        ? ok('submit script', `${script} exists on ${where}`)
        : fail(
            'submit script',
            `${script} is not a file on ${where}`,
            `set alpasim_checkout (AlpaSim's checkout) and submit_script (relative to it) in clusters.yaml for cluster ${clusterName}`,
          ),
    );
  } catch (error) {
    checks.push(slurmFailure(cluster, where, error));
  } finally {
    await t.close().catch(() => {});
  }
  return checks;
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
    return [
      fail(
        'prometheus',
        (error as Error).message,
        `start Prometheus where the runner reaches ${url} (scripts/start-prometheus-grafana.sh), or fix prometheus_url in clusters.yaml`,
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
    return {
      name: 'grafana',
      status: 'skip',
      detail: 'no grafana_url in clusters.yaml (comments carry no dashboard links)',
    };
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
    return fail(
      'grafana',
      `cannot reach ${url}: ${(error as Error).message}`,
      'start Grafana (scripts/start-prometheus-grafana.sh --grafana-port …) or fix grafana_url in clusters.yaml',
    );
  }
}

/** The permissions each caller workflow's job must grant (what the reusable workflows need). */
export const WORKFLOW_PERMISSIONS: Record<string, Record<string, string>> = {
  'topology-validate.yml': { checks: 'write', contents: 'read', 'pull-requests': 'read' },
  'topology-submit.yml': { contents: 'read', checks: 'write', issues: 'write', 'pull-requests': 'write' },
  'topology-monitor.yml': { contents: 'read', checks: 'write', issues: 'write', 'pull-requests': 'write' },
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

/** The token doctor is given reads the repository and, for a person's token, has write access. */
export async function checkToken(octokit: Octokit, owner: string, repo: string): Promise<Check> {
  try {
    await octokit.rest.repos.get({ owner, repo });
  } catch (error) {
    const status = (error as { status?: number }).status;
    return fail(
      'github token',
      `cannot read ${owner}/${repo} (HTTP ${status ?? '?'}): ${(error as Error).message}`,
      status === 401
        ? 'the token is invalid or expired: create a new one'
        : `give the token access to ${owner}/${repo} (fine-grained: Repository access, Contents read)`,
    );
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
): Promise<Check> {
  let runners: { name: string; status: string; labels: { name: string }[] }[];
  try {
    runners = (await octokit.rest.actions.listSelfHostedRunnersForRepo({ owner, repo, per_page: 100 })).data
      .runners;
  } catch (error) {
    const status = (error as { status?: number }).status;
    return {
      name: 'runner',
      status: status === 403 || status === 404 ? 'skip' : 'fail',
      detail: `cannot list the runners of ${owner}/${repo} (HTTP ${status ?? '?'})`,
      fix: 'listing runners needs an admin token; check Settings → Actions → Runners by hand',
    };
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
      : `register a runner with \`./config.sh --labels ${label}\`, or add the label in Settings → Actions → Runners`,
  );
}
