import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { renderSubmitComment } from '../../report/submit-comment.js';
import { slurmClientForCluster } from '../../slurm/for-cluster.js';
import { formatIssue } from '../../topology/issues.js';
import { submitCandidate } from '../../usecases/submit.js';
import { renderCandidateFile } from '../../usecases/validate.js';
import { flag, type OptionSpec, parseOptions, str } from '../args.js';
import { type CliIO, type Command, ConfigError, EXIT, UsageError } from '../command.js';
import { CLUSTER_OPTION, CLUSTERS_OPTION, JSON_OPTION } from './options.js';
import { validateOptionsFor } from './validate.js';

/**
 * The candidate a `submit`/`cancel` command names: parsed options, the validated and rendered
 * candidate, and a Slurm client for its cluster (close it). Prints the issues when it cannot be
 * rendered and returns undefined.
 */
export async function candidateOnCluster(args: string[], io: CliIO, options: readonly OptionSpec[]) {
  const parsed = parseOptions(options, args, io.env);
  if (parsed.positionals.length !== 1) throw new UsageError('name exactly one candidate file');
  const path = parsed.positionals[0] as string;
  if (!existsSync(resolve(io.cwd, path))) throw new ConfigError(`${path}: no such file`);
  const clusterName = str(parsed, 'cluster');
  const { report, submission } = await renderCandidateFile(
    path,
    validateOptionsFor(io, str(parsed, 'clusters'), clusterName),
  );
  for (const issue of [...report.errors, ...report.warnings]) io.stderr(`${formatIssue(issue)}\n`);
  if (!submission || !report.candidate) {
    io.stderr(
      report.kind !== 'candidate'
        ? `${path} is a ${report.kind} file, not a candidate\n`
        : `${path}: not submitted: fix the ${report.errors.length} error(s) above first\n`,
    );
    return undefined;
  }
  const details = report.candidate;
  const cluster = clusterName ?? details.cluster;
  const slurm = slurmClientForCluster(cluster, details.clusterConfig, { env: io.env });
  return { parsed, submission, details, cluster, slurm };
}

export const submitCommand: Command = {
  name: 'submit',
  summary: 'Submit a candidate to Slurm (idempotent, at most max_parallel per experiment)',
  help: {
    synopsis: 'topo submit <candidate.yaml> [options]',
    description:
      'Validates and renders the candidate, then submits it with sbatch (argv, never a shell). Idempotent by job name; beyond max_parallel it is queued. With --json the result follows schemas/cli/submit.schema.json. Exit 1 when the candidate has errors.',
    options: [
      CLUSTER_OPTION,
      CLUSTERS_OPTION,
      {
        name: 'dry-run',
        short: 'n',
        type: 'boolean',
        description: 'print what would be submitted; submit nothing',
      },
      JSON_OPTION,
    ],
    examples: [
      'topo submit topologies/topology-opt-vavam-ord-20261202/more-workers.yaml --dry-run',
      'topo submit topologies/<experiment>/<candidate>.yaml --cluster ord --json',
    ],
    environment: [{ name: 'TOPO_SSH_KEY', description: 'private key for clusters reached over SSH' }],
  },
  async run(args, io) {
    const target = await candidateOnCluster(args, io, submitCommand.help.options);
    if (!target) return EXIT.findings;
    const { parsed, submission, details, cluster, slurm } = target;
    try {
      const result = await submitCandidate(
        { slurm, log: (m) => io.stderr(`${m}\n`) },
        {
          experimentId: details.experimentId,
          cluster,
          submission,
          maxParallel: details.experimentConfig.max_parallel,
          dryRun: flag(parsed, 'dry-run'),
        },
      );
      io.stdout(
        flag(parsed, 'json')
          ? `${JSON.stringify({ schema_version: 1, ...result })}\n`
          : renderSubmitComment(result),
      );
      return EXIT.ok;
    } finally {
      await slurm.close();
    }
  },
};
