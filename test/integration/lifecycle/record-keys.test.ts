// The record changes only for candidates that ran in the pull request being recorded, and keys name
// the experiment and the candidate (issue 23, cases 2 and 4): a pull request that only edits the
// accepted candidate's file, closed or merged, never rewrites its entry (the merge is refused, with
// a comment); a run of a recorded candidate in another pull request is not recorded over it; two
// experiments' candidates of one name in one pull request are refused at validate and at submit.
// The real validate, submit and record actions (their bundles), the local GitHub API.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { Pull } from '../../../src/github-local/index.js';
import { apply, type RecordOutcome } from '../../../src/record/apply.js';
import { figureOf } from '../../../src/record/figure.js';
import { recordFiles } from '../../../src/record/files.js';
import { createRecord, type RunTopology } from '../../../src/record/model.js';
import { renderObservationBlock } from '../../../src/report/observation-block.js';
import { expandCandidate, expandPreset, hash8 } from '../../../src/topology/expand.js';
import { checkExperiment } from '../../../src/topology/files.js';
import type { Experiment } from '../../../src/types/generated/experiment.js';
import type { RecordRun } from '../../../src/types/generated/record.js';
import type { Topology } from '../../../src/types/generated/topology.js';
import { EXPERIMENT, OUTCOMES, observation } from '../../fixtures/record/scenario.js';
import { twinExperimentYaml, uniqueSuffix, useActionTestbed } from '../../support/action-fixture.js';
import { issueCommentEvent, pullRequestEvent } from '../../support/events.js';
import { repoRoot } from '../../support/run-action.js';
import { postRequests } from '../record/requested.js';

const OTHER = `topology-opt-rko${uniqueSuffix()}-local-20261202`;
const PRESET = readFileSync(join(repoRoot, 'topologies/presets/8gpu_64rollouts.yaml'), 'utf8');
const RENDERER_X6 = {
  name: 'renderer-x6',
  parent: 'baseline',
  hypothesis: 'renderer bound',
  topology: { services: { renderer: { gpus: [0, 1, 2, 3, 4, 5] } } },
};

// acme/sim holds the experiment with its record, and a second experiment (OTHER) with its checkout
const t = useActionTestbed({
  tag: 'rk',
  strict: true,
  defaultBranch: (id, experimentYaml) => ({
    'topologies/presets/8gpu_64rollouts.yaml': PRESET,
    [`topologies/${id}/baseline.yaml`]: stringify({ name: 'baseline', topology: {} }),
    [`topologies/${id}/renderer-x6.yaml`]: stringify(RENDERER_X6),
    [`topologies/${OTHER}/experiment.yaml`]: twinExperimentYaml(OTHER),
    ...acceptedRecord(id, experimentYaml),
  }),
});
const ID = t.experimentId;
const recordPath = `experiments/${ID}.json`;

/**
 * The record as the default branch holds it: the baseline (5.25 s/rollout) and renderer-x6 accepted
 * (4.14), measured at the topology its file describes.
 */
function acceptedRecord(id: string, experimentYaml: string): Record<string, string> {
  const experiment = checkExperiment(experimentYaml, 'experiment.yaml').value as Experiment;
  const base = expandPreset(parse(PRESET) as Topology, experiment);
  const hash = hash8(expandCandidate(base, RENDERER_X6.topology as Topology));
  const [baseline, x6] = OUTCOMES as [RecordOutcome, RecordOutcome];
  let record = createRecord({ ...EXPERIMENT, experiment_id: id });
  record = apply(record, baseline);
  record = apply(record, { ...x6, topology: { ...(x6.topology as RunTopology), hash } });
  return recordFiles(record);
}

const record = () => JSON.parse(t.gh.files(t.repo).get(recordPath) as string);

const recordAction = (pull: Pull) =>
  t.run('record', pullRequestEvent(t.gh, pull, 'closed'), {
    inputs: { 'prometheus-url': 'none' },
    expectOk: false,
  });

/** A pull request that fixes a typo in the accepted candidate's hypothesis, never submitted. */
function typoFix(head: string): Pull {
  return t.gh.openPull({
    repo: t.repo,
    author: 'alice',
    title: 'typo',
    head,
    files: {
      [`topologies/${ID}/renderer-x6.yaml`]: stringify({ ...RENDERER_X6, hypothesis: 'renderer-bound' }),
    },
  });
}

