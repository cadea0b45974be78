// A Request ends with its pull request (issue 23, case 3): closing a pull request with a running and
// a queued Request cancels the job, gives both the Outcome `closed`, and the record says so. The
// real submit and record actions (their bundles), the local Slurm, the local GitHub API.
import { describe, expect, it } from 'vitest';
import { parseRunStateBlock } from '../../../src/lifecycle/state-block.js';
import { useActionTestbed, workersCandidate } from '../../support/action-fixture.js';
import { pullRequestEvent } from '../../support/events.js';

const t = useActionTestbed({
  tag: 'pc',
  experiment: { maxParallel: 1 },
  pulls: {
    two: {
      title: 'two ideas',
      files: { 'alpha.yaml': workersCandidate('alpha', 10), 'bravo.yaml': workersCandidate('bravo', 12) },
    },
  },
});
const pull = () => t.pull('two');
const state = () => parseRunStateBlock(t.sticky(pull(), 'lifecycle') || undefined);

interface RecordedRun {
  name: string;
  status: string;
  decision: { reason: string };
  stable_metrics?: { telemetry_quality?: { gaps?: string[] } };
}

describe('a pull request closed with a running and a queued Request', () => {
  it('closing cancels the running job and ends both Requests; the record says so', async () => {
    const submit = await t.command(pull(), '/topo submit');
    expect(submit.reply).toMatch(/alpha-[0-9a-f]{8}-[0-9a-f]{8}` submitted as Slurm job/);
    expect(submit.reply).toMatch(/bravo-[0-9a-f]{8}-[0-9a-f]{8}` queued at position 1/);
    const alphaJob = (await t.live())[0]?.id ?? '';
    expect(alphaJob).not.toBe('');
    expect(pull().labels).toContain('topology:running');

    t.gh.closePull(pull());
    const record = await t.run('record', pullRequestEvent(t.gh, pull(), 'closed'), {
      inputs: { 'prometheus-url': 'none' },
    });
    expect(await t.live()).toEqual([]);
    expect(JSON.parse(record.outputs['cancelled-jobs'] ?? '[]')).toEqual([alphaJob]);
    const s = state();
    expect(s.requests.map((r) => [r.candidate, s.outcomes[r.id]?.kind])).toEqual([
      ['alpha', 'closed'],
      ['bravo', 'closed'],
    ]);
    const bravo = s.requests.find((r) => r.candidate === 'bravo');
    expect(s.outcomes[bravo?.id ?? '']?.evidence.join(' ')).toContain('it never ran');
    expect(pull().labels.filter((l) => l.startsWith('topology:'))).toEqual([]);
    const runs = JSON.parse(t.gh.files(t.repo).get(`experiments/${t.experimentId}.json`) as string)
      .runs as RecordedRun[];
    expect(runs.find((r) => r.name === 'bravo')).toMatchObject({
      status: 'rejected',
      decision: { reason: 'closed before its run started: it never ran' },
    });
    expect(runs.find((r) => r.name === 'alpha')?.stable_metrics?.telemetry_quality?.gaps).toContain(
      `run cut short: Slurm job ${alphaJob} was still running when the pull request closed; it was cancelled`,
    );
    expect(record.summary).toContain('open run request(s) ended with it');
    expect(t.gh.violations()).toEqual([]);
  });

  it('reopened, nothing runs without a new /topo submit', async () => {
    Object.assign(pull(), { state: 'open', closedAt: null, mergedAt: null });
    await t.monitor({ pull: pull() });
    await t.monitor({ pull: pull() });
    expect(await t.live()).toEqual([]);
    const s = state();
    expect(s.requests.map((r) => [r.candidate, s.outcomes[r.id]?.kind])).toEqual([
      ['alpha', 'closed'],
      ['bravo', 'closed'],
    ]);
    const bravo = s.requests.find((r) => r.candidate === 'bravo');
    expect(s.runs[bravo?.id ?? '']).toBeUndefined();
    expect(t.gh.violations()).toEqual([]);
  });
});
