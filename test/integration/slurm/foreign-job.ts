// Issue 40 item 1 (high): another cluster user with no GitHub access submits a job without a time
// limit (`--time=UNLIMITED` on a partition with MaxTime=INFINITE); squeue prints its EndTime as
// `NONE`. Before, the strict parser threw for the whole listing (it listed every user's jobs), and
// every `/topo` command, every monitor pass and `topo jobs` failed until that job ended. A second
// foreign job carries one of the experiment's run names and a comment like the bot's: never ours.
// On a private cluster of the file's own, with accounting and without (two files).
import { describe, expect, it } from 'vitest';
import { useActionTestbed, workersCandidate } from '../../support/action-fixture.js';
import { runTopo } from '../../support/cli.js';
import { squeueFields, submitForeignJob, untilRunning } from '../../support/foreign-job.js';

export function foreignJobSuite(accounting: boolean): void {
  const t = useActionTestbed({
    tag: accounting ? 'fja' : 'fjn',
    cluster: 'private',
    accounting,
    pulls: { one: { title: 'one idea', files: { 'a.yaml': workersCandidate('a', 8) } } },
  });

  describe(`another user's jobs, ${accounting ? 'with' : 'without'} accounting`, () => {
    it('an UNLIMITED job and one under a run name stop no command, no pass, no CLI; neither is touched', async () => {
      const env = t.privateCluster.env;
      const forever = ['--partition=debug', '--time=UNLIMITED', '--wrap', 'sleep 3600'];
      const unlimited = submitForeignJob(env, ['--job-name=sleepy', ...forever]);
      const posing = submitForeignJob(env, [
        `--job-name=topo-${t.experimentId}-a-0123abcd-0badc0de`,
        '--comment=topo:0badc0de',
        ...forever,
      ]);
      await untilRunning(env, unlimited);
      await untilRunning(env, posing);
      // What the strict parser could not read: an unlimited running job's end.
      expect(squeueFields(env, unlimited, 'EndTime:0|,TimeLimit:0|,UserName:0')).toBe(
        'NONE|UNLIMITED|topo-other',
      );
      const pull = t.pull('one');
      const answered = async (body: string) => {
        const run = await t.command(pull, body);
        expect(run.exitCode, run.stderr + run.stdout).toBe(0);
        expect(['unavailable', 'failed'], `${body}: ${run.reply}`).not.toContain(run.outputs.outcome);
        expect(run.reply).not.toMatch(/unexpected output|Cluster unreachable/);
        return run;
      };
      const pass = async () => {
        const run = await t.monitor();
        expect(run.exitCode, run.stderr + run.stdout).toBe(0);
        return JSON.parse(run.outputs.states ?? '{}') as Record<string, string>;
      };

      await answered('/topo submit a');
      const [ours, ...more] = await t.jobs();
      expect(more).toEqual([]);
      expect(ours?.name).toMatch(t.runName('a'));
      expect(ours?.user).toBe('root');
      expect(ours?.id).not.toBe(posing);
      const states = await pass();
      expect(Object.keys(states).filter((n) => t.runName('a').test(n))).toEqual([ours?.name]);
      for (const body of [
        '/topo status',
        '/topo help',
        '/topo stop a',
        '/topo learn foreign jobs are not ours',
      ])
        await answered(body);
      await pass();
      for (const body of ['/topo reject not now', '/topo conclude', '/topo state rebuild', '/topo cancel a'])
        await answered(body);
      await pass();
      expect(await t.live('a')).toEqual([]);

      const cli = await runTopo(['jobs', t.experimentId, '--json'], t.workspace, {
        ...process.env,
        SLURM_CONF: env.slurmConf,
      });
      expect(cli.code, cli.stderr).toBe(0);
      const listed = JSON.parse(cli.stdout) as { jobs: { id: string }[] };
      expect(listed.jobs.map((j) => j.id)).toEqual([ours?.id]);

      // Neither foreign job was cancelled, adopted or counted.
      expect(squeueFields(env, unlimited, 'State:0')).toBe('RUNNING');
      expect(squeueFields(env, posing, 'State:0')).toBe('RUNNING');
      expect(t.gh.violations()).toEqual([]);
    }, 600_000);
  });
}
