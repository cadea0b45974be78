// Issue 40 item 1 with accounting: an ended job under a run's name that only accounting still knows
// (the controller forgot it) is judged by the comment sacct keeps. Before, the local cluster's
// slurm.conf lacked `AccountingStoreFlags=job_comment`: sacct printed no comment, so a job whose
// comment names another Request read as unmarked, and the CLI (no bot state) took it as the run by its
// name, and the monitor's port adopted it when its job id was a recorded one (ids start again at 1
// after a controller loses its state). Now sacct keeps the comment and the job is a conflict.
import { describe, expect, it } from 'vitest';
import { slurmMonitorPort } from '../../../src/monitor/adapters.js';
import { useActionTestbed } from '../../support/action-fixture.js';
import { runTopo } from '../../support/cli.js';
import { clusterCommand } from '../../support/cluster.js';

const t = useActionTestbed({ tag: 'efa', cluster: 'private', accounting: true });

describe('an ended job under a run name, known to accounting only', () => {
  it('whose comment names another Request is never the run: sacct keeps the comment', async () => {
    const env = t.privateCluster.env;
    const runName = `topo-${t.experimentId}-a-0123abcd-0badc0de`;
    const id = clusterCommand(
      [
        'sbatch',
        '--parsable',
        '--chdir=/tmp',
        '--output=/dev/null',
        '--partition=debug',
        `--job-name=${runName}`,
        '--comment=topo:11111111',
        '--wrap',
        'exit 3',
      ],
      15_000,
      env,
    )
      .trim()
      .split(';')[0] as string;
    const sacct = () =>
      clusterCommand(
        ['sacct', '--noheader', '--parsable2', '--allocations', `--jobs=${id}`, '--format=State,Comment'],
        15_000,
        env,
      ).trim();
    for (let i = 0; i < 150 && !sacct().startsWith('FAILED'); i++)
      await new Promise((r) => setTimeout(r, 200));
    expect(sacct()).toBe('FAILED|topo:11111111');

    t.privateCluster.restartControllerWiped(); // only accounting knows the job now
    const slurmEnv = { ...process.env, SLURM_CONF: env.slurmConf };
    const listed = await t.slurm.listing(`topo-${t.experimentId}-`);
    expect(listed.accounting).toBe('on');
    expect(listed.jobs.find((j) => j.id === id)?.comment).toBe('topo:11111111');

    // the monitor's port, even with the id among its recorded runs: a conflict, never the run
    const port = slurmMonitorPort(t.slurm);
    expect((await port.jobs(t.experimentId, new Set([id]))).map((j) => j.jobId)).not.toContain(id);
    expect(port.conflicts?.(t.experimentId).map((j) => j.jobId)).toEqual([id]);

    // the CLI, with no bot state: named among its warnings, not a candidate's run
    const cli = await runTopo(['status', t.experimentId, '--json'], t.workspace, slurmEnv);
    expect(cli.code, cli.stderr).toBe(0);
    const status = JSON.parse(cli.stdout) as { candidates: Array<{ job_id: string }>; warnings: string[] };
    expect(status.candidates.map((c) => c.job_id)).not.toContain(id);
    expect(status.warnings.join('\n')).toMatch(new RegExp(`Slurm job ${id} carries this run.s name`));
  }, 300_000);
});
