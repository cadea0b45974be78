import { renderSubmitComment } from '../../report/submit-comment.js';
import { slurmClientForCluster } from '../../slurm/for-cluster.js';
import { formatIssue } from '../../topology/issues.js';
import { submitCandidate } from '../../usecases/submit.js';
import { renderCandidateFile } from '../../usecases/validate.js';
import { parseArgs } from '../args.js';
import { type CliIO, type Command, UsageError } from '../command.js';
import { validateOptionsFor } from './validate.js';

/**
 * The candidate a `submit`/`cancel` command names: parsed options, the validated and rendered
 * candidate, and a Slurm client for its cluster (close it). Prints the issues when it cannot be
 * rendered and returns undefined.
 */
export async function candidateOnCluster(args: string[], io: CliIO, flags: readonly string[]) {
  const parsed = parseArgs(args, flags, ['cluster', 'clusters']);
  if (parsed.positional.length !== 1) throw new UsageError('name exactly one candidate file');
  const path = parsed.positional[0] as string;
  const clusterName = parsed.values.get('cluster');
  const { report, submission } = await renderCandidateFile(
    path,
    validateOptionsFor(io, parsed.values.get('clusters'), clusterName),
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
  usage: 'topo submit <candidate.yaml> [--cluster NAME] [--clusters FILE] [--dry-run] [--json]',
  async run(args, io) {
    const target = await candidateOnCluster(args, io, ['dry-run', 'json']);
    if (!target) return 1;
    const { parsed, submission, details, cluster, slurm } = target;
    try {
      const result = await submitCandidate(
        { slurm, log: (m) => io.stderr(`${m}\n`) },
        {
          experimentId: details.experimentId,
          cluster,
          submission,
          maxParallel: details.experimentConfig.max_parallel,
          dryRun: parsed.flags.has('dry-run'),
        },
      );
      io.stdout(parsed.flags.has('json') ? `${JSON.stringify(result)}\n` : renderSubmitComment(result));
      return 0;
    } finally {
      await slurm.close();
    }
  },
};
