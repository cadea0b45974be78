import { describe, expect, it } from 'vitest';
import { useActionTestbed, workersCandidate } from '../../support/action-fixture.js';

// A private cluster: this test restarts its controller with the state wiped.
const t = useActionTestbed({
  tag: 'restart',
  cluster: 'private',
  pulls: {
    'more-workers': {
      title: 'more workers',
      files: { 'more-workers.yaml': workersCandidate('more-workers', 16) },
    },
  },
});
const pull = () => t.pull('more-workers');
const monitor = () => t.monitor();
async function submit() {
  expect((await t.command(pull(), '/topo submit')).outputs.outcome).toBe('done');
}
const jobs = () => t.jobs();
const runState = () => t.sticky(pull(), 'lifecycle');

describe('a controller restart that lost its state', () => {
  it('records the forgotten run lost, never resubmits it, and a new request runs under a new label', async () => {
    await submit();
    const [first] = await jobs();
    expect(first?.name).toMatch(new RegExp(`^topo-${t.experimentId}-more-workers-[0-9a-f]{8}-[0-9a-f]{8}$`));
    await monitor();
    expect((await jobs()).map((j) => j.id)).toEqual([first?.id]);

    t.privateCluster.restartControllerWiped();
    expect(await jobs()).toEqual([]); // Slurm forgot every job

    await monitor();
    await monitor();
    expect(await jobs()).toEqual([]); // nothing resubmitted
    expect(runState()).toMatch(
      new RegExp(
        `\\| \`${first?.name}\` \\| ${first?.id} \\| \\*\\*lost\\*\\*: Slurm no longer knows job ${first?.id}`,
      ),
    );

    await submit();
    const [second] = await jobs();
    // Job ids started again: the new run may even carry the old id, never the old run name.
    expect(Number(second?.id)).toBeLessThanOrEqual(Number(first?.id));
    expect(second?.name).toMatch(new RegExp(`^topo-${t.experimentId}-more-workers-[0-9a-f]{8}-[0-9a-f]{8}$`));
    expect(second?.name).not.toBe(first?.name);
    await monitor();
    expect((await jobs()).map((j) => j.name)).toEqual([second?.name]);
    expect(runState().match(/\*\*lost\*\*/g)).toHaveLength(1);
    expect(t.gh.violations()).toEqual([]);
  }, 300_000);
});
