// `topo doctor`: run on the runner host, checks a real setup and prints a fix per failure.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  type Check,
  checkGrafana,
  checkPlaceholders,
  checkPrometheus,
  checkRunner,
  checkSlurm,
  checkToken,
  checkWorkflowPermissions,
} from '../../doctor/checks.js';
import { checkForkApproval, checkKeySecret } from '../../doctor/github-settings.js';
import { checkWorkflowPins } from '../../doctor/workflow-pins.js';
import { createOctokit, splitRepository } from '../../github/client.js';
import { transportForCluster } from '../../slurm/for-cluster.js';
import { createPrometheusClient } from '../../telemetry/prometheus.js';
import { checkClusters } from '../../topology/files.js';
import { formatIssue } from '../../topology/issues.js';
import { flag, type Parsed, parseOptions, str } from '../args.js';
import type { CliIO, Command } from '../command.js';
import { ConfigError, EXIT, UsageError } from '../errors.js';
import { CLUSTERS_OPTION, JSON_OPTION } from './options.js';

const MARK: Record<Check['status'], string> = { ok: 'ok  ', fail: 'FAIL', warn: 'warn', skip: 'skip' };

/** The token, the runner and the repository settings (fork approval, the key's environment). */
async function githubChecks(io: CliIO, parsed: Parsed, ssh: boolean): Promise<Check[]> {
  const token = io.env.GITHUB_TOKEN ?? io.env.GH_TOKEN;
  const repo = str(parsed, 'repo');
  if (!token || !repo)
    return [
      {
        name: 'github',
        status: 'skip',
        detail: `no ${token ? 'repository' : 'token'}: the token, runner and repository settings checks need GITHUB_TOKEN and --repo owner/name`,
      },
    ];
  const apiUrl = io.env.GITHUB_API_URL || 'https://api.github.com';
  // One attempt, no retry: doctor reports what a request meets, at once.
  const octokit = createOctokit({ token, baseUrl: apiUrl, retries: 0 });
  const { owner, repo: name } = splitRepository(repo);
  const tokenCheck = await checkToken(octokit, owner, name, apiUrl);
  if (tokenCheck.status === 'fail' && tokenCheck.detail.startsWith('cannot read'))
    return [tokenCheck, { name: 'runner', status: 'skip', detail: 'the token cannot read the repository' }];
  return [
    tokenCheck,
    await checkRunner(octokit, owner, name, str(parsed, 'runner-label') ?? 'slurm', apiUrl),
    await checkForkApproval(octokit, owner, name),
    ...(ssh ? [await checkKeySecret(octokit, owner, name, str(parsed, 'environment') ?? 'slurm')] : []),
  ];
}

