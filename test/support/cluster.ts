// The local cluster (scripts/local-cluster) as integration tests see it. Tests never skip: when the
// cluster is down, requireCluster() throws an error that says how to bring it up.
import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface LocalClusterEnv {
  stateDir: string;
  clustersFile: string;
  fileSdDir: string;
  prometheusUrl: string;
  sshPort: number;
  sshUser: string;
  sshKeyPath: string;
  sshKnownHostKey: string;
  timeScale: number;
  runDir: string;
  /** The cluster's slurm.conf (also linked from /etc/slurm/slurm.conf when that was free). */
  slurmConf: string;
  /** Whether slurmdbd runs (TOPO_CLUSTER_ACCOUNTING=on): sacct answers. */
  accounting?: boolean;
  up: boolean;
}

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const script = resolve(repoRoot, 'scripts/local-cluster');

let cached: LocalClusterEnv | undefined;

/** The local cluster's env, or a clear error when it is not up. Sets SLURM_CONF for this process. */
export function requireCluster(): LocalClusterEnv {
  if (cached) return cached;
  let env: LocalClusterEnv;
  try {
    const out = execFileSync('bash', [script, 'env', '--json'], { encoding: 'utf8', timeout: 15_000 });
    env = JSON.parse(out) as LocalClusterEnv;
  } catch (error) {
    throw new Error(
      `local cluster is not up: run \`bash scripts/local-cluster up\` (reading its env failed: ${(error as Error).message})`,
    );
  }
  if (!env.up) {
    throw new Error(
      `local cluster is not up: run \`bash scripts/local-cluster up\` (\`bash scripts/local-cluster status\` in ${env.stateDir} shows what is stopped)`,
    );
  }
  // Commands run by the local transport inherit this, so a real /etc/slurm/slurm.conf elsewhere is not used.
  process.env.SLURM_CONF = env.slurmConf;
  cached = env;
  return env;
}

/** Runs an admin command on the cluster (scontrol, sinfo...) as a test would type it; `env`: another cluster. */
export function clusterCommand(argv: string[], timeoutMs = 15_000, env = requireCluster()): string {
  const [cmd, ...args] = argv;
  if (!cmd) throw new Error('clusterCommand: empty argv');
  return execFileSync(cmd, args, {
    encoding: 'utf8',
    timeout: timeoutMs,
    env: { ...process.env, SLURM_CONF: env.slurmConf },
  });
}
