// The submit action's ports (src/commands/command.ts CommandPorts): the default branch's checkout,
// a Slurm client per cluster (closed after each use, so the process exits), and one monitor pass of a
// pull request for `/topo status`, on the monitor's own ports. The SSH key is read from `env` here
// and never handed to a child process.
import type { CommandPorts } from '../../src/commands/command.js';
import { monitorPass } from '../../src/monitor/pass.js';
import { slurmClientForCluster } from '../../src/slurm/for-cluster.js';
import type { CandidateSource } from '../../src/usecases/prepare.js';
import { buildMonitorPorts } from '../monitor/ports.js';

export function submitPorts(input: {
  source: CandidateSource;
  owner: string;
  repo: string;
  botLogin: string;
  env: NodeJS.ProcessEnv;
}): CommandPorts {
  const { source, env } = input;
  const log = (line: string) => console.log(line);
  return {
    source,
    async withSlurm(clusterName, cluster, use) {
      const slurm = slurmClientForCluster(clusterName, cluster, { env });
      try {
        return await use(slurm);
      } finally {
        await slurm.close();
      }
    },
    async refresh(octokit, pr) {
      const { workspace, topologiesDir, clustersFile } = source;
      const { owner, repo, botLogin } = input;
      const config = {
        workspace,
        topologiesDir,
        clustersFile,
        owner,
        repo,
        botLogin,
        env,
        log,
        onlyPull: pr,
      };
      const ports = buildMonitorPorts(octokit, config);
      try {
        // refresh: the comments are written now whatever comment_interval_minutes says, so the reply is true;
        // it never submits: the queue is served by the scheduled pass, by request time
        const report = await monitorPass({ ...ports, submit: async () => undefined }, { refresh: true });
        return { candidates: report.candidates, errors: report.errors };
      } finally {
        await ports.close();
      }
    },
    now: () => new Date(),
    log,
  };
}