describe('a pull request that only edits an accepted candidate’s file', () => {
  it('closed without merge: the record is not changed, current best stays', async () => {
    const before = t.gh.files(t.repo).get(recordPath);
    expect(record().current_best).toMatchObject({ topology: 'renderer-x6' });
    const pull = typoFix('typo-closed');
    t.gh.closePull(pull);
    const run = await recordAction(pull);
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);
    expect(run.outputs.committed).toBe('false');
    expect(JSON.parse(run.outputs['not-recorded'] ?? '[]')).toMatchObject([
      {
        candidate: 'renderer-x6',
        refused: false,
        why: expect.stringContaining('never ran in this pull request'),
      },
    ]);
    expect(t.gh.files(t.repo).get(recordPath)).toBe(before);
    // the best stays renderer-x6, at the one figure every surface shows (its decided figure, near its 4.141)
    const { runs, current_best } = record();
    const x6 = runs.find((r: RecordRun) => r.name === 'renderer-x6');
    expect(current_best.stabilized_seconds_per_rollout_full_run).toBeCloseTo(figureOf(x6)?.value ?? NaN, 4);
    expect(current_best.stabilized_seconds_per_rollout_full_run).toBeCloseTo(4.141, 2);
  });

  it('merged: refused by the record action with a comment saying why; the entry stays as measured', async () => {
    const before = t.gh.files(t.repo).get(recordPath);
    const pull = typoFix('typo-merged');
    t.gh.merge(pull, 'alice');
    const run = await recordAction(pull);
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);
    expect(run.outputs.committed).toBe('false');
    expect(JSON.parse(run.outputs['not-recorded'] ?? '[]')).toMatchObject([
      { candidate: 'renderer-x6', refused: true },
    ]);
    expect(run.annotations.map((a) => a.message).join('\n')).toContain('renderer-x6: refused');
    expect(t.gh.files(t.repo).get(recordPath)).toBe(before);
    const told = t.gh.state
      .commentsOn(t.repo, pull.number)
      .find((c) => c.user.login === t.gh.botLogin && c.body.startsWith('<!-- topo:sticky:record -->'));
    expect(told?.body).toContain('accepted in #2, without a run in this pull request');
    expect(told?.body).toContain('the topology the file describes is unchanged');
  });

  it('a run of it in another pull request is not recorded over the entry', async () => {
    const before = t.gh.files(t.repo).get(recordPath);
    const changed = { ...RENDERER_X6, topology: { services: { renderer: { gpus: [0, 1, 2, 3, 4, 5, 6] } } } };
    const pull = t.gh.openPull({
      repo: t.repo,
      author: 'alice',
      title: 'renderer x7 under the old name',
      head: 'x7-as-x6',
      files: { [`topologies/${ID}/renderer-x6.yaml`]: stringify(changed) },
    });
    const runName = `topo-${ID}-renderer-x6-0badcafe-12345678`;
    postRequests(t.gh, t.repo, pull, ID, [{ candidate: 'renderer-x6', runName, jobId: '7' }]);
    t.gh.comment(
      t.repo,
      pull.number,
      t.gh.botLogin,
      `<!-- topo:sticky:monitor-renderer-x6 -->\n${renderObservationBlock(observation(runName, 3.9))}`,
    );
    t.gh.merge(pull, 'alice');
    const run = await recordAction(pull);
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);
    expect(JSON.parse(run.outputs['not-recorded'] ?? '[]')).toMatchObject([
      {
        candidate: 'renderer-x6',
        refused: true,
        why: expect.stringContaining('already in the record from #2'),
      },
    ]);
    expect(t.gh.files(t.repo).get(recordPath)).toBe(before);
    expect(t.gh.violations()).toEqual([]);
  });
});

describe('two experiments with one candidate name in one pull request', () => {
  let pull: Pull;
  beforeAll(() => {
    const candidate = (workers: number) =>
      stringify({ name: 'dup', topology: { runtime: { nr_workers: workers } } });
    pull = t.gh.openPull({
      repo: t.repo,
      author: 'alice',
      title: 'the same idea twice',
      head: 'dup',
      files: {
        [`topologies/${ID}/dup.yaml`]: candidate(10),
        [`topologies/${OTHER}/dup.yaml`]: candidate(12),
      },
    });
  });

  it('validate refuses both files, saying why', async () => {
    const run = await t.run('validate', pullRequestEvent(t.gh, pull, 'opened'), { expectOk: false });
    expect(run.exitCode).toBe(1);
    const errors = run.annotations.filter((a) => a.command === 'error');
    for (const file of [`topologies/${ID}/dup.yaml`, `topologies/${OTHER}/dup.yaml`])
      expect(errors.find((e) => e.properties.file === file)?.message).toContain(
        'names must be unique across the pull request',
      );
  });

  it('/topo submit refuses both; nothing is requested, so closing records nothing', async () => {
    const comment = t.gh.comment(t.repo, pull.number, 'alice', '/topo submit');
    const submit = await t.run('submit', issueCommentEvent(t.gh, comment), { expectOk: false });
    expect(submit.outputs.outcome).toBe('refused');
    const reply = t.gh.state.commentsOn(t.repo, pull.number).at(-1)?.body ?? '';
    expect(reply.match(/\[shared-name\]/g)).toHaveLength(2);
    expect(
      t.gh.state.commentsOn(t.repo, pull.number).some((c) => c.body.startsWith('<!-- topo:sticky:lifecycle')),
    ).toBe(false);
    const before = t.gh.files(t.repo).get(recordPath);
    t.gh.merge(pull, 'alice');
    const run = await recordAction(pull);
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);
    expect(JSON.parse(run.outputs.recorded ?? '[]')).toEqual([]);
    expect(t.gh.files(t.repo).get(recordPath)).toBe(before);
    expect(t.gh.violations()).toEqual([]);
  });
});
