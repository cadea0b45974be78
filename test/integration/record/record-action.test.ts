// The bundled record action (actions/record/dist/index.js), run as GitHub runs it, against the
// local GitHub API. `npm run build` first: the test runs the committed bundle.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { Repo } from '../../../src/github-local/index.js';
import { renderObservationBlock } from '../../../src/report/observation-block.js';
import { expandCandidate, expandPreset } from '../../../src/topology/expand.js';
import { jobName } from '../../../src/topology/render.js';
import type { Topology } from '../../../src/types/generated/topology.js';
import { EXPERIMENT, OUTCOMES } from '../../fixtures/record/scenario.js';
import { pullRequestEvent } from '../../support/events.js';
import { runActionOn, useLocalGitHub } from '../../support/local-github.js';
import { repoRoot } from '../../support/run-action.js';
import { postRequests } from './requested.js';

const ID = EXPERIMENT.experiment_id;
const PRESET = readFileSync(join(repoRoot, 'topologies/presets/8gpu_64rollouts.yaml'), 'utf8');
const BASE = expandPreset(parse(PRESET) as Topology, EXPERIMENT);

const { gh } = useLocalGitHub();

function setup(name: string, extra: Record<string, string> = {}, failed = false) {
  const repo: Repo = gh.createRepo(`acme/${name}`, {
    files: {
      'topologies/presets/8gpu_64rollouts.yaml': PRESET,
      [`topologies/${ID}/experiment.yaml`]: stringify(EXPERIMENT),
      ...extra,
    },
  });
  gh.addCollaborator(repo, 'alice', 'write');
  const topology: Topology = { services: { renderer: { gpus: [0, 1, 2, 3, 4, 5] } } };
  const pull = gh.openPull({
    repo,
    author: 'alice',
    title: 'More renderers',
    body: 'Renderer is the bottleneck.\n\n### Learnings\n- topology_knobs: the renderer scales with GPUs\n',
    head: 'renderer-x6',
    files: {
      [`topologies/${ID}/renderer-x6.yaml`]: stringify({
        name: 'renderer-x6',
        hypothesis: 'renderer bound',
        topology,
      }),
    },
  });
  const observation = structuredClone(OUTCOMES[1]!.observation!);
  observation.run_name = jobName(ID, 'renderer-x6', expandCandidate(BASE, topology));
  if (failed)
    observation.failure = {
      kind: 'gpu-oom',
      message: 'Job 41 ran out of GPU memory.',
      slurm_state: 'FAILED',
      evidence: ['torch.OutOfMemoryError: CUDA out of memory'],
    };
  postRequests(gh, repo, pull, ID, [{ candidate: 'renderer-x6', runName: observation.run_name }]);
  gh.comment(
    repo,
    pull.number,
    gh.botLogin,
    `<!-- topo:sticky:monitor -->\nStable.\n${renderObservationBlock(observation)}`,
  );
  return { repo, pull };
}

const run = (repo: Repo, event: ReturnType<typeof pullRequestEvent>) =>
  runActionOn(gh, 'record', { event, repository: `acme/${repo.name}` });

