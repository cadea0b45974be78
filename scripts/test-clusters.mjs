#!/usr/bin/env node
// The integration tests run on several local clusters at once, one per vitest worker (TOPO_TEST_CLUSTERS,
// set by scripts/test-with-cluster.sh). Cluster 1 is the one `scripts/local-cluster` reaches with the
// environment as it is (its defaults or the TOPO_CLUSTER_* already exported); cluster k > 1 has the state
// folder `<state>-k` and every port shifted by 25·(k−1) (Prometheus by 5·(k−1)). The shifts stay clear
// of each cluster's own private clusters (privateClusterPorts: +400+100·slot, Prometheus +100+20·slot)
// for up to four clusters; test/unit/ci/test-clusters.test.ts checks that no two ports meet.
//
//   node scripts/test-clusters.mjs env <k>   shell exports that make scripts/local-cluster, the CLI and
//                                            Slurm's commands reach cluster k
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The most clusters the port shifts keep apart (see above). */
export const MAX_TEST_CLUSTERS = 4;

/** How many clusters the integration tests use: TOPO_TEST_CLUSTERS, else 1. */
export function testClusterCount(env = process.env) {
  const text = env.TOPO_TEST_CLUSTERS ?? '1';
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > MAX_TEST_CLUSTERS) {
    throw new Error(
      `TOPO_TEST_CLUSTERS=${JSON.stringify(text)}: a whole number from 1 to ${MAX_TEST_CLUSTERS}`,
    );
  }
  return n;
}

/**
 * The variables that reach test cluster `index` (1-based), given the environment that reaches cluster 1.
 * Cluster 1 needs none: `{}`.
 */
export function testClusterEnv(index, env = process.env) {
  if (!Number.isInteger(index) || index < 1 || index > MAX_TEST_CLUSTERS) {
    throw new Error(`test cluster ${index}: a whole number from 1 to ${MAX_TEST_CLUSTERS}`);
  }
  if (index === 1) return {};
  const shift = index - 1;
  const state = `${env.TOPO_CLUSTER_STATE || join(repo, '.state/local-cluster')}-${index}`;
  return {
    TOPO_CLUSTER_STATE: state,
    ...shiftedPorts(env, 25 * shift, 5 * shift),
    SLURM_CONF: join(state, 'slurm.conf'),
  };
}

/**
 * Ports of private cluster `slot` (1, 2, …) of a test (test/support/private-cluster.ts), beside the test
 * cluster that `env` reaches: its ports plus 400+100·slot (Prometheus plus 100+20·slot).
 */
export function privateClusterPorts(slot, env = process.env) {
  return shiftedPorts(env, 400 + 100 * slot, 100 + 20 * slot);
}

/** scripts/local-cluster's default ports. */
const DEFAULT_PORTS = {
  TOPO_CLUSTER_SLURMCTLD_PORT: 16817,
  TOPO_CLUSTER_SLURMD_PORT: 16818,
  TOPO_CLUSTER_SSH_PORT: 2222,
};

/** The ports `env` reaches (or the defaults), Slurm's and sshd's plus `shift`, Prometheus's plus `prometheusShift`. */
function shiftedPorts(env, shift, prometheusShift) {
  const ports = {};
  for (const [name, fallback] of Object.entries(DEFAULT_PORTS))
    ports[name] = String(Number(env[name] ?? fallback) + shift);
  ports.TOPO_CLUSTER_PROMETHEUS_PORT = String(
    Number(env.TOPO_CLUSTER_PROMETHEUS_PORT ?? 9093) + prometheusShift,
  );
  return ports;
}

const quote = (s) => `'${String(s).replaceAll("'", "'\\''")}'`;

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [command, k] = process.argv.slice(2);
  if (command !== 'env' || !k) {
    console.error('usage: node scripts/test-clusters.mjs env <k>');
    process.exit(2);
  }
  try {
    for (const [name, value] of Object.entries(testClusterEnv(Number(k))))
      console.log(`export ${name}=${quote(value)}`);
  } catch (error) {
    console.error(`test-clusters: ${error.message}`);
    process.exit(2);
  }
}
