// A name is not an owner (issue 40 item 1, invariant 21). Before, any job of the login under a run's
// name was the run: a job made by hand (same login, no comment, or another Request's comment) under
// a queued Request's name was adopted as its run, `/topo cancel` scancelled it, a finished one made
// the candidate `failed`, and a live one held the experiment's only slot. Now submission writes the
// Request into the job (`--comment=topo:<request id>`) and every read checks it: such a job is a
// conflict shown on the candidate's comment, never adopted, cancelled, judged or counted. On a
// private cluster of the file's own, with accounting and without (two files).
import { describe, expect, it } from 'vitest';
import { parseRunStateBlock } from '../../../src/lifecycle/state-block.js';
import { useActionTestbed, workersCandidate } from '../../support/action-fixture.js';
import { runTopo } from '../../support/cli.js';
import { clusterCommand } from '../../support/cluster.js';
import { squeueFields, untilRunning } from '../../support/foreign-job.js';

export function ownershipSuite(accounting: boolean): void {
  const t = useActionTestbed({
    tag: accounting ? 'owa' : 'own',
    cluster: 'private',
    accounting,
    experiment: { maxParallel: 1 },
    pulls: {
      first: { title: 'first idea', files: { 'b.yaml': workersCandidate('b', 4) } },
      later: { title: 'later idea', files: { 'a.yaml': workersCandidate('a', 8) } },
    },
  });
  const state = (pull: string) => parseRunStateBlock(t.sticky(t.pull(pull), 'lifecycle') || undefined);
  /** A job of the test's own login (root) made by hand, as `sbatch` on the login node would. */
  const byHand = (args: string[]) =>
    clusterCommand(
      ['sbatch', '--parsable', '--chdir=/tmp', '--output=/dev/null', '--partition=debug', ...args],
      15_000,
      t.privateCluster.env,
    )
      .trim()
      .split(';')[0] as string;
  const stateOf = (id: string) => squeueFields(t.privateCluster.env, id, 'State:0');
  const ok = async (pull: string, body: string) => {
    const run = await t.command(t.pull(pull), body);
    expect(run.outputs.outcome, `${body}: ${run.reply}`).toBe('done');
    return run;
  };
  const pass = async () => {
    const run = await t.monitor();
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);
    return JSON.parse(run.outputs.states ?? '{}') as Record<string, string>;
  };

  describe(`jobs under a queued Request's name that are not its run, ${accounting ? 'with' : 'without'} accounting`, () => {
    it('are never adopted, cancelled, judged or counted against the slot; the comment names them', async () => {
      await ok('first', '/topo submit');
      const [b] = await t.live('b');
      expect(b?.comment).toMatch(/^topo:[0-9a-f]{8}$/); // the Request written into the job
      await ok('later', '/topo submit');
      const queued = state('later').requests[0];
      if (!queued) throw new Error('no Request for a');
      expect(state('later').runs[queued.id]).toBeUndefined(); // max_parallel 1: it waits

      // A finished job under its name, alone: the candidate is not judged failed from it.
      const failed = byHand([`--job-name=${queued.runName}`, '--wrap', 'exit 3']);
      for (let i = 0; i < 100 && !/FAILED|COMPLETED/.test(stateOf(failed)); i++)
        await new Promise((r) => setTimeout(r, 200));
      expect(stateOf(failed)).toBe('FAILED');
      expect((await pass())[queued.runName] ?? 'queued').toBe('queued');
      expect(state('later').outcomes[queued.id]).toBeUndefined();
      expect(t.pull('later').labels).not.toContain('topology:failed');

      const forever = ['--time=UNLIMITED', '--wrap', 'sleep 3600'];
      const plain = byHand([`--job-name=${queued.runName}`, ...forever]);
      const another = byHand([`--job-name=${queued.runName}`, '--comment=topo:11111111', ...forever]);
      await untilRunning(t.privateCluster.env, plain);
      await untilRunning(t.privateCluster.env, another);
      const states = await pass();
      expect(states[queued.runName] ?? 'queued').toBe('queued');
      expect(state('later').runs[queued.id]).toBeUndefined();
      expect(state('later').outcomes[queued.id]).toBeUndefined();
      expect(t.pull('later').labels).not.toContain('topology:failed');
      expect(t.pull('later').labels).not.toContain('topology:running');
      const comment = t.sticky(t.pull('later'), 'monitor-a');
      for (const id of [plain, another])
        expect(comment).toMatch(new RegExp(`Slurm job ${id} carries this run.s name`));

      // The CLI, with no bot state: another Request's job is a conflict it names, never a run.
      const cli = await runTopo(['status', t.experimentId, '--json'], t.workspace, {
        ...process.env,
        SLURM_CONF: t.privateCluster.env.slurmConf,
      });
      expect(cli.code, cli.stderr).toBe(0);
      const status = JSON.parse(cli.stdout) as { warnings: string[] };
      expect(status.warnings.join('\n')).toMatch(new RegExp(`Slurm job ${another} carries this run.s name`));

      // The slot: b ends, and the queued Request runs beside the live jobs under its name.
      await ok('first', '/topo cancel');
      await pass();
      const run = state('later').runs[queued.id];
      expect(run?.jobId).toBeDefined();
      expect([plain, another, failed]).not.toContain(run?.jobId);
      expect(stateOf(run?.jobId as string)).toMatch(/PENDING|RUNNING/);

      // /topo cancel reaches its own run only.
      await ok('later', '/topo cancel a');
      await pass();
      expect(stateOf(run?.jobId as string)).toMatch(/CANCELLED|^$/);
      expect(stateOf(plain)).toBe('RUNNING');
      expect(stateOf(another)).toBe('RUNNING');
      expect(state('later').outcomes[queued.id]?.kind).toBe('cancelled');
      expect(t.gh.violations()).toEqual([]);
    }, 900_000);
  });
}
