import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { classifyFailure } from '../../slurm/classify.js';
import { slurmClientForCluster } from '../../slurm/for-cluster.js';
import { isLive, type SlurmJob } from '../../slurm/types.js';
import { checkClusters, checkExperiment } from '../../topology/files.js';
import { formatIssue } from '../../topology/issues.js';
import type { Failure } from '../../types/generated/metrics.js';
import { isRetiredDuplicate, ownJobs } from '../../usecases/queue.js';
import { experimentPrefix } from '../../usecases/submit.js';
import { flag, parseOptions, str } from '../args.js';
import type { CliIO, Command } from '../command.js';
import { ConfigError, EXIT, UsageError } from '../errors.js';
import { jobJson } from '../json.js';
import { CLUSTER_OPTION, CLUSTERS_OPTION, JSON_OPTION } from './options.js';
import { clustersFileOption } from './validate.js';

const EXPERIMENT_ID = /^[a-z0-9][a-z0-9_.-]{0,160}$/;

/** The experiment's cluster from topologies/<folder>/experiment.yaml whose folder or experiment_id matches. */
function experimentCluster(experiment: string, io: CliIO): string | undefined {
  const root = resolve(io.cwd, 'topologies');
  if (!existsSync(root)) return undefined;
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const file = join(root, entry.name, 'experiment.yaml');
    if (!entry.isDirectory() || !existsSync(file)) continue;
    const { value } = checkExperiment(readFileSync(file, 'utf8'), file);
    if (value && (entry.name === experiment || value.experiment_id === experiment)) return value.cluster;
  }
  return undefined;
}

export interface JobRow extends SlurmJob {
  failure: Failure | null;
}

export const jobsCommand: Command = {
  name: 'jobs',
  summary: 'List the Slurm jobs of an experiment (one Slurm call), failures classified',
  help: {
    synopsis: 'topo jobs <experiment_id> [options]',
    description:
      "Every Slurm job of the experiment in one squeue/sacct call, failures classified from the job's log. --json follows schemas/cli/jobs.schema.json.",
    options: [CLUSTER_OPTION, CLUSTERS_OPTION, JSON_OPTION],
    examples: [
      'topo jobs topology-opt-vavam-ord-20261202',
      'topo jobs topology-opt-vavam-ord-20261202 --json',
    ],
    environment: [{ name: 'TOPO_SSH_KEY', description: 'private key for clusters reached over SSH' }],
  },
  async run(args, io) {
    const parsed = parseOptions(jobsCommand.help.options, args, io.env);
    if (parsed.positionals.length !== 1) throw new UsageError('name exactly one experiment id');
    const experiment = parsed.positionals[0] as string;
    if (!EXPERIMENT_ID.test(experiment))
      throw new UsageError(`${JSON.stringify(experiment)} is not an experiment id`);
    const clustersPath = clustersFileOption(str(parsed, 'clusters'), io) ?? 'topologies/clusters.yaml';
    const abs = resolve(io.cwd, clustersPath);
    if (!existsSync(abs))
      throw new ConfigError(
        `clusters file ${clustersPath} does not exist (set --clusters or TOPO_CLUSTERS_FILE)`,
      );
    const checked = checkClusters(readFileSync(abs, 'utf8'), clustersPath);
    if (!checked.value) {
      for (const issue of checked.issues) io.stderr(`${formatIssue(issue)}\n`);
      return EXIT.usage;
    }
    const clusters = checked.value.clusters;
    const name =
      str(parsed, 'cluster') ??
      experimentCluster(experiment, io) ??
      (Object.keys(clusters).length === 1 ? Object.keys(clusters)[0] : undefined);
    if (!name)
      throw new UsageError(`which cluster? name one with --cluster (${Object.keys(clusters).join(', ')})`);
    const cluster = clusters[name];
    if (!cluster)
      throw new ConfigError(
        `cluster ${name} is not in ${clustersPath} (${Object.keys(clusters).join(', ')})`,
      );

    const slurm = slurmClientForCluster(name, cluster, { env: io.env });
    try {
      // Exactly this experiment's runs: never a longer experiment id's (src/lifecycle/run-name.ts).
      const jobs = ownJobs(await slurm.jobs(experimentPrefix(experiment)), experiment).filter(
        (j) => !isRetiredDuplicate(j.name),
      );
      const rows: JobRow[] = [];
      for (const job of jobs) {
        // The log is read only for jobs that ended badly.
        const bad = !isLive(job.state) && classifyFailure(job, []) !== null;
        const log = bad ? await slurm.tail(job, 200).catch(() => []) : [];
        rows.push({ ...job, failure: bad ? classifyFailure(job, log) : null });
      }
      if (flag(parsed, 'json')) {
        io.stdout(
          `${JSON.stringify({ schema_version: 1, experiment, cluster: name, jobs: rows.map((r) => ({ ...jobJson(r), failure: r.failure })) }, null, 2)}\n`,
        );
        return EXIT.ok;
      }
      if (rows.length === 0) {
        io.stdout(`no jobs of ${experiment} on cluster ${name}\n`);
        return EXIT.ok;
      }
      const prefix = experimentPrefix(experiment);
      const table = [['JOB', 'CANDIDATE', 'STATE', 'REASON', 'ELAPSED', 'NODES', 'FAILURE']];
      for (const r of rows) {
        table.push([
          r.id,
          r.name.slice(prefix.length),
          r.state,
          r.reason ?? '',
          r.elapsed ?? '',
          r.nodes ?? '',
          r.failure ? `${r.failure.kind}: ${r.failure.message}` : '',
        ]);
      }
      const widths = table[0]?.map((_, i) => Math.max(...table.map((row) => (row[i] ?? '').length))) ?? [];
      for (const row of table)
        io.stdout(
          `${row
            .map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
            .join('  ')
            .trimEnd()}\n`,
        );
      return EXIT.ok;
    } finally {
      await slurm.close();
    }
  },
};
