// The watch loop on real parts (issue 25 item 3): a baseline and a clearly slower candidate of the
// twin on the local Slurm, scraped by the local Prometheus, with pull requests on the local GitHub
// API. One scheduled pass submits both; then the loop looks every 2 s (2 run-minutes on the twin)
// and the look that decides the slower candidate stops it, long before the next scheduled pass.
// Every GitHub request is counted per look: a look makes one (the queued-command check) and writes
// only when it stops. A queued /topo command ends the loop at once, through the bundled action too.
// Under load (2 cores for several clusters) it asserts order and counts, never timings.
import { beforeAll, describe, expect, it } from 'vitest';
import { createOctokit } from '../../../src/github/client.js';
import { queuedWorkflowRuns } from '../../../src/github/workflow-runs.js';
import type { Repo } from '../../../src/github-local/index.js';
import { watchPass } from '../../../src/monitor/loop.js';
import { parseObservationBlock } from '../../../src/report/observation-block.js';
import { useActionTestbed, workersCandidate } from '../../support/action-fixture.js';
import { twinRoles } from '../../support/twin-monitor.js';

// on twin-balanced: 8gpu_12rollouts ≈ 5.8 s/rollout, 2gpu ≈ 9.9 (worse)
const PRESETS = { baseline: '8gpu_12rollouts', worse: '2gpu' } as const;
type Role = keyof typeof PRESETS;
const ROLES = Object.keys(PRESETS) as Role[];

const t = useActionTestbed({
  tag: 'wat',
  experiment: { maxParallel: 3 },
  pulls: {
    ...Object.fromEntries(ROLES.map((role) => [role, { files: { [`${role}.yaml`]: `name: ${role}\n` } }])),
    workers: { files: { 'workers.yaml': workersCandidate('workers', 16) } },
  },
});
const { ports, request } = twinRoles(t, PRESETS);

/** Queues a workflow run on the local GitHub API (a run waiting for the self-hosted runner). */
function queueRun(repo: Repo, file: string, event: string): number {
  const id = t.gh.state.id();
  const list = t.gh.state.workflowRuns.get(repo.id) ?? [];
  list.push({
    id,
    name: file.replace(/\.yml$/, ''),
    path: `.github/workflows/${file}`,
    event,
    status: 'queued',
    headSha: 'f'.repeat(40),
    headBranch: 'main',
    createdAt: new Date().toISOString(),
  });
  t.gh.state.workflowRuns.set(repo.id, list);
  return id;
}

const counts = () => {
  const calls = t.gh.calls();
  const read = (c: { method: string; path: string }) => c.method === 'GET' || c.path === '/graphql';
  return { reads: calls.filter(read).length, writes: calls.filter((c) => !read(c)).length };
};

beforeAll(() => {
  // a validate run on a GitHub-hosted runner is queued too: the loop does not yield to it
  queueRun(t.repo, 'topology-validate.yml', 'pull_request');
});