export const doctorCommand: Command = {
  name: 'doctor',
  summary:
    'Check a setup from the runner host: Slurm (controller, partition, accounting), the submit script, Prometheus, Grafana, the token, the runner',
  help: {
    synopsis: 'topo doctor [options]',
    description:
      "Run it on the host of the self-hosted runner, in the repository's checkout. Checks that clusters.yaml holds no value `setup` left to replace (TODO, example.org, PLACEHOLDER), Slurm's commands (locally, or over SSH with the pinned host key), that slurmctld answers (scontrol ping), that the partition has usable nodes (sinfo), that accounting answers a real sacct query, the submit script, Prometheus (answering, holding AlpaSim series, the recording rules loaded), the Grafana URL, the caller workflows' token permissions, that every `uses:` the callers reach (one level into the reusable workflows) exists at its ref, looked up over git (a moving ref is a warning), and, with a token, the token's access, a runner with the label, that fork pull requests wait for approval (Settings → Actions → General) and, for transport ssh, that TOPO_SSH_PRIVATE_KEY is a secret of the --environment limited to the default branch, not a repository secret (a setting the token cannot read is a warning naming it). A service it cannot reach is told as DNS, TLS, connection or timeout, a refusal as auth (401), permission (403) or not found (404). Prints a fix for every failure. Exit 1 when a check fails (warnings do not fail). With --json: schemas/cli/doctor.schema.json.",
    options: [
      {
        name: 'cluster',
        type: 'string',
        value: 'NAME',
        description: 'cluster of clusters.yaml to check',
        default: 'the only one defined',
      },
      CLUSTERS_OPTION,
      {
        name: 'repo',
        type: 'string',
        value: 'OWNER/NAME',
        description: 'the repository on GitHub (checks the token and the runner)',
        env: 'GITHUB_REPOSITORY',
      },
      {
        name: 'repo-dir',
        type: 'string',
        value: 'DIR',
        description: "the repository's checkout (its .github/workflows)",
        default: '.',
      },
      {
        name: 'runner-label',
        type: 'string',
        value: 'LABEL',
        description: 'label of the self-hosted runner',
        default: 'slurm',
      },
      {
        name: 'environment',
        type: 'string',
        value: 'NAME',
        description: "GitHub environment holding TOPO_SSH_PRIVATE_KEY (the workflows' environment input)",
        default: 'slurm',
      },
      JSON_OPTION,
    ],
    examples: ['topo doctor', 'GITHUB_TOKEN=… topo doctor --cluster ord --repo me/topologies'],
    environment: [
      { name: 'GITHUB_TOKEN, GH_TOKEN', description: 'token for the GitHub checks (skipped without one)' },
      { name: 'GITHUB_API_URL', description: 'GitHub API base URL (GitHub Enterprise)' },
      { name: 'TOPO_SSH_KEY, TOPO_SSH_KEY_FILE', description: 'private key for clusters reached over SSH' },
    ],
  },
  async run(args, io) {
    const parsed = parseOptions(doctorCommand.help.options, args, io.env);
    if (parsed.positionals.length) throw new UsageError(`unexpected argument ${parsed.positionals[0]}`);
    const repoDir = resolve(io.cwd, str(parsed, 'repo-dir') ?? '.');
    // --clusters (or TOPO_CLUSTERS_FILE) is a path like any other: against the working directory.
    const given = str(parsed, 'clusters');
    const file = given ? resolve(io.cwd, given) : resolve(repoDir, 'topologies/clusters.yaml');
    if (!existsSync(file))
      throw new ConfigError(`${file} does not exist: run \`topo setup\` and describe your cluster`);
    const checked = checkClusters(readFileSync(file, 'utf8'), file);
    if (!checked.value) throw new ConfigError(checked.issues.map(formatIssue).join('\n'));
    const names = Object.keys(checked.value.clusters);
    const name = str(parsed, 'cluster') ?? (names.length === 1 ? names[0] : undefined);
    if (!name) throw new UsageError(`which cluster? pass --cluster (${names.join(', ')})`);
    const cluster = checked.value.clusters[name];
    if (!cluster) throw new ConfigError(`${file}: no cluster "${name}" (known: ${names.join(', ')})`);

    const checks: Check[] = [
      { name: 'clusters.yaml', status: 'ok', detail: `${file}: cluster ${name} is valid` },
      checkPlaceholders(checked.loaded, name),
    ];
    checks.push(
      ...(await checkSlurm(name, cluster, () => transportForCluster(name, cluster, { env: io.env }))),
    );
    checks.push(
      ...(await checkPrometheus(
        cluster,
        createPrometheusClient({ baseUrl: cluster.prometheus_url, retries: 0 }),
      )),
    );
    checks.push(await checkGrafana(cluster));
    checks.push(...checkWorkflowPermissions(repoDir));
    checks.push(await checkWorkflowPins(repoDir, io.env));
    checks.push(...(await githubChecks(io, parsed, cluster.transport === 'ssh')));
    const failed = checks.filter((c) => c.status === 'fail').length;
    if (flag(parsed, 'json')) {
      io.stdout(
        `${JSON.stringify({ schema_version: 1, cluster: name, ok: failed === 0, checks }, null, 2)}\n`,
      );
    } else {
      for (const c of checks) {
        io.stdout(`${MARK[c.status]}  ${c.name}: ${c.detail}\n`);
        if (c.fix && c.status !== 'ok') io.stdout(`      fix: ${c.fix}\n`);
      }
      io.stdout(failed ? `\n${failed} check(s) failed\n` : '\nevery check passed\n');
    }
    return failed ? EXIT.findings : EXIT.ok;
  },
};
