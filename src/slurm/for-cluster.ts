// A SlurmClient for one cluster definition of topologies/clusters.yaml (or TOPO_CLUSTERS_FILE).
import { readFileSync } from 'node:fs';
import type { Cluster } from '../types/generated/clusters.js';
import { createSlurmClient, type SlurmClientOptions } from './client.js';
import { SlurmConfigError } from './errors.js';
import { createLocalTransport } from './local-transport.js';
import { createSshTransport } from './ssh-transport.js';
import type { SlurmClient, Transport } from './types.js';

/**
 * The SSH private key: TOPO_SSH_KEY (the key text, e.g. from a repository secret) or TOPO_SSH_KEY_FILE
 * (a path on the runner). Never from the cluster file, which is committed.
 */
export function sshPrivateKey(env: NodeJS.ProcessEnv): string {
  const text = env.TOPO_SSH_KEY;
  if (text && text.trim() !== '') return text.endsWith('\n') ? text : `${text}\n`;
  const file = env.TOPO_SSH_KEY_FILE;
  if (file && file.trim() !== '') {
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      throw new SlurmConfigError(`TOPO_SSH_KEY_FILE=${file} cannot be read: ${(error as Error).message}`);
    }
  }
  throw new SlurmConfigError(
    'the cluster uses the ssh transport but no private key is configured: set TOPO_SSH_KEY (the key text, e.g. a secret) or TOPO_SSH_KEY_FILE (a path)',
  );
}

export interface ClientForClusterOptions extends SlurmClientOptions {
  env?: NodeJS.ProcessEnv;
  commandTimeoutMs?: number;
  connectTimeoutMs?: number;
}

export function slurmClientForCluster(
  name: string,
  cluster: Cluster,
  options: ClientForClusterOptions = {},
): SlurmClient {
  return createSlurmClient(transportForCluster(name, cluster, options), options);
}

/** The transport a cluster entry names (local, or SSH with the pinned host key). */
export function transportForCluster(
  name: string,
  cluster: Cluster,
  options: ClientForClusterOptions = {},
): Transport {
  const env = options.env ?? process.env;
  if (cluster.transport === 'local') {
    // Only the allowlist of `env` reaches the commands (PATH, HOME, USER, LANG, SLURM_CONF).
    return createLocalTransport({ timeoutMs: options.commandTimeoutMs, inherit: env });
  }
  if (!cluster.host || !cluster.user || !cluster.known_host_key) {
    throw new SlurmConfigError(`cluster ${name}: transport ssh needs host, user and known_host_key`);
  }
  return createSshTransport({
    host: cluster.host,
    port: cluster.port ?? 22,
    user: cluster.user,
    knownHostKey: cluster.known_host_key,
    privateKey: sshPrivateKey(env),
    commandTimeoutMs: options.commandTimeoutMs,
    connectTimeoutMs: options.connectTimeoutMs,
  });
}