describe('record action', () => {
  it('records a merged pull request on the default branch and is a no-op when re-run', async () => {
    const { repo, pull } = setup('merged');
    gh.merge(pull, 'alice');
    const event = pullRequestEvent(gh, pull, 'closed');

    const first = await run(repo, event);
    expect(first.stderr).toBe('');
    expect(first.exitCode).toBe(0);
    expect(first.outputs.committed).toBe('true');
    const recorded = JSON.parse(first.outputs.recorded!);
    expect(recorded).toMatchObject([
      { experiment_id: ID, candidate: 'renderer-x6', kind: 'accepted', committed: true },
    ]);
    const record = JSON.parse(gh.files(repo).get(`experiments/${ID}.json`)!);
    expect(record.current_best.topology).toBe('renderer-x6');
    expect(record.runs[0].change).toEqual({ 'services.renderer.gpus': '[0,1,2,3] -> [0,1,2,3,4,5]' });
    expect(record.runs[0].skill_reflections[0]).toMatchObject({
      topic: 'topology_knobs',
      learning: 'the renderer scales with GPUs',
    });
    expect(gh.files(repo).get(`experiments/${ID}.md`)).toContain('| 1 | — | `renderer-x6`');
    expect(first.summary).toContain('recorded as **accepted**');

    const second = await run(repo, event);
    expect(second.exitCode).toBe(0);
    expect(second.outputs.committed).toBe('false');
    expect(gh.violations()).toEqual([]);
  });

  it('five workflow runs at once (five merges): five entries, none lost, no duplicated commit', async () => {
    const { repo, pull: first } = setup('five');
    const pulls = [first];
    for (let i = 2; i <= 5; i++) {
      const topology: Topology = { runtime: { nr_workers: 8 + i } };
      const pull = gh.openPull({
        repo,
        author: 'alice',
        title: `workers ${i}`,
        head: `workers-${i}`,
        files: { [`topologies/${ID}/workers-${i}.yaml`]: stringify({ name: `workers-${i}`, topology }) },
      });
      const runName = jobName(ID, `workers-${i}`, expandCandidate(BASE, topology));
      postRequests(gh, repo, pull, ID, [{ candidate: `workers-${i}`, runName }]);
      pulls.push(pull);
    }
    for (const p of pulls) gh.merge(p, 'alice');
    const runs = await Promise.all(pulls.map((p) => run(repo, pullRequestEvent(gh, p, 'closed'))));
    for (const r of runs) expect(r.exitCode, `${r.stdout}${r.stderr}`).toBe(0);
    const record = JSON.parse(gh.files(repo).get(`experiments/${ID}.json`)!);
    expect(record.runs.map((r: { name: string }) => r.name).sort()).toEqual([
      'renderer-x6',
      'workers-2',
      'workers-3',
      'workers-4',
      'workers-5',
    ]);
    const messages: string[] = [];
    for (
      let sha: string | undefined = gh.state.branchSha(repo, repo.defaultBranch);
      sha;
      sha = gh.state.commit(sha).parents[0]
    )
      messages.push(gh.state.commit(sha).message);
    const recordCommits = messages.filter((m) => m.startsWith('record:'));
    expect(recordCommits).toHaveLength(5);
    expect(new Set(recordCommits).size).toBe(5);
    expect(gh.violations()).toEqual([]);
  });

  it('fails without writing when the record on the default branch is corrupt', async () => {
    const bad = JSON.stringify({ schema_version: 1, experiment_id: ID, runs: 'none' });
    const { repo, pull } = setup('corrupt', { [`experiments/${ID}.json`]: bad });
    gh.merge(pull, 'alice');
    const head = gh.state.branchSha(repo, repo.defaultBranch);

    const result = await run(repo, pullRequestEvent(gh, pull, 'closed'));
    expect(result.exitCode).toBe(1);
    const errors = result.annotations.filter((a) => a.command === 'error').map((a) => a.message);
    expect(errors.join('\n')).toContain(`experiments/${ID}.json:`);
    expect(errors.join('\n')).toMatch(/runs: must be array/);
    expect(errors.join('\n')).toMatch(/not overwritten/);
    expect(gh.state.branchSha(repo, repo.defaultBranch)).toBe(head);
    expect(gh.files(repo).get(`experiments/${ID}.json`)).toBe(bad);
    // ...and the pull request is told what to fix and how to record it again
    const told = gh.state.commentsOn(repo, pull.number).at(-1);
    expect(told?.user.login).toBe(gh.botLogin);
    expect(told?.body).toContain('could not be written');
    expect(told?.body).toContain(`experiments/${ID}.json`);
    expect(told?.body).toContain(`pull request number \`${pull.number}\``);
  });

  it('records a merged candidate whose run failed as failed, not accepted', async () => {
    const { repo, pull } = setup('merged-failed', {}, true);
    gh.merge(pull, 'alice');
    const result = await run(repo, pullRequestEvent(gh, pull, 'closed'));
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.outputs.recorded!)).toMatchObject([
      { candidate: 'renderer-x6', kind: 'failed' },
    ]);
  });

  it('ignores pull_request events other than closed', async () => {
    const { repo, pull } = setup('opened');
    const result = await run(repo, pullRequestEvent(gh, pull, 'opened'));
    expect(result.exitCode).toBe(0);
    expect(result.outputs.committed).toBe('false');
    expect(gh.files(repo).has(`experiments/${ID}.json`)).toBe(false);
  });
});
