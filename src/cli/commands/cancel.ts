import { renderCancelComment } from '../../report/submit-comment.js';
import { slurmClientForCluster } from '../../slurm/for-cluster.js';
import { cancelCandidate } from '../../usecases/submit.js';
import { type Command, UsageError } from '../command.js';
import { renderedCandidate } from './submit.js';
import { parseArgs } from './validate.js';

export const cancelCommand: Command = {
  name: 'cancel',
  summary: 'Cancel the Slurm job of a candidate',
  usage: 'topo cancel <candidate.yaml> [--cluster NAME] [--clusters FILE] [--json]',
  async run(args, io) {
    const parsed = parseArgs(args, ['json'], ['cluster', 'clusters']);
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
      const result = await cancelCandidate(
        { slurm },
        { experimentId: details.experimentId, jobName: submission.jobName },
      );
      io.stdout(
        parsed.flags.has('json') ? `${JSON.stringify(result)}\n` : renderCancelComment(result, cluster),
      );
      return 0;
    } finally {
      await slurm.close();
    }
  },
};
