import { beforeAll, describe, expect, it, vi } from 'vitest';
import { twinExperimentYaml, useActionTestbed } from '../../support/action-fixture.js';

const candidateYaml = `name: more-workers
hypothesis: more event loops
topology:
  runtime:
    nr_workers: 16
`;
// What a hostile pull request puts in its own copy of the experiment: none of it may reach sbatch.
const edited = (experimentId: string) =>
  twinExperimentYaml(experimentId)
    .replace('max_parallel: 1', 'max_parallel: 16')
    .replace('time: "00:10:00"', 'time: "99999-00:00:00"')
    .replace(
      '  rollouts_per_scene: 1\n',
      '  rollouts_per_scene: 1\n  overrides: ["hydra.run.dir=/etc/cron.d"]\n',
    );

const t = useActionTestbed({
  tag: 'act',
  labels: ['topology:submit', 'topology:queued', 'topology:running', 'topology:stable', 'topology:failed'],
});

beforeAll(() => {
  t.openPull('more-workers', {
    title: 'more workers',
    files: { 'more-workers.yaml': candidateYaml, 'experiment.yaml': edited(t.experimentId) },
  });
  t.gh.addCollaborator(t.repo, 'tom', 'triage');
});

const pull = () => t.pull('more-workers');
const monitor = () => t.monitor();
const command = (login: string, body: string) => t.command(pull(), body, { login });
const jobs = () => t.jobs();
const runState = () => t.sticky(pull(), 'lifecycle');

describe('the run lifecycle through the actions', () => {
  it('a topology label added by hand (triage access) starts nothing and is removed', async () => {
    pull().labels.push('topology:submit');
    const run = await monitor();
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);
    expect(run.outputs.candidates).toBe('0');
    expect(await jobs()).toEqual([]);
    expect(pull().labels).not.toContain('topology:submit');
  });

  let first = '';
  it('/topo submit by a writer starts one run, with the default branch’s experiment only', async () => {
    const run = await command('alice', '/topo submit');
    expect(run.outputs.outcome).toBe('done');
    const listed = await jobs();
    expect(listed).toHaveLength(1);
    first = listed[0]?.name ?? '';
    expect(first).toMatch(new RegExp(`^topo-${t.experimentId}-more-workers-[0-9a-f]{8}-[0-9a-f]{8}$`));
    const sbatch =
      t.gh.state.commentsOn(t.repo, pull().number).find((c) => c.body.includes('sbatch command'))?.body ?? '';
    expect(sbatch).toContain('--time=00:10:00');
    expect(sbatch).not.toContain('99999');
    expect(sbatch).not.toContain('hydra.run.dir');
    expect(runState()).toContain(first);
    expect(runState()).toContain('topo:run-state v2');

    const pass = await monitor();
    expect(pass.exitCode, pass.stderr + pass.stdout).toBe(0);
    const states = JSON.parse(pass.outputs.states ?? '{}') as Record<string, string>;
    expect(Object.keys(states)).toEqual([first]);
    expect((await jobs()).length).toBe(1);
    // the pass's job summary: the experiment's slots and candidates, and the API requests it made
    expect(pass.summary).toContain(`### Experiment \`${t.experimentId}\``);
    expect(pass.summary).toContain('Slots: **1 of 1** in use');
    expect(pass.summary).toContain(`[#${pull().number}](`);
    expect(pass.summary).toMatch(/GitHub API this pass: [1-5] read\(s\)/);
    expect(t.gh.violations()).toEqual([]);
  });

  it('a push supersedes: the run is cancelled and recorded, the new head waits for /topo submit', async () => {
    t.gh.state.pushToPull(pull(), {
      [`topologies/${t.experimentId}/more-workers.yaml`]: candidateYaml.replace(
        'nr_workers: 16',
        'nr_workers: 12',
      ),
    });
    const pass = await monitor();
    expect(pass.exitCode, pass.stderr + pass.stdout).toBe(0);
    // scancel returns before Slurm has finished the job (COMPLETING under load): wait for its end state
    await vi.waitFor(
      async () => {
        const listed = await jobs();
        expect(listed).toHaveLength(1);
        expect(listed[0]?.state).toBe('CANCELLED');
      },
      { timeout: 60_000, interval: 1_000 },
    );
    expect(runState()).toMatch(/\*\*superseded\*\*: the pull request moved from/);
    await monitor();
    expect(await jobs()).toHaveLength(1);
  });

  it('a job Slurm forgot is recorded lost and never submitted again', async () => {
    const again = await command('alice', '/topo submit');
    expect(again.outputs.outcome, t.gh.state.commentsOn(t.repo, pull().number).at(-1)?.body).toBe('done');
    const live = (await jobs()).find((j) => j.name !== first);
    expect(live).toBeDefined();
    // Slurm forgets it (history window, lost controller state): it no longer lists it by name.
    await t.slurm.rename(live?.id as string, `forgotten-${live?.id}`);
    await t.slurm.cancel(live?.id as string);
    await monitor();
    await monitor();
    expect((await jobs()).filter((j) => j.name !== first)).toEqual([]);
    expect(runState()).toMatch(/\*\*lost\*\*: Slurm no longer knows job/);
  });
});