describe('the watch loop (local cluster, local GitHub API)', () => {
  it('stops the candidate decided between two scheduled passes in the look that decides it; looks read one request and write only then', async () => {
    const octokit = createOctokit({ token: t.gh.token, baseUrl: t.gh.url });
    const marks: Array<{ reads: number; writes: number }> = [];
    const base = ports();
    let cancelled = 0;
    // the baseline runs on: once the loop has stopped a candidate the test ends it like a command would
    const p = {
      ...base,
      slurm: {
        ...base.slurm,
        cancel: (id: string, e: string) => {
          cancelled++;
          return base.slurm.cancel(id, e);
        },
      },
    };
    const worse = request('worse').runName;
    const report = await watchPass(
      p,
      { tickSeconds: 1, lagSeconds: 2 },
      // 6 minutes: far more than the decision needs
      { minutes: 6, lookSeconds: 2, yieldCheckSeconds: 2 },
      {
        queued: async () => {
          marks.push(counts());
          const queued = await queuedWorkflowRuns(octokit, { owner: 'acme', repo: 'sim' }, [
            '.github/workflows/topology-submit.yml',
          ]);
          return cancelled ? [...queued, '(the test: a candidate was stopped)'] : queued;
        },
      },
    );
    const history = report.looks.map(
      (l, i) => `look ${i}: stopped [${l.stopped.join(', ')}] ${l.errors.join('; ')}`,
    );
    expect(report.errors, history.join('\n')).toEqual([]);
    // the scheduled pass submitted both and stopped nothing
    expect(report.pass.candidates.map((c) => c.submitted !== undefined)).toEqual([true, true]);
    const i = report.looks.findIndex((l) => l.stopped.includes(worse));
    expect(i, history.join('\n')).toBeGreaterThanOrEqual(0);
    expect(report.looks.flatMap((l) => l.stopped)).toEqual([worse]); // never the baseline
    const job = (await t.jobs('worse')).find((j) => j.name === worse);
    expect(job?.state).toBe('CANCELLED');
    const body =
      t.gh.state
        .commentsOn(t.repo, t.pull('worse').number)
        .find((c) => c.user.login === t.gh.botLogin && c.body.includes('topo:observation'))?.body ?? '';
    expect(['worse', 'not-better']).toContain(parseObservationBlock(body)?.decision?.state);
    // per look: exactly the queued-command check (one read), no write, until the stop
    for (let k = 1; k <= i; k++) {
      const [a, b] = [marks[k - 1], marks[k]] as [
        { reads: number; writes: number },
        { reads: number; writes: number },
      ];
      expect({ reads: b.reads - a.reads, writes: b.writes - a.writes }, `look ${k - 1}`).toEqual({
        reads: 1,
        writes: 0,
      });
    }
    // the stop writes the comment, the check run and the label of that pull request
    const stop = report.looks[i + 1] ? marks[i + 1] : counts();
    expect((stop?.writes ?? 0) - (marks[i]?.writes ?? 0)).toBeGreaterThanOrEqual(2);
    console.log(
      `watch: ${report.looks.length} looks, stopped at look ${i}, ended ${report.ended}; ${JSON.stringify(marks.at(-1))}`,
    );
    expect(report.yieldedTo).toEqual(['(the test: a candidate was stopped)']);
    expect(report.looks).toHaveLength(i + 1);
    expect(t.gh.violations()).toEqual([]);
  }, 480_000);

  it('ends at once when a /topo command is queued: the loop never holds the runner it waits for', async () => {
    const octokit = createOctokit({ token: t.gh.token, baseUrl: t.gh.url });
    const id = queueRun(t.repo, 'topology-submit.yml', 'issue_comment');
    const report = await watchPass(
      ports(),
      { tickSeconds: 1, lagSeconds: 2 },
      { minutes: 5, lookSeconds: 2 },
      {
        queued: () => queuedWorkflowRuns(octokit, { owner: 'acme', repo: 'sim' }, ['topology-submit.yml']),
      },
    );
    // the baseline still runs: without the command it would look on for 5 minutes
    expect(report.pass.candidates.find((c) => c.candidate === 'baseline')?.state).toMatch(
      /starting|warming|stabilising|stable/,
    );
    expect(report.ended).toBe('yielded');
    expect(report.yieldedTo).toEqual([`topology-submit #${id}`]);
    expect(report.looks).toHaveLength(0);
  });

  it('the bundled monitor action yields too (watch-minutes, yield-to, actions: read)', async () => {
    // a candidate of its own, submitted by a /topo command, so the action's pass has a live run
    const submitted = await t.command(t.pull('workers'), '/topo submit');
    expect(submitted.outputs.outcome).toBe('done');
    const run = await t.monitor({
      pull: t.pull('workers'),
      inputs: { 'tick-seconds': '600', 'watch-minutes': '3', 'watch-look-seconds': '2' },
    });
    expect(run.stdout).toMatch(/yielding the runner to topology-submit #\d+/);
    expect(run.stdout).toMatch(/watch: 0 look\(s\), 0 stopped; ended: yielded to topology-submit #\d+/);
    expect(t.gh.violations()).toEqual([]);
  });
});
