// The monitor's GitHub API budget, counted on the local GitHub API (every request checked against
// GitHub's OpenAPI description and GraphQL schema): the real monitor ports and monitor pass over
// 10 experiments × 3 running candidates + 50 idle pull requests read at most 5 times a pass (one
// paginated GraphQL query, one for the candidates' files and check runs), and a pass where nothing
// changed writes nothing. `/topo status` reads its own pull request only.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { renderRunStateComment } from '../../../src/github/run-state.js';
import { withRequest } from '../../../src/lifecycle/model.js';
import { parseRunStateBlock } from '../../../src/lifecycle/state-block.js';
import { monitorPass } from '../../../src/monitor/pass.js';
import { type BudgetWorld, budgetWorld, countCalls } from '../../support/monitor-budget.js';

const NOW = 1_800_000_000;
let w: BudgetWorld;

beforeAll(async () => {
  w = await budgetWorld({ experiments: 10, running: 3, idle: 50, now: NOW });
});
afterAll(() => w?.close());
beforeEach(() => w.gh.resetCalls());

async function pass(options: { onlyPull?: number } = {}) {
  w.gh.resetCalls();
  const ports = w.ports(options);
  try {
    const report = await monitorPass(ports, { tickSeconds: 60, lagSeconds: 10 });
    return { report, ...countCalls(w.gh), calls: w.gh.calls() };
  } finally {
    await ports.close();
  }
}

const comments = (pr: number) =>
  w.gh.state.commentsOn(w.repo, pr).filter((c) => c.user.login === w.gh.botLogin);

