// Another cluster user's job (issue 40): a second Unix account, `topo-other`, made on first use, whose
// jobs root submits with `sbatch --uid` (only root may). What a colleague with no GitHub access does
// on the same cluster: the bot must neither break on such a job nor take it for one of its runs.
import { execFileSync } from 'node:child_process';
import { clusterCommand, type LocalClusterEnv } from './cluster.js';

export const FOREIGN_USER = 'topo-other';

/** Makes the account when it is missing (no home folder, no login shell); must run as root. */
export function ensureForeignUser(): void {
  if (process.getuid?.() !== 0)
    throw new Error(
      `a foreign user's job needs root (useradd, sbatch --uid=${FOREIGN_USER}): run the tests as root`,
    );
  const exists = () => {
    try {
      execFileSync('id', [FOREIGN_USER], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  if (exists()) return;
  try {
    execFileSync('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', FOREIGN_USER], {
      stdio: 'pipe',
    });
  } catch (error) {
    if (!exists()) throw error; // another test made it at the same moment: fine
  }
}

/** Submits `sbatch <args>` as the foreign user on `env`'s cluster; its job id. */
export function submitForeignJob(env: LocalClusterEnv, args: readonly string[]): string {
  ensureForeignUser();
  const out = clusterCommand(
    ['sbatch', '--parsable', `--uid=${FOREIGN_USER}`, '--chdir=/tmp', '--output=/dev/null', ...args],
    15_000,
    env,
  );
  return out.trim().split(';')[0] as string;
}

/** squeue's line for one job, in the given -O fields (e.g. `State:0|,EndTime:0`), all users. */
export function squeueFields(env: LocalClusterEnv, id: string, format: string): string {
  return clusterCommand(
    ['squeue', '--noheader', '--states=all', `--jobs=${id}`, `-O`, format],
    15_000,
    env,
  ).trim();
}

/** Waits until the job runs (a few seconds on an idle node). */
export async function untilRunning(env: LocalClusterEnv, id: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (squeueFields(env, id, 'State:0') === 'RUNNING') return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`foreign job ${id} never ran: ${squeueFields(env, id, 'State:0|,Reason:0')}`);
}
