// `/topo cancel` reaches Slurm by the runs the bot's own submission records on the pull request name
// as well as by the bot state (issue 35): a writer who edits the state comment into a valid but empty
// state cannot make it answer "nothing to cancel" while the job runs. Exact run names only, never one
// derived from a file name (issue 40): `w`'s cancel never touches another pull request's `w-x`. The
// real submit action (its bundle), the local Slurm and the local GitHub API.
import { describe, expect, it } from 'vitest';
import { emptyRunState } from '../../../src/lifecycle/model.js';
import { renderRunStateBlock } from '../../../src/lifecycle/state-block.js';
import { parseRunName } from '../../../src/topology/run-name.js';
import { useActionTestbed, workersCandidate } from '../../support/action-fixture.js';

/** The live jobs of exactly `candidate` (the testbed's `live` matches by prefix: `w` would take `w-x`). */
const liveOf = async (candidate: string) =>
  (await t.live()).filter((j) => parseRunName(j.name, t.experimentId)?.candidate === candidate);

const t = useActionTestbed({
  tag: 'cbn',
  experiment: { maxParallel: 3 },
  pulls: {
    mine: { title: 'one idea', files: { 'w.yaml': workersCandidate('w', 3) } },
    other: { title: 'a longer name', files: { 'w-x.yaml': workersCandidate('w-x', 5) } },
  },
});

describe('/topo cancel with a state edited into a valid but empty one', () => {
  it('still cancels the pull request’s running job, found by the bot’s submission record, and only that one', async () => {
    const mine = t.pull('mine');
    expect((await t.command(mine, '/topo submit')).outputs.outcome).toBe('done');
    expect((await t.command(t.pull('other'), '/topo submit')).outputs.outcome).toBe('done');
    const [job] = await liveOf('w');
    const [other] = await liveOf('w-x');
    expect(job).toBeDefined();
    expect(other).toBeDefined();

    // A writer edits the bot's lifecycle comment: the block is whole and valid, and holds nothing.
    const comment = t.gh.state
      .commentsOn(t.repo, mine.number)
      .find((c) => c.user.login === t.gh.botLogin && c.body.startsWith('<!-- topo:sticky:lifecycle'));
    if (!comment) throw new Error('no lifecycle comment');
    const at = comment.body.indexOf('<!-- topo:run-state');
    comment.body = `${comment.body.slice(0, at)}${renderRunStateBlock(emptyRunState())}`;

    const cancel = await t.command(mine, '/topo cancel', { expectOk: false });
    expect(cancel.outputs.outcome, cancel.reply).toBe('done');
    expect(cancel.reply).not.toContain('nothing to cancel');
    expect(cancel.reply).toContain(`cancelled job ${job?.id}, found by the bot's submission record`);
    expect(await liveOf('w')).toEqual([]);
    // the other pull request's `w-x` is not `w`'s: it runs on
    expect((await liveOf('w-x')).map((j) => j.id)).toEqual([other?.id]);
    const again = await t.command(mine, '/topo cancel', { expectOk: false });
    expect(again.reply).toContain('nothing to cancel');
    expect(t.gh.violations()).toEqual([]);
  });
});
