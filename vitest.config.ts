import { defineConfig } from 'vitest/config';
import { testClusterCount } from './scripts/test-clusters.mjs';

// Two projects: unit tests are pure; integration and e2e tests talk to the real local Slurm,
// Prometheus, sshd and the local GitHub API. Integration files run TOPO_TEST_CLUSTERS at a time
// (scripts/test-with-cluster.sh sets 2; plain `npm test` 1), each on a local cluster of its own: the
// worker with VITEST_POOL_ID k reaches cluster k (test/support/worker-cluster.ts). Both projects share
// those workers, so the unit files fill the time the integration files spend waiting on Slurm.
const clusters = testClusterCount();
const workers = { maxWorkers: clusters, fileParallelism: clusters > 1 };

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 30_000,
          ...(clusters > 1 ? workers : {}),
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          setupFiles: ['test/support/worker-cluster.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
          ...workers,
        },
      },
    ],
  },
});
