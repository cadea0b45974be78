// A command on a pull request reaches only what that pull request started (issue 40, items 2 and 3;
// invariant 22): `/topo cancel` and `/topo stop` never reach another pull request's run through a
// candidate file's name (a writer's never-submitted `w.yaml`, a stray `w.yml` of garbage), and
// `/topo state rebuild` never takes a run name a reader planted in a comment the bot quoted. The
// victim keeps its Request and its running job. The real submit action (its bundle), the local
// Slurm and the local GitHub API.
import { describe, expect, it } from 'vitest';
import { parseRunStateBlock } from '../../../src/lifecycle/state-block.js';
import { useActionTestbed, workersCandidate } from '../../support/action-fixture.js';

const W = workersCandidate('w', 3);
const V = workersCandidate('v', 5);
const t = useActionTestbed({
  tag: 'rch',
  experiment: { maxParallel: 3 },
  pulls: {
    victim: { title: 'three workers', files: { 'w.yaml': W } },
    // the same idea in another pull request: the same file, never submitted
    writer: { title: 'three workers too', files: { 'w.yaml': W } },
    stray: { title: 'a stray file', files: { 'w.yml': 'not even a topology\n' } },
    // the rebuild's case on a candidate of its own, so each test stands alone
    victim2: { title: 'five workers', files: { 'v.yaml': V } },
    planted: { title: 'five workers too', files: { 'v.yaml': V } },
    stray2: { title: 'another stray file', files: { 'v.yml': 'not even a topology\n' } },
  },
});
const state = (name: string) => parseRunStateBlock(t.sticky(t.pull(name), 'lifecycle') || undefined);
const live = async (candidate: string) => (await t.live(candidate)).map((j) => [j.id, j.name]);

/** Submits the victim's candidate and returns its running job. */
async function victimRuns(victim: string, candidate: string): Promise<{ id: string; name: string }> {
  const submit = await t.command(t.pull(victim), '/topo submit');
  expect(submit.outputs.outcome, submit.reply).toBe('done');
  const [job] = await t.live(candidate);
  if (!job) throw new Error(`${victim} has no live job`);
  return job;
}

/** The victim still runs, keeps its open Request and Run, and `/topo submit` says it is running. */
async function victimStands(victim: string, candidate: string, job: { id: string; name: string }) {
  expect(await live(candidate)).toEqual([[job.id, job.name]]);
  const s = state(victim);
  const open = s.requests.filter((r) => !s.outcomes[r.id]);
  expect(open.map((r) => [r.runName, s.runs[r.id]?.jobId])).toEqual([[job.name, job.id]]);
  expect(t.pull(victim).labels).not.toContain('topology:failed');
  const again = await t.command(t.pull(victim), '/topo submit');
  expect(again.outputs.outcome, again.reply).toBe('done');
  expect(again.reply).toContain(`already running as Slurm job **${job.id}**`);
}

describe('/topo cancel and /topo stop on another pull request with a file of the same name', () => {
  it('reach nothing of the pull request that runs it: the victim keeps its run and its Request', async () => {
    const job = await victimRuns('victim', 'w');
    for (const [pull, body] of [
      ['writer', '/topo cancel'],
      ['writer', '/topo cancel w'],
      ['writer', '/topo stop'],
      ['stray', '/topo cancel'],
      ['stray', '/topo stop w'],
    ] as const) {
      const run = await t.command(t.pull(pull), body, { expectOk: false });
      expect(run.outputs.outcome, `${pull} ${body}: ${run.reply}`).toBe('done');
      expect(run.reply).toMatch(/nothing to (cancel|stop)/);
      expect(run.reply).not.toContain(job.id);
    }
    await victimStands('victim', 'w', job);
    expect(state('writer').requests).toEqual([]);
    expect(t.gh.violations()).toEqual([]);
  });
});

describe('/topo state rebuild after a reader planted another pull request’s run name', () => {
  it('neither cancels nor adopts the run: the bot’s quote of a comment is not its record', async () => {
    const job = await victimRuns('victim2', 'v');
    // the same topology (planted: the rebuild would adopt it) and a file that does not parse (stray2: cancel it)
    for (const pull of ['planted', 'stray2']) {
      // an unknown command: the bot answers with the help, quoting the reader's line
      const planted = await t.command(t.pull(pull), `/topo explain ${job.name} Slurm job 6`, {
        login: 'mallory',
        expectOk: false,
      });
      expect(planted.reply).toContain(job.name);
      const rebuild = await t.command(t.pull(pull), '/topo state rebuild', { expectOk: false });
      expect(rebuild.outputs.outcome, rebuild.reply).toBe('done');
      expect(await live('v'), `${pull}: ${rebuild.reply}`).toEqual([[job.id, job.name]]);
      expect(state(pull).requests, `${pull}: ${rebuild.reply}`).toEqual([]);
      expect(rebuild.reply).toContain('0 runs named');
    }
    await victimStands('victim2', 'v', job);
    expect(t.gh.violations()).toEqual([]);
  });
});
