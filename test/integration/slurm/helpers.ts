// Shared by the Slurm integration tests: clients for the local cluster (directly and through SSH),
// hand-written sbatch argv (the adapter does not depend on the topology renderer), bounded polling.
import { existsSync, readFileSync } from 'node:fs';
import { createSlurmClient } from '../../../src/slurm/client.js';
import { createLocalTransport } from '../../../src/slurm/local-transport.js';
import { createSshTransport } from '../../../src/slurm/ssh-transport.js';
import type { SlurmClient, SlurmJob, Transport } from '../../../src/slurm/types.js';
import { type LocalClusterEnv, requireCluster } from '../../support/cluster.js';

export type TransportKind = 'local' | 'ssh';

export function makeTransport(
  kind: TransportKind,
  env: LocalClusterEnv,
  overrides: { port?: number; knownHostKey?: string } = {},
): Transport {
  if (kind === 'local') return createLocalTransport({ env: { SLURM_CONF: env.slurmConf } });
  return createSshTransport({
    host: '127.0.0.1',
    port: overrides.port ?? env.sshPort,
    user: env.sshUser,
    knownHostKey: overrides.knownHostKey ?? env.sshKnownHostKey,
    privateKey: readFileSync(env.sshKeyPath, 'utf8'),
    connectTimeoutMs: 5_000,
    backoffMs: 200,
  });
}

export function makeClient(kind: TransportKind, env = requireCluster()): SlurmClient {
  return createSlurmClient(makeTransport(kind, env));
}

/** A fresh experiment id per test run, so finished jobs of earlier runs (kept an hour) never match. */
export function experimentId(tag: string): string {
  const stamp = `${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
  return `topology-opt-it-${tag}-${stamp}-20260101`;
}

export function jobName(experiment: string, candidate: string, hash = '0123abcd'): string {
  return `topo-${experiment}-${candidate}-${hash}`;
}

export const TEST_PARTITION = 'debug';

export interface JobSpec {
  name: string;
  script: string;
  gpus?: number;
  exclusive?: boolean;
  mem?: string;
  requeue?: boolean;
  extra?: string[];
}

/** An sbatch argv shaped like the rendered one, with --wrap instead of the twin's submit script. */
export function sbatchArgv(env: LocalClusterEnv, spec: JobSpec): string[] {
  // The `debug` partition (node4): tests that set a node down or requeue never touch candidates on node1-3.
  const argv = [
    'sbatch',
    '--parsable',
    `--job-name=${spec.name}`,
    `--partition=${TEST_PARTITION}`,
    '--nodes=1',
    `--gpus-per-node=${spec.gpus ?? 8}`,
  ];
  if (spec.exclusive ?? true) argv.push('--exclusive');
  if (spec.mem) argv.push(`--mem=${spec.mem}`);
  if (spec.requeue === false) argv.push('--no-requeue');
  argv.push(
    '--time=00:05:00',
    `--output=${env.runDir}/slurm_output/${spec.name}_%j.log`,
    ...(spec.extra ?? []),
  );
  argv.push(`--wrap=${spec.script}`);
  return argv;
}

/** Polls until the node answers again after a resume (sinfo marks a node that has not yet with `*`). */
export async function waitForNodeInService(
  node: string,
  sinfo: () => string,
  timeoutMs = 45_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let state = '';
  while (Date.now() < deadline) {
    state = sinfo().trim();
    if (['idle', 'mixed', 'allocated'].includes(state)) return state;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`node ${node} did not return to service within ${timeoutMs} ms (state ${state})`);
}

export async function waitForJob(
  client: SlurmClient,
  prefix: string,
  predicate: (job: SlurmJob) => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<SlurmJob> {
  const deadline = Date.now() + timeoutMs;
  let last: SlurmJob[] = [];
  while (Date.now() < deadline) {
    last = await client.jobs(prefix);
    const hit = last.find(predicate);
    if (hit) return hit;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}; jobs: ${JSON.stringify(last.map((j) => [j.id, j.name, j.state, j.reason]))}`,
  );
}

/**
 * Waits until slurmd has launched the batch step (its output file exists): squeue says RUNNING as
 * soon as the job is allocated, a few hundred ms before; a cancel in between leaves no log to read.
 */
export async function waitForLaunch(job: SlurmJob, timeoutMs = 30_000): Promise<void> {
  const path = job.stdoutPath;
  if (!path) throw new Error(`job ${job.id} has no output path`);
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(path)) {
    if (Date.now() > deadline)
      throw new Error(`job ${job.id} did not start writing ${path} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
