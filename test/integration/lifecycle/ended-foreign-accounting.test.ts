// Issue 40 item 1 with accounting: an ended job under a run's name that only accounting still knows
// (the controller forgot it) is judged by the comment sacct keeps. Before, the local cluster's
// slurm.conf lacked `AccountingStoreFlags=job_comment`: sacct printed no comment, so a job whose
// comment names another Request read as unmarked, and the CLI (no bot state) took it as the run by its
// name, and the monitor's port adopted it when its job id was a recorded one (ids start again at 1
// after a controller loses its state). Now sacct keeps the comment and the job is a conflict.
// Issue 40 (flaky, withdrawn): the job ran `exit 3`, a fraction of a second, and the backfill started
// it on a controller that had just come up; about half the time slurmdbd then heard of it first by its
// end, and Slurm 22.05 records such a job from its completion alone (as_mysql_job_complete →
// job_start with no name): JobName `allocation`, Eligible `Unknown`. sacct's time window (what the
// listing asks) never lists a job without an eligible time, and the name is not the run's: the job was
// in `sacct --jobs=<id>` but not in the listing. So the job runs two seconds, and the test waits until
// the listing's own kind of query (a window, by name) shows it, before the controller forgets it.
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
        'sleep 2; exit 3',
      ],
      15_000,
      env,
    )
      .trim()
      .split(';')[0] as string;
    // Asked as the listing asks (a time window, not --jobs): a job slurmdbd first hears of by its end
    // is kept as `allocation` with no eligible time, outside every window (see the note above).
    const sacct = () =>
      clusterCommand(
        [
          'sacct',
          '--noheader',
          '--parsable2',
          '--allocations',
          '--starttime=now-1hours',
          `--name=${runName}`,
          '--format=JobID,State,Comment',
        ],
        15_000,
        env,
      ).trim();
    for (let i = 0; i < 150 && !sacct().includes('FAILED'); i++) await new Promise((r) => setTimeout(r, 200));
    expect(sacct()).toBe(`${id}|FAILED|topo:11111111`);

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
