import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { slurmClientForCluster } from '../../slurm/for-cluster.js';
import { newRunLabel, parseRunName, runNameFor } from '../../topology/run-name.js';
import { withRunName } from '../../usecases/prepare.js';
import { type SubmitResult, submitCandidate } from '../../usecases/submit.js';
import { renderSubmitComment } from '../../usecases/submit-comment.js';
import { type CandidateDetails, renderCandidateFile } from '../../usecases/validate.js';
import { flag, type OptionSpec, parseOptions, str } from '../args.js';
import type { CliIO, Command } from '../command.js';
import { ConfigError, EXIT, UsageError } from '../errors.js';
import { submitJson } from '../json.js';
import { ALLOW_UNMEASURED_MEMORY_OPTION, CLUSTER_OPTION, CLUSTERS_OPTION, JSON_OPTION } from './options.js';
import { renderedOrFinding } from './render.js';
import { validateOptionsFor } from './validate.js';

/**
 * The candidate a `submit`/`cancel` command names: parsed options, the validated and rendered
 * candidate, and a Slurm client for its cluster (close it). A candidate that cannot be rendered is a
 * finding (exit 1, renderedOrFinding).
 */
export async function candidateOnCluster(
  args: string[],
  io: CliIO,
  options: readonly OptionSpec[],
  purpose: 'submit' | 'cancel' = 'submit',
) {
  const parsed = parseOptions(options, args, io.env);
  if (parsed.positionals.length !== 1) throw new UsageError('name exactly one candidate file');
  const path = parsed.positionals[0] as string;
  if (!existsSync(resolve(io.cwd, path))) throw new ConfigError(`${path}: no such file`);
  const clusterName = str(parsed, 'cluster');
  const { report, submission } = await renderCandidateFile(
    path,
    validateOptionsFor(
      io,
      str(parsed, 'clusters'),
      clusterName,
      // cancelling needs only the job name: a memory prediction never stands in its way
      purpose === 'cancel' || flag(parsed, 'allow-unmeasured-memory'),
    ),
  );
  const rendered = renderedOrFinding(
    path,
    report,
    submission,
    io,
    flag(parsed, 'json'),
    purpose === 'cancel' ? 'cancelled' : 'submitted',
  );
  const details = report.candidate as CandidateDetails;
  const cluster = clusterName ?? details.cluster;
  const slurm = slurmClientForCluster(cluster, details.clusterConfig, { env: io.env });
  return { parsed, submission: rendered, details, cluster, slurm };
}

/** What `topo submit` asked for: the run it made, tracked on the cluster by its run name only. */
export interface CliRunRequest {
  run_label: string;
  run_name: string;
  experiment: string;
  candidate: string;
  path: string;
  topology_hash: string;
  requested_by: string;
  requested_at: string;
}

export const submitCommand: Command = {
  name: 'submit',
  summary: 'Submit a candidate to Slurm under a run name of its own (at most max_parallel per experiment)',
  help: {
    synopsis: 'topo submit <candidate.yaml> [options]',
    description:
      'Validates and renders the candidate, then submits it with sbatch (argv, never a shell) under a new run name `topo-<experiment>-<candidate>-<hash8>-<label>`, as /topo submit does, so a rerun never shares a run_name (and metrics) with an earlier run. A live run of the same candidate and topology stands: it is shown, not submitted again, and released when a submit interrupted between sbatch and its release left it held. Ctrl-C while it submits cancels the job it holds (it never ran) and exits 130; a second Ctrl-C quits at once, and the next `topo submit` or `topo watch` releases what it left. Beyond max_parallel nothing is submitted (no monitor serves a CLI queue): run it again when a slot frees. A CLI run has no pull request: it is tracked on the cluster by its run name only (`topo status`, `topo analyze <run name>`, `topo cancel`). With --json the result and the run request follow schemas/cli/submit.schema.json. Exit 1 when the candidate has errors.',
    options: [
      CLUSTER_OPTION,
      CLUSTERS_OPTION,
      ALLOW_UNMEASURED_MEMORY_OPTION,
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
    const { parsed, submission, details, cluster, slurm } = target;
    try {
      const label = newRunLabel();
      const request: CliRunRequest = {
        run_label: label,
        run_name: runNameFor(submission.jobName, label),
        experiment: details.experimentId,
        candidate: details.name,
        path: parsed.positionals[0] as string,
        topology_hash: parseRunName(submission.jobName, details.experimentId)?.hash ?? '',
        requested_by: io.env.USER || io.env.LOGNAME || 'unknown',
        requested_at: new Date().toISOString(),
      };
      // A live run of the candidate (any label) stands; a held one (a submit interrupted between
      // sbatch and release) is released, so a Ctrl-C never leaves a job held past the next submit.
      const interrupts = io.interrupts?.();
      let result: SubmitResult;
      try {
        result = await submitCandidate(
          { slurm, log: (m) => io.stderr(`${m}\n`), ...(interrupts ? { signal: interrupts.signal } : {}) },
          {
            experimentId: details.experimentId,
            cluster,
            submission: withRunName(submission, request.run_name),
            standsFor: submission.jobName,
            maxParallel: details.experimentConfig.max_parallel,
            dryRun: flag(parsed, 'dry-run'),
          },
        );
      } finally {
        interrupts?.release();
      }
      // the standing run's own command (one submitted before run names carried a label: the rendered one)
      if (result.status === 'existing' && parseRunName(result.jobName, details.experimentId)?.label)
        result = { ...result, command: withRunName(submission, result.jobName).shellLine };
      const made = result.status === 'submitted' || result.status === 'dry-run';
      if (flag(parsed, 'json'))
        io.stdout(
          `${JSON.stringify({ schema_version: 1, ...submitJson(result), ...(made ? { request } : {}) })}\n`,
        );
      else io.stdout(cliText(result));
      return EXIT.ok;
    } finally {
      await slurm.close();
    }
  },
};

/** The CLI's text: no pull request tracks this run, and no monitor serves a CLI queue. */
function cliText(result: SubmitResult): string {
  if (result.status === 'queued')
    return `### Not submitted: ${result.live} of ${result.maxParallel} slots of this experiment are busy on cluster \`${result.cluster}\`\n\nThe CLI keeps no queue (only a pull request's \`/topo submit\` waits for the monitor): run \`topo submit\` again when a slot frees.\n`;
  const text = renderSubmitComment(result);
  if (result.status !== 'submitted') return text;
  return `${text}\nRun name \`${result.jobName}\`: a CLI run has no pull request; follow it by this name (\`topo status\`, \`topo analyze ${result.jobName}\`).\n`;
}
