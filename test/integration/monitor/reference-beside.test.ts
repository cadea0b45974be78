// The round's reference job through the real actions (issue 38 item 1): the default branch's record
// names a best, so `/topo submit` asks for one job of it beside the candidates (the bot's Request,
// first, counted in max_parallel), a second pull request's round shares it, `/topo cancel` ends it
// with its pull request's candidates, and the monitor asks for a new one for the round still open.
// Real Slurm with fake GPUs, the local GitHub API checked against GitHub's OpenAPI description.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { createRecord } from '../../../src/record/model.js';
import { expandCandidate, expandPreset, hash8 } from '../../../src/topology/expand.js';
import { checkExperiment, checkPreset } from '../../../src/topology/files.js';
import type { ExperimentRecord } from '../../../src/types/generated/record.js';
import { twinExperimentYaml, useActionTestbed, workersCandidate } from '../../support/action-fixture.js';
import { repoRoot } from '../../support/cluster.js';
import { pullRequestEvent } from '../../support/events.js';

const BEST = workersCandidate('model', 12);

/** The record on the default branch: `model` accepted as the current best, with its file and hash. */
function recordWithBest(experimentId: string, experimentYaml: string): string {
  const experiment = checkExperiment(experimentYaml, 'experiment.yaml').value;
  if (!experiment) throw new Error('the test experiment does not validate');
  const presetFile = join(repoRoot, 'topologies/presets/8gpu_64rollouts.yaml');
  const preset = checkPreset(readFileSync(presetFile, 'utf8'), presetFile).value;
  if (!preset) throw new Error('no preset');
  const block = { runtime: { nr_workers: 12 } };
  const hash = hash8(expandCandidate(expandPreset(preset, experiment), block));
  const value = { value: 3.2, low: 3.15, high: 3.25 };
  const record = createRecord(experiment);
  record.runs.push({
    name: 'model',
    status: 'accepted',
    run_name: `topo-${experimentId}-model-${hash}-0000abcd`,
    topology: {
      base: 'topology=8gpu_64rollouts',
      hash,
      block,
      file: `topologies/${experimentId}/model.yaml`,
    },
    verdict: { state: 'stable', evidence: [], minutes_of_data: 25, value, projected_full_run: value },
    decision: { outcome: 'accept', reason: 'merged', next: null },
    pull_request: { number: 1 },
  });
  record.current_best = {
    topology: 'model',
    run_name: `topo-${experimentId}-model-${hash}-0000abcd`,
    stabilized_seconds_per_rollout_full_run: 3.2,
    decision_reasoning: 'merged',
  };
  return `${JSON.stringify(record, null, 2)}\n`;
}

const t = useActionTestbed({
  tag: 'ref',
  experiment: (id) => twinExperimentYaml(id, { maxParallel: 2, rolloutsPerScene: 12 }),
  defaultBranch: (id, yaml) => ({
    [`topologies/${id}/model.yaml`]: BEST,
    [`experiments/${id}.json`]: recordWithBest(id, yaml),
  }),
  pulls: {
    first: { files: { 'first.yaml': workersCandidate('first', 16) } },
    second: { files: { 'second.yaml': workersCandidate('second', 10) } },
  },
  strict: true,
});

const refJobs = async () => (await t.live('model')).map((j) => j.name);

