// The two lifecycle cases the unit tests held (issue 23), on a private local cluster with accounting
// and without: an ended (stopped) candidate whose job Slurm forgets (the controller restarted with its state
// wiped; with accounting sacct still remembers it) stays in its pull request's check and label, and
// `/topo cancel` of another candidate beside it keeps what the finished one earned.
import { describe, expect, it } from 'vitest';
import { parseCommentStamp } from '../../../src/report/comment-throttle.js';
import { useActionTestbed, workersCandidate } from '../../support/action-fixture.js';

export function finishedBesideSuite(accounting: boolean): void {
  const t = useActionTestbed({
    tag: accounting ? 'fba' : 'fbn',
    cluster: 'private',
    accounting,
    experiment: { maxParallel: 2 },
    pulls: {
      two: {
        title: 'two ideas',
        files: { 'a.yaml': workersCandidate('a', 16), 'b.yaml': workersCandidate('b', 8) },
      },
    },
  });
  const pull = () => t.pull('two');
  const check = () =>
    t.gh.state.checkRuns.filter((r) => r.repo === t.repo && r.headSha === pull().head.sha).at(-1)?.output;
  const stateLabels = () => pull().labels.filter((l) => l.startsWith('topology:'));
  const command = async (body: string) => {
    const run = await t.command(pull(), body);
    expect(run.outputs.outcome, run.reply).toBe('done');
  };

  /** Monitor passes until `done` holds of a's state (the pass's `states` output) or a's comment. */
  async function untilA(what: string, done: (state: string, stamp: string) => boolean): Promise<string> {
    const seen: string[] = [];
    const deadline = Date.now() + 300_000;
    while (Date.now() < deadline) {
      const pass = await t.monitor();
      expect(pass.exitCode, pass.stderr + pass.stdout).toBe(0);
      const states = JSON.parse(pass.outputs.states ?? '{}') as Record<string, string>;
      const state = Object.entries(states).find(([name]) => t.runName('a').test(name))?.[1] ?? '';
      const stamp = parseCommentStamp(t.sticky(pull(), 'monitor-a'))?.state ?? '';
      seen.push(`${state}/${stamp}`);
      if (done(state, stamp)) return stamp;
      await new Promise((r) => setTimeout(r, 2_000));
    }
    throw new Error(`a never ${what}: passes saw ${seen.join(', ')}`);
  }
  const FINAL = ['finished', 'stopped', 'failed'];

  describe(`a finished candidate beside another, ${accounting ? 'with' : 'without'} accounting`, () => {
    it('stays in its check and label when Slurm forgets its job, and /topo cancel of the other keeps them', async () => {
      await command('/topo submit a');
      const [job] = await t.live('a');
      expect(job).toBeDefined();
      // a is followed, then stopped: its run ends and its final comment is written (no telemetry needed).
      await untilA('was followed', (state) => state !== '');
      await command('/topo stop a');
      const ended = await untilA('ended', (_, stamp) => FINAL.includes(stamp));
      const earned = stateLabels();
      const before = check();

      t.privateCluster.restartControllerWiped();
      const known = await t.jobs('a');
      // Without accounting Slurm forgot the job; with it, sacct still knows it (ended).
      if (accounting) expect(known.map((j) => [j.id, j.source])).toEqual([[job?.id, 'sacct']]);
      else expect(known).toEqual([]);
      await t.monitor();
      expect(stateLabels()).toEqual(earned);
      expect(check()?.title).toBe(before?.title);
      expect(t.sticky(pull(), 'lifecycle')).not.toMatch(/\*\*lost\*\*/);

      await command('/topo submit b');
      expect(await t.live('b')).toHaveLength(1);
      await t.monitor();
      await command('/topo cancel b');
      expect(await t.live('b')).toEqual([]);
      await t.monitor();
      expect(stateLabels()).toEqual(earned);
      expect(check()?.title).toMatch(/^2 candidates: /);
      expect(check()?.title).toContain('a: ');
      // Without accounting the check reads what a ended as from its final comment; with it, from sacct.
      if (!accounting) expect(check()?.title).toContain(`a: a ${ended} (`);
      expect(t.sticky(pull(), 'lifecycle')).not.toMatch(/\*\*lost\*\*/);
      expect(t.gh.violations()).toEqual([]);
    }, 600_000);
  });
}
