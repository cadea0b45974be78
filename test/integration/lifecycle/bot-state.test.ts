// The bot state survives a long life (issue 23, cases 1 and 6): 200 Requests on one pull request
// keep it one readable comment and every job cancellable; a cut state is an error shown on the pull
// request, rebuilt from Slurm's jobs and the pull request's history; two writers at once keep both
// changes. The real submit and monitor actions (their bundles), the local Slurm, the local GitHub API.
import { describe, expect, it } from 'vitest';
import { createOctokit } from '../../../src/github/client.js';
import { updateRunState } from '../../../src/github/run-state.js';
import { type RunRequest, withOutcome, withRequest, withRun } from '../../../src/lifecycle/model.js';
import { parseRunStateBlock } from '../../../src/lifecycle/state-block.js';
import { useActionTestbed, workersCandidate } from '../../support/action-fixture.js';

const CANDIDATES = Array.from({ length: 15 }, (_, i) => `c${String(i).padStart(2, '0')}`);
/** 1..16 runtime workers (a node's CPUs), never the preset's 8: each candidate its own topology. */
const workers = (i: number) => (i < 7 ? i + 1 : i + 2);
const LIMIT = 65_536;

const t = useActionTestbed({
  tag: 'bst',
  experiment: { maxParallel: 2 },
  pulls: {
    many: {
      title: 'fifteen ideas',
      files: Object.fromEntries(CANDIDATES.map((c, i) => [`${c}.yaml`, workersCandidate(c, workers(i))])),
    },
  },
});
const pull = () => t.pull('many');
const target = () => ({ owner: 'acme', repo: 'sim', issue_number: pull().number, botLogin: t.gh.botLogin });

async function command(body: string) {
  const run = await t.command(pull(), body, { expectOk: false, timeoutMs: 120_000 });
  return { outcome: run.outputs.outcome, reply: run.reply };
}

const lifecycleComments = () =>
  t.gh.state
    .commentsOn(t.repo, pull().number)
    .filter((c) => c.user.login === t.gh.botLogin && c.body.startsWith('<!-- topo:sticky:lifecycle'));
const state = () => parseRunStateBlock(lifecycleComments()[0]?.body);
const liveJobs = () => t.live();

/**
 * One round of `/topo submit` + `/topo cancel` over the 15 candidates as the bot writes it (each
 * Request, its Run, its `cancelled` Outcome), in one write through the state writer the actions
 * use; the Slurm side of these rounds is left out (their jobs are gone), so 195 Requests cost
 * seconds, not minutes.
 */
async function writtenRound(round: number): Promise<void> {
  const octokit = createOctokit({ token: t.gh.token, baseUrl: t.gh.url });
  await updateRunState(octokit, target(), (state) => {
    let s = state;
    for (const [i, candidate] of CANDIDATES.entries()) {
      const id = `${round.toString(16).padStart(4, '0')}${i.toString(16).padStart(4, '0')}`;
      const at = new Date(Date.UTC(2026, 0, 1, round, i)).toISOString();
      const jobId = String(round * 100 + i);
      s = withRequest(s, {
        id,
        experiment: t.experimentId,
        candidate,
        path: `${t.dir}/${candidate}.yaml`,
        pr: pull().number,
        headSha: pull().head.sha,
        topologyHash: '0badcafe',
        runName: `topo-${t.experimentId}-${candidate}-0badcafe-${id}`,
        login: 'alice',
        requestedAt: at,
      });
      s = withRun(s, id, { jobId, submittedAt: at });
      s = withOutcome(s, id, { kind: 'cancelled', at, jobId, evidence: ['/topo cancel by alice'] });
    }
    return s;
  });
}

describe('the bot state of a pull request with 200 Requests', () => {
  it('stays one readable comment, compacted, while every command answers', async () => {
    for (let round = 1; round <= 13; round++) {
      await writtenRound(round);
      expect(lifecycleComments()).toHaveLength(1);
      expect(lifecycleComments()[0]?.body.length).toBeLessThanOrEqual(LIMIT);
    }
    const submit = await command('/topo submit');
    expect(submit.outcome, submit.reply).toBe('done');
    expect(submit.reply.match(/submitted as Slurm job/g) ?? [], submit.reply).toHaveLength(2);
    expect(lifecycleComments()).toHaveLength(1);
    const s = state();
    // 210 Requests: the latest of each candidate whole, the newest ended ones summarised, the rest counted
    expect(s.requests).toHaveLength(15);
    expect(s.requests.filter((r) => !s.outcomes[r.id])).toHaveLength(15);
    expect(s.ended.length).toBeGreaterThan(0);
    const counted = Object.values(s.forgotten).reduce((a, b) => (a ?? 0) + (b ?? 0), 0) ?? 0;
    expect(s.requests.length + s.ended.length + counted).toBe(210);
    console.log(`bot state at 210 Requests: comment ${lifecycleComments()[0]?.body.length} characters`);
  });

  it('every job of the pull request can still be cancelled', async () => {
    const live = await liveJobs();
    expect(live).toHaveLength(2);
    const cancel = await command('/topo cancel');
    expect(cancel.outcome, cancel.reply).toBe('done');
    for (const j of live) expect(cancel.reply).toContain(`cancelled job ${j.id}`);
    expect(await liveJobs()).toEqual([]);
    const s = state();
    expect(s.requests.filter((r) => !s.outcomes[r.id])).toEqual([]);
    expect(t.gh.violations()).toEqual([]);
  });
});

