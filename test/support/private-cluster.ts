// A second local cluster of the test's own (scripts/local-cluster with its own state folder and
// ports), for tests that must disturb the controller itself (restart it with its state wiped)
// without touching the shared cluster's jobs. It runs beside the shared one: its own munged key and
// socket, slurmctld, slurmd, sshd and Prometheus, ports offset from the shared cluster's.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LocalClusterEnv } from './cluster.js';
import { repoRoot } from './cluster.js';

const script = join(repoRoot, 'scripts/local-cluster');

export interface PrivateCluster {
  env: LocalClusterEnv;
  /** Kills slurmctld and starts it again with an empty state folder (`-c`): Slurm forgets every job. */
  restartControllerWiped(): void;
  /** Stops every daemon it started and removes its state folder. */
  stop(): void;
}

/** Ports: the shared cluster's (ports.sh or the defaults) plus an offset, so neither meets the other. */
function privatePorts(): Record<string, string> {
  const base = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
  return {
    TOPO_CLUSTER_SLURMCTLD_PORT: String(base('TOPO_CLUSTER_SLURMCTLD_PORT', 16817) + 500),
    TOPO_CLUSTER_SLURMD_PORT: String(base('TOPO_CLUSTER_SLURMD_PORT', 16818) + 500),
    TOPO_CLUSTER_SSH_PORT: String(base('TOPO_CLUSTER_SSH_PORT', 2222) + 500),
    TOPO_CLUSTER_PROMETHEUS_PORT: String(base('TOPO_CLUSTER_PROMETHEUS_PORT', 9093) + 50),
  };
}

export function startPrivateCluster(): PrivateCluster {
  const state = mkdtempSync(join(tmpdir(), 'topo-private-cluster-'));
  const env: NodeJS.ProcessEnv = { ...process.env, ...privatePorts(), TOPO_CLUSTER_STATE: state };
  delete env.SLURM_CONF; // the script sets its own
  const run = (...args: string[]) =>
    execFileSync('bash', [script, ...args], { env, encoding: 'utf8', timeout: 120_000, stdio: 'pipe' });
  try {
    run('up');
  } catch (error) {
    run('down');
    rmSync(state, { recursive: true, force: true });
    throw new Error(`the private cluster did not come up: ${(error as Error).message}`);
  }
  const info = JSON.parse(run('env', '--json')) as LocalClusterEnv;
  return {
    env: info,
    restartControllerWiped() {
      const pid = Number(readFileSync(join(state, 'run/slurmctld.pid'), 'utf8').trim());
      process.kill(pid, 'SIGTERM');
      for (let i = 0; i < 100; i++) {
        try {
          process.kill(pid, 0);
        } catch {
          break; // gone
        }
        execFileSync('sleep', ['0.1']);
      }
      run('up'); // a controller that is not running starts with a wiped state folder and -c
    },
    stop() {
      try {
        run('down');
      } finally {
        rmSync(state, { recursive: true, force: true });
      }
    },
  };
}