describe('the reference job beside a round’s candidates', () => {
  let reference = '';
  it('/topo submit asks for one job of the default branch’s best first, then the candidate', async () => {
    const run = await t.command(t.pull('first'), '/topo submit');
    expect(run.outputs.outcome, run.reply).toBe('done');
    const live = await t.live();
    expect(live.map((j) => j.name).sort()).toEqual(
      [expect.stringMatching(t.runName('first')), expect.stringMatching(t.runName('model'))].sort(),
    );
    reference = (await refJobs())[0] as string;
    // the reference was submitted before the candidate: the lower job id
    const ids = Object.fromEntries(live.map((j) => [j.name.includes('-model-') ? 'ref' : 'c', Number(j.id)]));
    expect(ids.ref).toBeLessThan(ids.c as number);
    const state = t.sticky(t.pull('first'), 'lifecycle');
    expect(state).toContain(reference);
    expect(t.sticky(t.pull('first'), 'submit-model')).toMatch(/Reference job of `model`/);
    // its sbatch command is the default branch's best: 12 runtime workers
    expect(t.sticky(t.pull('first'), 'submit-model')).toContain('runtime.nr_workers=12');
  });

  it('a second pull request’s round shares it: no second reference job, and max_parallel 2 counts it', async () => {
    const run = await t.command(t.pull('second'), '/topo submit');
    expect(run.reply).toContain(`The reference job \`${reference}\``);
    expect(run.reply).toMatch(/queued at position 1/);
    expect(await refJobs()).toEqual([reference]);
  });

  it('the monitor shows the reference job in each candidate’s comment', async () => {
    const pass = await t.monitor();
    expect(pass.exitCode, pass.stderr).toBe(0);
    const comment = t.sticky(t.pull('first'), 'monitor-first');
    expect(comment).toContain(
      `Reference: the current best \`model\`, run \`${reference}\` beside this candidate`,
    );
    expect(t.sticky(t.pull('first'), 'monitor-model')).toContain(
      'Keep: candidates are compared with this run',
    );
  });

  it('/topo cancel ends it with its pull request’s candidate; the round still open gets a new one', async () => {
    const run = await t.command(t.pull('first'), '/topo cancel');
    expect(run.outputs.outcome, run.reply).toBe('done');
    await vi.waitFor(async () => expect(await t.live('first')).toEqual([]), {
      timeout: 60_000,
      interval: 1000,
    });
    expect(await refJobs()).toEqual([]);
    // the next pass submits the waiting candidate and asks for a reference in its own pull request
    await t.monitor({ pull: t.pull('second') });
    const now = await refJobs();
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(reference);
    expect(t.sticky(t.pull('second'), 'lifecycle')).toContain(now[0]);
    expect((await t.live('second')).length).toBe(1);
    expect(t.gh.violations()).toEqual([]);
  });

  it('closing the pull request records its reference job in the experiment, with the GPU-minutes it held', async () => {
    t.gh.closePull(t.pull('first'));
    const run = await t.run('record', pullRequestEvent(t.gh, t.pull('first'), 'closed'), {
      inputs: { 'prometheus-url': 'none' },
    });
    expect(run.exitCode, run.stderr).toBe(0);
    const files = t.gh.files(t.repo);
    const record = JSON.parse(files.get(`experiments/${t.experimentId}.json`) as string) as ExperimentRecord;
    const entry = record.reference_runs?.find((r) => r.run_name === reference);
    expect(entry, JSON.stringify(record.reference_runs)).toMatchObject({
      of: 'model',
      pull_request: t.pull('first').number,
      candidates: ['first'],
    });
    expect(entry?.gpu_minutes).toEqual(expect.any(Number));
    // never as the best's own run: the record keeps that one
    expect(record.runs.filter((r) => r.name === 'model')).toHaveLength(1);
    expect(files.get(`experiments/${t.experimentId}.md`)).toContain('## Reference jobs');
    expect(JSON.parse(run.outputs['reference-runs'] ?? '[]')).toEqual([
      expect.objectContaining({ run_name: reference, committed: true }),
    ]);
    // recorded twice is recorded once
    const again = await t.run('record', pullRequestEvent(t.gh, t.pull('first'), 'closed'), {
      inputs: { 'prometheus-url': 'none' },
    });
    expect(again.exitCode, again.stderr).toBe(0);
    const after = JSON.parse(
      t.gh.files(t.repo).get(`experiments/${t.experimentId}.json`) as string,
    ) as ExperimentRecord;
    expect(after.reference_runs?.filter((r) => r.run_name === reference)).toHaveLength(1);
    expect(t.gh.violations()).toEqual([]);
  });
});