/** Damages the lifecycle comment as an older version's split (or a hand edit) left it. */
function damage(how: 'cut' | 'no block'): void {
  const comment = lifecycleComments()[0];
  if (!comment) throw new Error('no lifecycle comment');
  const at = comment.body.indexOf('<!-- topo:run-state');
  comment.body =
    how === 'cut' ? comment.body.slice(0, at + 200) : `${comment.body.slice(0, at)}\n(the block was lost)`;
}

describe('a state that cannot be read', () => {
  it('is shown on the pull request, never read as empty, and nothing is submitted', async () => {
    expect((await command('/topo submit c00')).outcome).toBe('done');
    const [job] = await liveJobs();
    expect(job).toBeDefined();
    damage('cut');
    const again = await command('/topo submit c01');
    expect(again.outcome).toBe('failed');
    expect(again.reply).toMatch(/bot state unreadable: the state block is cut/);
    expect(again.reply).toContain('/topo state rebuild');
    expect((await liveJobs()).map((j) => j.id)).toEqual([job?.id]);
  });

  it('/topo state rebuild rebuilds it from Slurm and the history, the live run kept', async () => {
    const [job] = await liveJobs();
    const rebuild = await command('/topo state rebuild');
    expect(rebuild.outcome, rebuild.reply).toBe('done');
    expect(rebuild.reply).toContain('could not be read and was replaced');
    const s = state();
    const open = s.requests.filter((r) => !s.outcomes[r.id]);
    expect(open.map((r) => [r.candidate, s.runs[r.id]?.jobId])).toEqual([['c00', job?.id]]);
    expect(lifecycleComments()).toHaveLength(1);
  });

  it('/topo cancel rebuilds an unreadable state first, so it still reaches every job', async () => {
    const [job] = await liveJobs();
    damage('no block');
    const cancel = await command('/topo cancel');
    expect(cancel.outcome, cancel.reply).toBe('done');
    expect(cancel.reply).toContain(
      "bot state unreadable: the bot's lifecycle comment carries no state block",
    );
    expect(cancel.reply).toContain(`cancelled job ${job?.id}`);
    expect(await liveJobs()).toEqual([]);
    expect(t.gh.violations()).toEqual([]);
  });
});

describe('two writers at once', () => {
  it('a monitor pass and a /topo submit writing the state together both keep their change', async () => {
    // a Run Slurm no longer knows: the monitor's pass writes its `lost` Outcome
    const octokit = createOctokit({ token: t.gh.token, baseUrl: t.gh.url });
    const lost: RunRequest = {
      id: 'feedf00d',
      experiment: t.experimentId,
      candidate: 'c05',
      path: `${t.dir}/c05.yaml`,
      pr: pull().number,
      headSha: pull().head.sha,
      topologyHash: '0badcafe',
      runName: `topo-${t.experimentId}-c05-0badcafe-feedf00d`,
      login: 'alice',
      requestedAt: new Date().toISOString(),
    };
    await updateRunState(octokit, target(), (s) =>
      withRun(withRequest(s, lost), lost.id, { jobId: '999999', submittedAt: lost.requestedAt }),
    );
    // both write the state having read it before the other's write: the race of issue 23
    const id = lifecycleComments()[0]?.id;
    const gate = t.gh.holdTogether({
      match: new RegExp(`^PATCH /repos/acme/sim/issues/comments/${id}$`),
      count: 2,
    });
    const [, submit] = await Promise.all([t.monitor({ pull: pull() }), command('/topo submit c06')]);
    expect(submit.outcome, submit.reply).toBe('done');
    expect(gate.met()).toBe(true);
    const s = state();
    expect(s.outcomes[lost.id]?.kind).toBe('lost');
    const c06 = s.requests.find((r) => r.candidate === 'c06' && !s.outcomes[r.id]);
    expect(c06, JSON.stringify(s.requests.map((r) => r.candidate))).toBeDefined();
    expect(t.gh.violations()).toEqual([]);
  });
});
