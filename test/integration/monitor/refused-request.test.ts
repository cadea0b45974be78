// A queued Request is checked again at its turn, against the default branch as it is THEN: when the
// experiment's rules changed (or its cluster or preset went away) since `/topo submit`, it is refused (Outcome
// `refused` with the errors, the pull request told in the candidate's submit comment, its label
// removed) and never reaches sbatch. Bundled submit and monitor actions, local GitHub API, local cluster.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Pull } from '../../../src/github-local/index.js';
import { isLive } from '../../../src/slurm/types.js';
import { useActionTestbed, workersCandidate } from '../../support/action-fixture.js';

const t = useActionTestbed({
  tag: 'ref',
  pulls: Object.fromEntries(
    (
      [
        ['alpha', 10],
        ['bravo', 12],
        ['charlie', 14],
        ['delta', 6],
      ] as const
    ).map(([name, workers]) => [name, { files: { [`${name}.yaml`]: workersCandidate(name, workers) } }]),
  ),
});
const experimentYaml = t.experimentYaml;
// The default branch changes its rules after the request: 4 GPUs per node, so the preset's
// driver on GPUs 4-7 no longer validates.
const narrowerExperiment = experimentYaml.replace(
  '    time: "00:10:00"\n',
  '    time: "00:10:00"\n    gpus_per_node: 4\n',
);
const expFile = () => join(t.workspace, 'topologies', t.experimentId, 'experiment.yaml');
const monitor = () => t.monitor();
const command = (pull: Pull, body: string) => t.command(pull, body);
const jobsOf = (name: string) => t.jobs(name);
const sticky = (pull: Pull, purpose: string) => t.sticky(pull, purpose);

describe('a queued Request is checked again at its turn', () => {
  it('is refused when the default branch’s rules changed: told, unlabelled, never submitted', async () => {
    const a = t.pull('alpha');
    const b = t.pull('bravo');
    expect((await command(a, '/topo submit')).outputs.outcome).toBe('done');
    expect((await jobsOf('alpha')).filter((j) => isLive(j.status))).toHaveLength(1);
    const queued = await command(b, '/topo submit');
    expect(queued.outputs.outcome).toBe('done');
    expect(sticky(b, 'submit-bravo')).toContain('queued at position 1');
    expect(b.labels).toContain('topology:queued');
    await monitor();
    expect(await jobsOf('bravo')).toEqual([]);

    writeFileSync(expFile(), narrowerExperiment);
    await command(a, '/topo cancel'); // the slot frees: bravo's turn
    const pass = await monitor();
    expect(pass.stdout).toMatch(/bravo-[0-9a-f]{8}-[0-9a-f]{8}: refused: .*gpu-index/);
    expect(await jobsOf('bravo')).toEqual([]);
    expect(sticky(b, 'lifecycle')).toMatch(
      /\*\*refused\*\*: topologies\/.*bravo\.yaml at [0-9a-f]{7} no longer passes validation/,
    );
    const notice = sticky(b, 'submit-bravo');
    expect(notice).toContain('### Request of `bravo` refused');
    expect(notice).toMatch(/```text\n[^\n]*bravo\.yaml:\d+:\d+: error \[gpu-index\][\s\S]*\n```\n/);
    expect(notice).toContain('comment `/topo submit` again');
    expect(b.labels.filter((l) => l.startsWith('topology:'))).toEqual([]);
    expect(sticky(b, 'monitor-bravo')).toContain('### Request of `bravo` refused');

    await monitor();
    expect(await jobsOf('bravo')).toEqual([]);
    expect(b.labels.filter((l) => l.startsWith('topology:'))).toEqual([]);
    expect(t.gh.violations()).toEqual([]);
  });

  it('is refused when its experiment’s cluster went away from the default branch', async () => {
    writeFileSync(expFile(), experimentYaml);
    const a = t.pull('alpha');
    const c = t.pull('charlie');
    expect((await command(a, '/topo submit')).outputs.outcome).toBe('done');
    const running = (await jobsOf('alpha')).filter((j) => isLive(j.status));
    expect(running).toHaveLength(1);
    expect((await command(c, '/topo submit')).outputs.outcome).toBe('done');
    expect(sticky(c, 'submit-charlie')).toContain('queued at position 1');

    // The monitor no longer loads the experiment at all: its queued Requests never get a turn.
    writeFileSync(expFile(), experimentYaml.replace('cluster: local', 'cluster: gone'));
    try {
      await monitor();
    } finally {
      writeFileSync(expFile(), experimentYaml);
    }
    expect(await jobsOf('charlie')).toEqual([]);
    expect(sticky(c, 'lifecycle')).toContain('**refused**');
    expect(sticky(c, 'submit-charlie')).toMatch(/refused[\s\S]*\[cluster-unknown\] cluster `gone`/);
    expect(c.labels.filter((l) => l.startsWith('topology:'))).toEqual([]);
    // The running candidate of the same experiment is left alone.
    expect((await jobsOf('alpha')).filter((j) => isLive(j.status)).map((j) => j.id)).toEqual(
      running.map((j) => j.id),
    );
    await monitor();
    expect(await jobsOf('charlie')).toEqual([]);
  });

  // A preset is looked up in the checkout, then among the shipped ones (src/topology/presets.ts):
  // the experiment's base goes away when it names a preset found in neither.
  it('is refused when its experiment’s base preset is found nowhere on the default branch', async () => {
    const d = t.pull('delta');
    const running = (await jobsOf('alpha')).filter((j) => isLive(j.status));
    expect(running).toHaveLength(1);
    expect((await command(d, '/topo submit')).outputs.outcome).toBe('done');
    expect(sticky(d, 'submit-delta')).toContain('queued at position 1');
    writeFileSync(
      expFile(),
      experimentYaml.replace('base_topology: 8gpu_64rollouts', 'base_topology: gone_preset'),
    );
    try {
      await monitor();
    } finally {
      writeFileSync(expFile(), experimentYaml);
    }
    expect(await jobsOf('delta')).toEqual([]);
    expect(sticky(d, 'submit-delta')).toMatch(
      /refused[\s\S]*\[preset-unknown\] [^\n]*no preset `gone_preset`/,
    );
    expect(d.labels.filter((l) => l.startsWith('topology:'))).toEqual([]);
    expect((await jobsOf('alpha')).filter((j) => isLive(j.status)).map((j) => j.id)).toEqual(
      running.map((j) => j.id),
    );
  });
});
