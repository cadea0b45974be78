import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { jobFailure } from '../../judge/job.js';
import { slurmClientForCluster } from '../../slurm/for-cluster.js';
import type { SlurmJob } from '../../slurm/types.js';
import { experimentSelector } from '../../telemetry/queries.js';
import { checkClusters } from '../../topology/files.js';
import { formatIssue } from '../../topology/issues.js';
import { parseRunName } from '../../topology/run-name.js';
import type { Failure } from '../../types/generated/metrics.js';
import { isRetiredDuplicate, ownJobs } from '../../usecases/queue.js';
import { experimentPrefix } from '../../usecases/submit.js';
import { flag, parseOptions, str } from '../args.js';
import type { CliIO, Command } from '../command.js';
import { ConfigError, EXIT, UsageError } from '../errors.js';
import { jobJson } from '../json.js';
import { loadExperiment } from './experiments.js';
import { CLUSTER_OPTION, CLUSTERS_OPTION, JSON_OPTION, TOPOLOGIES_OPTION } from './options.js';
import { clustersFileOption } from './validate.js';

/** The cluster entry `name` of the clusters file; a missing file, entry or an invalid file is exit 2. */
function jobsCluster(io: CliIO, explicit: string | undefined, name: string) {
  const clustersPath = clustersFileOption(explicit, io) ?? 'topologies/clusters.yaml';
  const abs = resolve(io.cwd, clustersPath);
  if (!existsSync(abs))
    throw new ConfigError(
      `clusters file ${clustersPath} does not exist (set --clusters or TOPO_CLUSTERS_FILE)`,
    );
  const checked = checkClusters(readFileSync(abs, 'utf8'), clustersPath);
  if (!checked.value) throw new ConfigError(checked.issues.map(formatIssue).join('\n'));
  const cluster = checked.value.clusters[name];
  if (!cluster)
    throw new ConfigError(
      `cluster ${name} is not in ${clustersPath} (${Object.keys(checked.value.clusters).join(', ')})`,
    );
  return { name, cluster };
}

export interface JobRow extends SlurmJob {
  failure: Failure | null;
}

/**
 * The jobs as aligned columns: the candidate as parsed, and the whole run name (what `topo analyze`
 * and `topo record --run` take).
 */
function jobsTable(rows: readonly JobRow[], experiment: string): string {
  const table = [['JOB', 'CANDIDATE', 'RUN', 'STATE', 'REASON', 'ELAPSED', 'NODES', 'FAILURE']];
  for (const r of rows) {
    table.push([
      r.id,
      parseRunName(r.name, experiment)?.candidate ?? '',
      r.name,
      r.state,
      r.reason ?? '',
      r.elapsed ?? '',
      r.nodes ?? '',
      r.failure ? `${r.failure.kind}: ${r.failure.message}` : '',
    ]);
  }
  const widths = table[0]?.map((_, i) => Math.max(...table.map((row) => (row[i] ?? '').length))) ?? [];
  return table
    .map(
      (row) =>
        `${row
          .map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
          .join('  ')
          .trimEnd()}\n`,
    )
    .join('');
}

export const jobsCommand: Command = {
  name: 'jobs',
  summary: 'List the Slurm jobs of an experiment (one Slurm call), failures classified',
  help: {
    synopsis: 'topo jobs <experiment_id> [options]',
    description:
      "Every Slurm job of the experiment in one squeue/sacct call, failures classified from the job's log. --json follows schemas/cli/jobs.schema.json.",
    options: [CLUSTER_OPTION, CLUSTERS_OPTION, TOPOLOGIES_OPTION, JSON_OPTION],
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
    try {
      experimentSelector(experiment);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    // A mistyped experiment is exit 2, as in `status`: it must be in the checkout.
    const defined = loadExperiment(io, experiment, str(parsed, 'topologies') ?? 'topologies');
    const { name, cluster } = jobsCluster(
      io,
      str(parsed, 'clusters'),
      str(parsed, 'cluster') ?? defined.cluster,
    );
    const slurm = slurmClientForCluster(name, cluster, { env: io.env });
    try {
      // Exactly this experiment's runs: never a longer experiment id's (src/topology/run-name.ts).
      const jobs = ownJobs(await slurm.jobs(experimentPrefix(experiment)), experiment).filter(
        (j) => !isRetiredDuplicate(j.name),
      );
      const rows: JobRow[] = [];
      // the one job model's failure rule (src/judge/job.ts): the log is read only for jobs that ended badly
      for (const job of jobs) rows.push({ ...job, failure: await jobFailure(slurm, job) });
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
      io.stdout(jobsTable(rows, experiment));
      return EXIT.ok;
    } finally {
      await slurm.close();
    }
  },
};
