import { renderCancelComment } from '../../report/submit-comment.js';
import { cancelCandidate } from '../../usecases/submit.js';
import type { Command } from '../command.js';
import { candidateOnCluster } from './submit.js';

export const cancelCommand: Command = {
  name: 'cancel',
  summary: 'Cancel the Slurm job of a candidate',
  usage: 'topo cancel <candidate.yaml> [--cluster NAME] [--clusters FILE] [--json]',
  async run(args, io) {
    const target = await candidateOnCluster(args, io, ['json']);
    if (!target) return 1;
    const { parsed, submission, details, cluster, slurm } = target;
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
