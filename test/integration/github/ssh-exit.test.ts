// Every command's process exits: `/topo submit` and `/topo cancel` against a cluster reached over
// SSH end (the SSH client is closed) well within 60 s, and the runs they act on are exactly their own.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Pull } from '../../../src/github-local/index.js';
import { defaultBranchWorkspace, useActionTestbed, workersCandidate } from '../../support/action-fixture.js';

const candidate = workersCandidate;
const t = useActionTestbed({
  tag: 'ssh',
  experiment: { cluster: 'local-ssh', maxParallel: 2 },
  slurmCluster: 'local-ssh',
  // Sibling candidates: `more` is a prefix of `more-workers`.
  pulls: {
    more: { files: { 'more.yaml': candidate('more', 12) } },
    'more-workers': { title: 'more workers', files: { 'more-workers.yaml': candidate('more-workers', 16) } },
  },
});

async function command(pull: Pull, body: string, workspace = t.workspace) {
  const started = Date.now();
  // the process must EXIT within 60 s: a kept SSH connection fails the test
  const run = await t.command(pull, body, { workspace });
  return { run, seconds: (Date.now() - started) / 1000 };
}

describe('commands over SSH', () => {
  it('/topo submit answers and its process exits', async () => {
    for (const p of [t.pull('more'), t.pull('more-workers')]) {
      const { run, seconds } = await command(p, '/topo submit');
      expect(run.outputs.outcome, t.gh.state.commentsOn(t.repo, p.number).at(-1)?.body).toBe('done');
      expect(seconds).toBeLessThan(60);
    }
    const names = (await t.slurm.jobs(`topo-${t.experimentId}-`)).map((j) => j.name);
    expect(names).toHaveLength(2);
  });

  it('/topo cancel on `more` cancels its job only (not `more-workers`) and exits', async () => {
    const { run } = await command(t.pull('more'), '/topo cancel');
    expect(run.outputs.outcome).toBe('done');
    const jobs = await t.slurm.jobs(`topo-${t.experimentId}-`);
    const byCandidate = (c: string) =>
      jobs.find((j) => new RegExp(`^topo-${t.experimentId}-${c}-[0-9a-f]{8}-[0-9a-f]{8}$`).test(j.name));
    expect(byCandidate('more')?.state).toBe('CANCELLED');
    expect(['PENDING', 'RUNNING']).toContain(byCandidate('more-workers')?.state);
  });

  it('/topo submit while the login node is unreachable: answered as an outage, the Request kept, the process exits', async () => {
    // The same workspace, but clusters.yaml points local-ssh at a port where nothing listens.
    const down = defaultBranchWorkspace('ssh-down', {
      experimentId: t.experimentId,
      experimentYaml: t.experimentYaml,
      clustersFile: t.cluster.clustersFile,
    });
    const clustersText = readFileSync(t.cluster.clustersFile, 'utf8').replace(
      `port: ${t.cluster.sshPort}`,
      'port: 9',
    );
    writeFileSync(join(down, 'topologies/clusters.yaml'), clustersText);
    const third = t.openPull('fewer', { files: { 'fewer.yaml': candidate('fewer', 8) } });
    const { run, seconds } = await command(third, '/topo submit', down);
    expect(run.outputs.outcome).toBe('done');
    expect(seconds).toBeLessThan(60);
    const reply = t.gh.state.commentsOn(t.repo, third.number).at(-1)?.body ?? '';
    expect(reply).toMatch(/is requested, but the cluster `local-ssh` is unreachable now/);
    const state = t.gh.state
      .commentsOn(t.repo, third.number)
      .find((c) => c.body.startsWith('<!-- topo:sticky:lifecycle -->'))?.body;
    expect(state).toMatch(/\| queued \|/);
    expect((await t.slurm.jobs(`topo-${t.experimentId}-`)).some((j) => j.name.includes('-fewer-'))).toBe(
      false,
    );
  });
});
