import { cancelCandidate } from '../../usecases/submit.js';
import { renderCancelComment } from '../../usecases/submit-comment.js';
import { flag } from '../args.js';
import type { Command } from '../command.js';
import { EXIT } from '../errors.js';
import { cancelJson } from '../json.js';
import { CLUSTER_OPTION, CLUSTERS_OPTION, JSON_OPTION } from './options.js';
import { candidateOnCluster } from './submit.js';

export const cancelCommand: Command = {
  name: 'cancel',
  summary: 'Cancel the Slurm job of a candidate',
  help: {
    synopsis: 'topo cancel <candidate.yaml> [options]',
    description:
      "Cancels the candidate's queued or running Slurm job (found by its job name). With --json the result follows schemas/cli/cancel.schema.json.",
    options: [CLUSTER_OPTION, CLUSTERS_OPTION, JSON_OPTION],
    examples: ['topo cancel topologies/topology-opt-vavam-ord-20261202/more-workers.yaml'],
    environment: [{ name: 'TOPO_SSH_KEY', description: 'private key for clusters reached over SSH' }],
  },
  async run(args, io) {
    const target = await candidateOnCluster(args, io, cancelCommand.help.options, 'cancel');
    const { parsed, submission, details, cluster, slurm } = target;
    try {
      const result = await cancelCandidate(
        { slurm },
        { experimentId: details.experimentId, jobName: submission.jobName },
      );
      io.stdout(
        flag(parsed, 'json')
          ? `${JSON.stringify({ schema_version: 1, ...cancelJson(result) })}\n`
          : renderCancelComment(result, cluster),
      );
      return EXIT.ok;
    } finally {
      await slurm.close();
    }
  },
};
