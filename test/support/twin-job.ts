// The twin as a Slurm job: scripts/alpasim-twin/submit.sh (which runs dist/topo.js) on one whole
// node, named `runName`, with AlpaSim's Hydra overrides, as the monitor's submit would start it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { requestComment } from '../../src/topology/run-name.js';
import type { LocalClusterEnv } from './cluster.js';
import { repoRoot } from './cluster.js';

/** Fails clearly when the bundle the job runs is missing (its staleness is the check-dist test's job). */
export function requireTwinBundle(): void {
  if (!existsSync(join(repoRoot, 'dist/topo.js')))
    throw new Error('dist/topo.js is missing: run `npm run build` (the Slurm job runs the bundle)');
}

/** sbatch's arguments (without `sbatch`) for the twin job; its log folder is made. */
export function twinJobArgs(
  cluster: Pick<LocalClusterEnv, 'runDir'>,
  runName: string,
  overrides: readonly string[],
): string[] {
  const logDir = join(cluster.runDir, 'slurm_output');
  mkdirSync(logDir, { recursive: true });
  // a Request's run carries its id in the job, as submission writes it (invariant 21)
  const label = /-[0-9a-f]{8}-([0-9a-f]{8})$/.exec(runName)?.[1];
  return [
    '--parsable',
    `--job-name=${runName}`,
    ...(label ? [`--comment=${requestComment(label)}`] : []),
    '--nodes=1',
    '--gpus-per-node=8',
    '--time=00:10:00',
    `--output=${join(logDir, `${runName}_%j.log`)}`,
    join(repoRoot, 'scripts/alpasim-twin/submit.sh'),
    ...overrides,
    `wizard.run_name=${runName}`,
  ];
}

/** Submits the twin job with the sbatch of this process's SLURM_CONF; its job id. */
export function sbatchTwin(
  cluster: Pick<LocalClusterEnv, 'runDir'>,
  runName: string,
  overrides: readonly string[],
): string {
  const out = execFileSync('sbatch', twinJobArgs(cluster, runName, overrides), { encoding: 'utf8' });
  return out.trim().split(';')[0] as string;
}
