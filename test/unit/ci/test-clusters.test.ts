// scripts/test-clusters.mjs: the integration workers' clusters and each one's private clusters never
// share a port or a state folder, with the default ports and with a developer's own.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  MAX_TEST_CLUSTERS,
  privateClusterPorts,
  testClusterCount,
  testClusterEnv,
} from '../../../scripts/test-clusters.mjs';
import { repoRoot } from '../../support/cluster.js';

/** Every port a cluster started with these variables listens on (scripts/local-cluster's layout). */
function portsOf(env: NodeJS.ProcessEnv): number[] {
  const ctld = Number(env.TOPO_CLUSTER_SLURMCTLD_PORT ?? 16817);
  const slurmd = Number(env.TOPO_CLUSTER_SLURMD_PORT ?? 16818);
  return [
    ctld,
    ctld + 20, // slurmdbd
    ctld + 21, // MariaDB
    ...[0, 1, 2, 3].map((n) => slurmd + n), // node1..node4
    Number(env.TOPO_CLUSTER_SSH_PORT ?? 2222),
    Number(env.TOPO_CLUSTER_PROMETHEUS_PORT ?? 9093),
  ];
}

const developer = {
  TOPO_CLUSTER_STATE: '/tmp/dev-cluster',
  TOPO_CLUSTER_SLURMCTLD_PORT: '18817',
  TOPO_CLUSTER_SLURMD_PORT: '18818',
  TOPO_CLUSTER_SSH_PORT: '2302',
  TOPO_CLUSTER_PROMETHEUS_PORT: '9302',
};

describe('test clusters', () => {
  it.each([
    ['the defaults', {}],
    ["a developer's ports", developer],
  ])('with %s, no two clusters or private clusters share a port', (_, base: NodeJS.ProcessEnv) => {
    const owners = new Map<number, string>();
    for (let k = 1; k <= MAX_TEST_CLUSTERS; k++) {
      const cluster = { ...base, ...testClusterEnv(k, base) };
      const all: [string, NodeJS.ProcessEnv][] = [[`cluster ${k}`, cluster]];
      for (const slot of [1, 2, 3])
        all.push([`cluster ${k} private ${slot}`, { ...cluster, ...privateClusterPorts(slot, cluster) }]);
      for (const [name, env] of all)
        for (const port of portsOf(env)) {
          expect(owners.get(port), `port ${port} of ${name}`).toBeUndefined();
          owners.set(port, name);
        }
    }
    expect(owners.size).toBe(MAX_TEST_CLUSTERS * 4 * 9);
  });

  it('cluster 1 is the environment as it is; cluster k has a state folder and slurm.conf of its own', () => {
    expect(testClusterEnv(1, developer)).toEqual({});
    expect(testClusterEnv(2, developer)).toMatchObject({
      TOPO_CLUSTER_STATE: '/tmp/dev-cluster-2',
      SLURM_CONF: '/tmp/dev-cluster-2/slurm.conf',
      TOPO_CLUSTER_SLURMCTLD_PORT: '18842',
    });
    expect(testClusterEnv(3, {}).TOPO_CLUSTER_STATE).toBe(join(repoRoot, '.state/local-cluster-3'));
  });

  it('refuses a count or index out of range with the allowed range', () => {
    expect(testClusterCount({})).toBe(1);
    expect(testClusterCount({ TOPO_TEST_CLUSTERS: '2' })).toBe(2);
    for (const bad of ['0', '5', 'two', '1.5'])
      expect(() => testClusterCount({ TOPO_TEST_CLUSTERS: bad })).toThrow(/a whole number from 1 to 4/);
    expect(() => testClusterEnv(0, {})).toThrow(/from 1 to 4/);
  });

  it('`env <k>` prints exports a shell can eval', () => {
    const out = execFileSync(
      'bash',
      ['-c', 'eval "$(node scripts/test-clusters.mjs env 2)" && echo "$TOPO_CLUSTER_STATE $SLURM_CONF"'],
      { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, ...developer } },
    );
    expect(out.trim()).toBe('/tmp/dev-cluster-2 /tmp/dev-cluster-2/slurm.conf');
  });
});
