// Closing a pull request cancels the candidate's job still live on the real local Slurm, and the
// record names the job and its run directory. Needs `bash scripts/local-cluster up`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { recordedAtClose } from '../../../src/commands/recorded.js';
import { renderObservationBlock } from '../../../src/report/observation-block.js';
import { slurmClientForCluster } from '../../../src/slurm/for-cluster.js';
import { expandCandidate, expandPreset } from '../../../src/topology/expand.js';
import { checkClusters } from '../../../src/topology/files.js';
import { jobName } from '../../../src/topology/render.js';
import type { Topology } from '../../../src/types/generated/topology.js';
import { recordClosedPullRequest } from '../../../src/usecases/record.js';
import { EXPERIMENT, OUTCOMES } from '../../fixtures/record/scenario.js';
import { type LocalClusterEnv, requireCluster } from '../../support/cluster.js';
import { useLocalGitHub } from '../../support/local-github.js';
import { repoRoot } from '../../support/run-action.js';
import { postRequests } from './requested.js';

const ID = EXPERIMENT.experiment_id;
const PRESET = readFileSync(join(repoRoot, 'topologies/presets/8gpu_64rollouts.yaml'), 'utf8');

const { gh, octokit } = useLocalGitHub();
let cluster: LocalClusterEnv;
const submitted: string[] = [];

beforeAll(async () => {
  cluster = requireCluster();
});
afterAll(async () => {
  // Leave nothing behind on the shared cluster, whatever the test did.
  for (const id of submitted) {
    try {
      execFileSync('scancel', [id], { env: { ...process.env, SLURM_CONF: cluster.slurmConf } });
    } catch {}
  }
});

function squeueState(jobId: string): string {
  return execFileSync('squeue', ['-h', '-j', jobId, '-o', '%T'], {
    encoding: 'utf8',
    env: { ...process.env, SLURM_CONF: cluster.slurmConf },
  }).trim();
}

describe('record use case with the local Slurm', () => {
  it('cancels the live job of a closed candidate and records its job id and run directory', async () => {
    const tag = Math.random().toString(36).slice(2, 7).replace(/[0-9]/g, 'x');
    const candidate = `slurm-${tag}`;
    const topology: Topology = { runtime: { nr_workers: 5 } };
    const base = expandPreset(parse(PRESET) as Topology, EXPERIMENT);
    const runName = jobName(ID, candidate, expandCandidate(base, topology));
    const runDir = join(cluster.runDir, runName);
    // Slurm fails a job at launch when its --output folder does not exist.
    mkdirSync(join(runDir, 'slurm_output'), { recursive: true });
    const jobId = execFileSync(
      'sbatch',
      [
        '--parsable',
        `--job-name=${runName}`,
        `--output=${runDir}/slurm_output/${runName}_%j.log`,
        '--time=00:05:00',
        '--wrap',
        'sleep 300',
      ],
      { encoding: 'utf8', env: { ...process.env, SLURM_CONF: cluster.slurmConf } },
    )
      .trim()
      .split(';')[0]!;
    submitted.push(jobId);
    expect(['PENDING', 'RUNNING', 'CONFIGURING']).toContain(squeueState(jobId));

    const repo = gh.createRepo('acme/slurm', {
      files: {
        'topologies/presets/8gpu_64rollouts.yaml': PRESET,
        [`topologies/${ID}/experiment.yaml`]: stringify(EXPERIMENT),
      },
    });
    const pull = gh.openPull({
      repo,
      author: 'alice',
      title: candidate,
      head: candidate,
      files: { [`topologies/${ID}/${candidate}.yaml`]: stringify({ name: candidate, topology }) },
    });
    const observation = structuredClone(OUTCOMES[2]!.observation!);
    observation.run_name = runName;
    gh.comment(
      repo,
      pull.number,
      gh.botLogin,
      `<!-- topo:sticky:monitor -->\n${renderObservationBlock(observation)}`,
    );
    // the run's Request, still running when the pull request closes
    postRequests(gh, repo, pull, ID, [{ candidate, runName, ended: null, jobId }]);
    gh.closePull(pull);
    const clusters = checkClusters(readFileSync(cluster.clustersFile, 'utf8'), cluster.clustersFile).value!;

    const { data } = await octokit.rest.pulls.get({ owner: 'acme', repo: 'slurm', pull_number: pull.number });
    const result = await recordClosedPullRequest(
      {
        octokit,
        owner: 'acme',
        repo: 'slurm',
        defaultBranch: 'main',
        botLogin: gh.botLogin,
        closeCommands: recordedAtClose({ octokit, owner: 'acme', repo: 'slurm', botLogin: gh.botLogin }),
        slurmFor: async (experiment) =>
          slurmClientForCluster(experiment.cluster, clusters.clusters[experiment.cluster]!),
        clusterOf: (experiment) => clusters.clusters[experiment.cluster],
      },
      data,
    );

    expect(result.recorded[0]).toMatchObject({
      kind: 'rejected',
      cancelledJobs: [jobId],
      telemetryGaps: [
        `run cut short: Slurm job ${jobId} was still running when the pull request closed; it was cancelled`,
      ],
    });
    expect(result.closed.cancelledJobs).toEqual([jobId]);
    const state = squeueState(jobId);
    expect(['', 'CANCELLED', 'COMPLETING']).toContain(state);
    const record = JSON.parse(gh.files(repo).get(`experiments/${ID}.json`)!);
    expect(record.runs[0]).toMatchObject({
      name: candidate,
      job_id: jobId,
      run_dir: runDir,
      run_name: runName,
    });
    expect(record.fixed_inputs.telemetry.prometheus_url).toBe(clusters.clusters.local!.prometheus_url);
    expect(gh.violations()).toEqual([]);
  });
});
