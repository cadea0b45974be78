// A local cluster of the test's own (scripts/local-cluster with its own state folder and ports), for
// tests that must disturb the controller itself (kill it, restart it with its state wiped, turn
// accounting off) without touching the shared cluster's jobs. It runs beside the shared one: its own
// munged key and socket, slurmctld, slurmd, sshd and Prometheus (and, with accounting, its own
// MariaDB and slurmdbd), ports offset from the shared cluster's (scripts/test-clusters.mjs).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { privateClusterPorts } from '../../scripts/test-clusters.mjs';
import { clusterCommand, type LocalClusterEnv, repoRoot, requireCluster } from './cluster.js';

const script = join(repoRoot, 'scripts/local-cluster');

export interface PrivateCluster {
  env: LocalClusterEnv;
  /** The environment that reaches this cluster with `scripts/local-cluster` (state folder, ports). */
  scriptEnv: NodeJS.ProcessEnv;
  /** Kills slurmctld and starts it again with an empty state folder (`-c`): Slurm forgets every job. */
  restartControllerWiped(): void;
  /** Kills slurmctld (SIGKILL) and waits until it is gone; `up()` starts it again. */
  killController(): void;
  /** `scripts/local-cluster up` again with extra variables (e.g. TOPO_CLUSTER_ACCOUNTING=off). */
  up(extra?: NodeJS.ProcessEnv): void;
  /** Stops every daemon it started and removes its state folder. */
  stop(): void;
}

export interface PrivateClusterOptions {
  /** Its own slurmdbd and MariaDB, so sacct answers (TOPO_CLUSTER_ACCOUNTING=on). */
  accounting?: boolean;
  /** Which private cluster of the test (1, 2, …): each gets ports of its own. */
  slot?: number;
  /**
   * A folder that stands for /etc/slurm while the script runs (bind-mounted over it in a mount
   * namespace of its own, so the host's /etc/slurm is never touched): a test sets up the link the
   * host would hold, e.g. the default cluster's while that cluster is down, and reads it afterwards.
   */
  etcSlurm?: string;
}

function waitGone(pid: number): void {
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    execFileSync('sleep', ['0.1']);
  }
  throw new Error(`process ${pid} did not exit`);
}

export function startPrivateCluster(options: PrivateClusterOptions = {}): PrivateCluster {
  const state = mkdtempSync(join(tmpdir(), 'topo-private-cluster-'));
  const scriptEnv: NodeJS.ProcessEnv = {
    ...process.env,
    ...privateClusterPorts(options.slot ?? 1),
    TOPO_CLUSTER_STATE: state,
    TOPO_CLUSTER_ACCOUNTING: options.accounting ? 'on' : 'off',
  };
  delete scriptEnv.SLURM_CONF; // the script sets its own
  const argv = (args: string[]) =>
    options.etcSlurm
      ? [
          'unshare',
          '--mount',
          '--propagation',
          'private',
          'sh',
          '-c',
          'mount --bind "$0" /etc/slurm && exec bash "$@"',
          options.etcSlurm,
          script,
          ...args,
        ]
      : ['bash', script, ...args];
  const run = (args: string[], extra: NodeJS.ProcessEnv = {}) => {
    const [command, ...rest] = argv(args);
    return execFileSync(command!, rest, {
      env: { ...scriptEnv, ...extra },
      encoding: 'utf8',
      timeout: 180_000,
      stdio: 'pipe',
    });
  };
  try {
    run(['up']);
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    run(['down']);
    rmSync(state, { recursive: true, force: true });
    throw new Error(`the private cluster did not come up: ${e.stderr || e.message}`);
  }
  const info = JSON.parse(run(['env', '--json'])) as PrivateCluster['env'];
  const controllerPid = () => Number(readFileSync(join(state, 'run/slurmctld.pid'), 'utf8').trim());
  return {
    env: info,
    scriptEnv,
    restartControllerWiped() {
      const pid = controllerPid();
      process.kill(pid, 'SIGTERM');
      waitGone(pid);
      run(['up']); // a controller that is not running starts with a wiped state folder and -c
    },
    killController() {
      const pid = controllerPid();
      process.kill(pid, 'SIGKILL');
      waitGone(pid);
    },
    up(extra = {}) {
      run(['up'], extra);
    },
    stop() {
      try {
        run(['down']);
      } finally {
        rmSync(state, { recursive: true, force: true });
      }
    },
  };
}

/** One of the two Slurm setups every adapter test runs on: with accounting (slurmdbd) and without. */
export interface ClusterVariant {
  accounting: boolean;
  label: 'with accounting' | 'without accounting';
  /** The cluster's env; call it in hooks and tests (the private cluster starts on first use). */
  env(): LocalClusterEnv;
  /** An admin command (scontrol, sinfo...) on that cluster. */
  command(argv: string[], timeoutMs?: number): string;
}

/**
 * The shared cluster, and a private one of this test file with the other accounting setting (started
 * once on first use, ~10 s with accounting, and stopped after the file), without accounting first.
 * Call it at the top level of a test file.
 */
export function accountingVariants(): ClusterVariant[] {
  const shared = requireCluster();
  const sharedAccounting = shared.accounting === true;
  let own: PrivateCluster | undefined;
  afterAll(() => own?.stop());
  const privateEnv = () => {
    own ??= startPrivateCluster({ accounting: !sharedAccounting });
    return own.env;
  };
  const variant = (accounting: boolean, env: () => LocalClusterEnv): ClusterVariant => ({
    accounting,
    label: accounting ? 'with accounting' : 'without accounting',
    env,
    command: (argv, timeoutMs) => clusterCommand(argv, timeoutMs, env()),
  });
  const both = [variant(sharedAccounting, () => shared), variant(!sharedAccounting, privateEnv)];
  return both.sort((a, b) => Number(a.accounting) - Number(b.accounting));
}
