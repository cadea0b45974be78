// Types of scripts/test-clusters.mjs (vitest.config.ts and test/support/worker-cluster.ts import it).
export declare const MAX_TEST_CLUSTERS: number;
export declare function testClusterCount(env?: NodeJS.ProcessEnv): number;
export declare function testClusterEnv(index: number, env?: NodeJS.ProcessEnv): Record<string, string>;
export declare function privateClusterPorts(slot: number, env?: NodeJS.ProcessEnv): Record<string, string>;
