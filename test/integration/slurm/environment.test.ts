// No secret reaches a job: the action's environment (tokens, the SSH key, INPUT_*, GITHUB_*) is
// searched for in slurmctld's spool (hash.N/job.N/environment) and in the environ of the job processes,
// for the local and the SSH transport. sbatch with another --export is refused before it runs.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { slurmMonitorPort } from '../../../src/monitor/adapters.js';
import { createSlurmClient } from '../../../src/slurm/client.js';
import { UnsafeArgumentError } from '../../../src/slurm/errors.js';
import { createLocalTransport } from '../../../src/slurm/local-transport.js';
import type { SlurmClient } from '../../../src/slurm/types.js';
import { SBATCH_EXPORT_FLAG } from '../../../src/topology/job-environment.js';
import { requireCluster } from '../../support/cluster.js';
import { experimentId, jobName, makeClient, sbatchArgv, waitForJob } from './helpers.js';

const env = requireCluster();
const PROBE = `probe${Date.now().toString(36)}secret`;
// What a runner's action process has in its environment: set on THIS process, as in an action.
const actionEnv: NodeJS.ProcessEnv = {
  SLURM_CONF: env.slurmConf,
  INPUT_TOKEN: `ghs_${PROBE}`,
  GITHUB_TOKEN: `ghs_${PROBE}`,
  ACTIONS_RUNTIME_TOKEN: PROBE,
  RUNNER_TEMP: `/tmp/${PROBE}`,
  TOPO_SSH_KEY: `-----BEGIN OPENSSH PRIVATE KEY-----\n${PROBE}\n`,
};
Object.assign(process.env, actionEnv);
const clients: SlurmClient[] = [];
const jobIds: string[] = [];

afterAll(async () => {
  for (const key of Object.keys(actionEnv)) if (key !== 'SLURM_CONF') delete process.env[key];
  for (const c of clients) {
    for (const id of jobIds) await c.cancel(id).catch(() => {});
    await c.close();
  }
});

/** The job's environment file in slurmctld's state save location. */
function spoolEnvironment(jobId: string): string {
  const ctld = join(env.stateDir, 'spool', 'ctld');
  for (const hash of readdirSync(ctld).filter((d) => d.startsWith('hash.'))) {
    const file = join(ctld, hash, `job.${jobId}`, 'environment');
    if (existsSync(file)) return readFileSync(file, 'latin1');
  }
  throw new Error(`no spool environment for job ${jobId} under ${ctld}`);
}

/** The environment of every process of a running job: found by SLURM_JOB_ID in each /proc/PID/environ. */
function processEnvironments(jobId: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^[0-9]+$/.test(d))) {
    try {
      const e = readFileSync(`/proc/${pid}/environ`, 'latin1');
      if (e.includes(`\0SLURM_JOB_ID=${jobId}\0`) || e.startsWith(`SLURM_JOB_ID=${jobId}\0`)) out.push(e);
    } catch {
      // another user's process, or one that ended between the listing and the read
    }
  }
  return out;
}

describe.each(['local', 'ssh'] as const)('the %s transport', (kind) => {
  const client = kind === 'local' ? createSlurmClient(createLocalTransport()) : makeClient('ssh', env);
  clients.push(client);
  const exp = experimentId(`env${kind}`);

  it('hands no secret of the action to the job: not in the spool, not in its processes', async () => {
    const name = jobName(exp, 'probe');
    const argv = sbatchArgv(env, { name, script: 'sleep 60', gpus: 1, exclusive: false });
    const id = await client.submit(argv, { DESCRIPTION: 'env-probe' });
    jobIds.push(id);
    const spool = spoolEnvironment(id);
    expect(spool).not.toContain(PROBE);
    expect(spool).not.toMatch(/(^|\0)(INPUT_|GITHUB_|ACTIONS_|RUNNER_|TOPO_SSH_KEY)/);
    expect(spool).toContain('DESCRIPTION=env-probe');
    expect(spool).toMatch(/(^|\0)PATH=/);
    await waitForJob(
      client,
      `topo-${exp}-`,
      (j) => j.id === id && j.state === 'RUNNING',
      'the probe job to run',
    );
    let environs: string[] = [];
    for (let i = 0; i < 40 && environs.length === 0; i++) {
      environs = processEnvironments(id);
      if (environs.length === 0) await new Promise((r) => setTimeout(r, 250));
    }
    expect(environs.length).toBeGreaterThan(0);
    for (const e of environs) {
      expect(e).not.toContain(PROBE);
      expect(e).not.toMatch(/(^|\0)(INPUT_|GITHUB_TOKEN|ACTIONS_|TOPO_SSH_KEY)/);
    }
  });

  it('refuses an sbatch that would export more than the allowlist', async () => {
    const argv = sbatchArgv(env, { name: jobName(exp, 'all'), script: 'true', gpus: 1, exclusive: false });
    await expect(client.submit([...argv.slice(0, 2), '--export=ALL', ...argv.slice(2)])).rejects.toThrow(
      UnsafeArgumentError,
    );
    await expect(client.submit([...argv.slice(0, 2), '--export=NONE', ...argv.slice(2)])).rejects.toThrow(
      /only --export=PATH/,
    );
    expect(SBATCH_EXPORT_FLAG).toMatch(/^--export=PATH,HOME,USER,LANG,/);
  });

  it('reads job times in UTC whatever the runner zone', async () => {
    const name = jobName(exp, 'clock');
    const id = await client.submit(sbatchArgv(env, { name, script: 'true', gpus: 1, exclusive: false }));
    jobIds.push(id);
    await waitForJob(client, `topo-${exp}-`, (j) => j.id === id, 'the clock job');
    const zone = process.env.TZ;
    process.env.TZ = 'Pacific/Kiritimati'; // UTC+14: a runner far from the cluster
    try {
      const jobs = await slurmMonitorPort(client).jobs(exp);
      const submitted = jobs.find((j) => j.jobId === id)?.submitTs as number;
      expect(Math.abs(submitted - Date.now() / 1000)).toBeLessThan(120);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });
});
