// Setup file of the integration project: the worker with VITEST_POOL_ID k runs its files on test cluster
// k (scripts/test-clusters.mjs), through the environment every part reads: scripts/local-cluster (and so
// requireCluster, private clusters, the demo), the CLI and actions the tests spawn, and Slurm's commands.
import { testClusterEnv } from '../../scripts/test-clusters.mjs';

Object.assign(process.env, testClusterEnv(Number(process.env.VITEST_POOL_ID ?? '1')));
