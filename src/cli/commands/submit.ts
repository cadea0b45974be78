import { renderSubmitComment } from '../../report/submit-comment.js';
import { slurmClientForCluster } from '../../slurm/for-cluster.js';
import { formatIssue } from '../../topology/issues.js';
import { submitCandidate } from '../../usecases/submit.js';
import { renderCandidateFile } from '../../usecases/validate.js';
import { type CliIO, type Command, UsageError } from '../command.js';
import { parseArgs, validateOptionsFor } from './validate.js';

/** Validates and renders a candidate file; prints the issues when it cannot be rendered. */
export async function renderedCandidate(
  path: string,
  io: CliIO,
  clusters: string | undefined,
  clusterName: string | undefined,
) {
  const { report, submission } = await renderCandidateFile(
    path,
    validateOptionsFor(io, clusters, clusterName),
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
  return { submission, details, cluster: clusterName ?? details.cluster };
}

export const submitCommand: Command = {
  name: 'submit',
  summary: 'Submit a candidate to Slurm (idempotent, at most max_parallel per experiment)',
  usage: 'topo submit <candidate.yaml> [--cluster NAME] [--clusters FILE] [--dry-run] [--json]',
  async run(args, io) {
    const parsed = parseArgs(args, ['dry-run', 'json'], ['cluster', 'clusters']);
    if (parsed.positional.length !== 1) throw new UsageError('name exactly one candidate file');
    const rendered = await renderedCandidate(
      parsed.positional[0] as string,
      io,
      parsed.values.get('clusters'),
      parsed.values.get('cluster'),
    );
    if (!rendered) return 1;
    const { submission, details, cluster } = rendered;
    const slurm = slurmClientForCluster(cluster, details.clusterConfig, { env: io.env });
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