describe('the monitor within the API budget (80 open pull requests)', () => {
  it('a first pass writes every candidate and reads at most 5 times', async () => {
    const first = await pass();
    expect(first.report.errors).toEqual([]);
    expect(first.report.candidates).toHaveLength(30);
    expect(first.report.candidates.every((c) => c.changed)).toBe(true);
    expect(first.reads).toBeLessThanOrEqual(5);
    // 3 GraphQL pages of pull requests + 1 for the candidates' files and check runs
    expect(first.calls.filter((c) => c.path === '/graphql')).toHaveLength(4);
    expect(first.calls.filter((c) => c.method === 'GET')).toEqual([]);
    // one monitor comment of its candidate, one check run on each candidate's pull request
    for (const pr of w.candidatePulls)
      expect(comments(pr).filter((c) => /^<!-- topo:sticky:monitor-c\d -->/.test(c.body))).toHaveLength(1);
    expect(w.gh.state.checkRuns.filter((r) => r.name === 'topo/monitor')).toHaveLength(30);
    expect(w.gh.violations()).toEqual([]);
  });

  it('a second pass at the same moment reads at most 5 times and writes nothing', async () => {
    const second = await pass();
    expect(second.report.errors).toEqual([]);
    expect(second.report.candidates.some((c) => c.changed)).toBe(false);
    expect(second.reads).toBeLessThanOrEqual(5);
    expect(second.writes).toBe(0);
    expect(w.gh.violations()).toEqual([]);
  });

  it('a pass where the numbers moved updates comments and check runs by id, without listing', async () => {
    w.world.setNow(NOW + 300);
    const moved = await pass();
    expect(moved.report.errors).toEqual([]);
    expect(moved.reads).toBeLessThanOrEqual(5);
    expect(moved.calls.filter((c) => c.method === 'GET')).toEqual([]);
    expect(moved.calls.filter((c) => c.method === 'POST' && c.path.endsWith('/comments'))).toEqual([]);
    // the same check runs were updated, none created
    expect(w.gh.state.checkRuns.filter((r) => r.name === 'topo/monitor')).toHaveLength(30);
    expect(w.gh.violations()).toEqual([]);
  });

  it('a comment deleted by hand since the snapshot is written again (found anew), once', async () => {
    const pr = w.candidatePulls[0] as number;
    const ports = w.ports();
    try {
      await ports.experiments();
      const sticky = comments(pr).find((c) => c.body.startsWith('<!-- topo:sticky:monitor-c0 -->'));
      expect(sticky).toBeDefined();
      w.gh.state.comments.splice(w.gh.state.comments.indexOf(sticky as never), 1);
      await ports.github.writeComment(pr, 'c0', 'rewritten');
      await ports.github.writeComment(pr, 'c0', 'rewritten again');
    } finally {
      await ports.close();
    }
    const monitor = comments(pr).filter((c) => c.body.startsWith('<!-- topo:sticky:monitor-c0 -->'));
    expect(monitor.map((c) => c.body.split('\n').slice(1).join('\n'))).toEqual(['rewritten again']);
    // the 404 of the update is GitHub's own answer, not a violation
    expect(w.gh.violations()).toEqual([]);
  });

  it('a run recorded in a pass keeps a Request written by someone else meanwhile', async () => {
    const pr = w.candidatePulls[1] as number;
    const ports = w.ports();
    let mine = '';
    try {
      await ports.experiments();
      const before = parseRunStateBlock(
        comments(pr).find((c) => c.body.startsWith('<!-- topo:sticky:lifecycle -->'))?.body,
      );
      const request = before.requests[0];
      if (!request) throw new Error('no request');
      mine = request.id;
      // the submit action adds a Request after the pass's snapshot
      const lifecycle = comments(pr).find((c) => c.body.startsWith('<!-- topo:sticky:lifecycle -->'));
      const other = { ...request, id: 'abcdef01', runName: `${request.runName.slice(0, -8)}abcdef01` };
      if (lifecycle)
        lifecycle.body = `<!-- topo:sticky:lifecycle -->\n${renderRunStateComment(withRequest(before, other))}`;
      w.gh.resetCalls();
      await ports.lifecycle?.recordOutcome(pr, request.id, {
        kind: 'finished',
        at: new Date(NOW * 1000).toISOString(),
        evidence: ['test'],
      });
      // compare-and-swap on the snapshot: the comment read by id (changed: the change is applied
      // again to it), then the write by id and the read that checks it held
      expect(w.gh.calls().map((c) => c.method)).toEqual(['GET', 'GET', 'PATCH', 'GET']);
    } finally {
      await ports.close();
    }
    const after = parseRunStateBlock(
      comments(pr).find((c) => c.body.startsWith('<!-- topo:sticky:lifecycle -->'))?.body,
    );
    // the other Request stands; the finished one, no longer its candidate's latest, is summarised
    expect(after.requests.map((r) => r.id)).toEqual(['abcdef01']);
    expect(after.ended.map((e) => [e.id, e.kind])).toEqual([[mine, 'finished']]);
  });

  it('each candidate carries its topology, read as data at its Request’s commit', async () => {
    const ports = w.ports();
    try {
      const candidates = (await ports.experiments()).flatMap((e) => e.candidates);
      expect(candidates).toHaveLength(30);
      // c0, c1, c2 of each experiment ask for 10, 11, 12 workers
      for (const c of candidates)
        expect(c.topology?.runtime?.nr_workers).toBe(10 + Number(c.candidate.slice(1)));
    } finally {
      await ports.close();
    }
  });

  it('a candidate file that does not expand to its Request’s topology is not used', async () => {
    const pr = w.candidatePulls[3] as number;
    const lifecycle = comments(pr).find((c) => c.body.startsWith('<!-- topo:sticky:lifecycle -->'));
    if (!lifecycle) throw new Error('no run state');
    const original = lifecycle.body;
    const state = parseRunStateBlock(original);
    const request = state.requests[0];
    if (!request) throw new Error('no request');
    const other = { ...state, requests: [{ ...request, topologyHash: 'ffffffff' }] };
    lifecycle.body = `<!-- topo:sticky:lifecycle -->\n${renderRunStateComment(other)}`;
    const ports = w.ports();
    try {
      const candidates = (await ports.experiments()).flatMap((e) => e.candidates);
      expect(candidates.find((c) => c.pr === pr)?.topology).toBeUndefined();
      expect(candidates.filter((c) => c.topology)).toHaveLength(29);
    } finally {
      lifecycle.body = original;
      await ports.close();
    }
  });

  it('/topo status reads its own pull request only', async () => {
    const pr = w.candidatePulls[2] as number;
    const status = await pass({ onlyPull: pr });
    expect(status.report.candidates.map((c) => c.pr)).toEqual([pr]);
    expect(status.calls.filter((c) => c.path === '/graphql')).toHaveLength(2);
    expect(status.reads).toBe(2);
    expect(w.gh.violations()).toEqual([]);
  });
  it('a monitor comment from before candidates had their own is adopted in place, without a read', async () => {
    const pr = w.candidatePulls[3] as number; // the second experiment's c0
    const own = comments(pr).find((c) => c.body.startsWith('<!-- topo:sticky:monitor-c0 -->'));
    if (!own) throw new Error(`#${pr} has no monitor-c0 comment`);
    own.body = own.body.replace('<!-- topo:sticky:monitor-c0 -->', '<!-- topo:sticky:monitor -->');
    w.world.setNow(NOW + 3600); // past comment_interval_minutes: the comment is due
    const later = await pass();
    expect(later.report.errors).toEqual([]);
    expect(later.report.candidates.find((c) => c.pr === pr)?.changed).toBe(true);
    expect(later.calls.filter((c) => c.method === 'GET')).toEqual([]);
    const monitor = comments(pr).filter((c) => c.body.startsWith('<!-- topo:sticky:monitor'));
    expect(monitor.map((c) => c.id)).toEqual([own.id]);
    expect(monitor[0]?.body.split('\n', 1)[0]).toBe('<!-- topo:sticky:monitor-c0 -->');
    expect(w.gh.violations()).toEqual([]);
  });
});
