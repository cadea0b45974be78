// Stage `autopilot` with the monitor action's port (actions/monitor/autopilot.ts) on the local
// GitHub API and a default-branch checkout whose record holds the twin-measured baseline: a round
// opened once by two passes at once, each bot pull request validated by the pass that opened it
// (GITHUB_TOKEN starts no workflow), Requests made once by the next passes (as after a pass killed
// between opening and requesting), the dashboard's pause holding and resume going on, a person's
// close withdrawing a candidate for good, and a bot pull request another file was pushed to refused.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import {
  autopilotPort,
  closedPullRecorder,
  VALIDATE_CHECK_NAME,
} from '../../../actions/monitor/autopilot.js';
import { buildMonitorPorts } from '../../../actions/monitor/ports.js';
import { dashboardMarker } from '../../../src/autopilot/dashboard.js';
import { RUN_STATE_PURPOSE, runStateOf, updateRunState } from '../../../src/github/run-state.js';
import { stickyMarker } from '../../../src/github/sticky-comment.js';
import { withOutcome } from '../../../src/lifecycle/model.js';
import { autopilot } from '../../../src/monitor/autopilot.js';
import { runStages, stagesNamed, withStage } from '../../../src/monitor/pass.js';
import type { MonitorExperiment, MonitorPorts } from '../../../src/monitor/ports.js';
import { experimentPass } from '../../../src/monitor/read.js';
import { newPassState } from '../../../src/monitor/state.js';
import { createPrometheusClient } from '../../../src/telemetry/prometheus.js';
import type { Experiment } from '../../../src/types/generated/experiment.js';
import { runTopo } from '../../support/cli.js';
import { requireCluster } from '../../support/cluster.js';
import { useLocalGitHub } from '../../support/local-github.js';
import { createExperimentRepo, EXPERIMENT_ID } from '../suggest/experiment-repo.js';

const { gh, octokit } = useLocalGitHub();
const POLICY = { enabled: true, gpu_hours: 400, parallel: 2, max_rounds: 3 };
let n = 0;

/** A default-branch checkout with the measured baseline and an autopilot policy, and its repository. */
function setup(policy: Record<string, unknown> = POLICY) {
  const checkout = createExperimentRepo('twin-renderer-bound');
  checkout.addRun('baseline', null, {}, 'accepted');
  const experiment = { ...checkout.experiment, autopilot: policy } as Experiment;
  writeFileSync(join(checkout.dir, 'topologies', EXPERIMENT_ID, 'experiment.yaml'), stringify(experiment));
  const name = `sim${++n}`;
  const repo = gh.createRepo(`acme/${name}`, { files: checkout.files() });
  gh.addCollaborator(repo, 'alice', 'write');
  gh.addCollaborator(repo, 'rita', 'read');
  const log: string[] = [];
  const port = autopilotPort(
    octokit,
    { owner: 'acme', repo: name, botLogin: gh.botLogin },
    {
      workspace: checkout.dir,
      clustersFile: 'topologies/clusters.yaml',
      topologiesDir: 'topologies',
      log: (l) => log.push(l),
      record: closedPullRecorder(octokit, { owner: 'acme', repo: name, botLogin: gh.botLogin }, {}),
    },
  );
  const exp: MonitorExperiment = { experiment, timeScale: 60, candidates: [] };
  // the runner's clock, checked against the local Prometheus's on the first pass
  const ports = {
    autopilot: port,
    now: () => Date.now() / 1000 + clockOffset,
    prometheus: createPrometheusClient({ baseUrl: requireCluster().prometheusUrl }),
  } as unknown as MonitorPorts;
  let clockOffset = 0;
  /** One pass of the stage alone (no candidate runs yet: the round's Requests wait for act). */
  const pass = async (expectErrors: unknown[] = []) => {
    const state = newPassState();
    state.experiments = [
      experimentPass(exp, { S: 60, scrape: 1, evalTs: 0, wallMinutes: 0, expectedRollouts: null }),
    ];
    await autopilot(state, ports);
    expect(state.experiments[0]?.errors).toEqual(expectErrors);
    return state.experiments[0]?.autopilot;
  };
  const skewClock = (seconds: number) => {
    clockOffset = seconds;
  };
  const pulls = () => gh.state.pullsOf(repo);
  const requests = (pr: number) =>
    runStateOf(
      gh.state
        .commentsOn(repo, pr)
        .filter((c) => c.user.login === gh.botLogin && c.body.includes(stickyMarker(RUN_STATE_PURPOSE)))
        .map((c) => ({ id: c.id, body: c.body })) as never,
    ).requests;
  const dashboard = () =>
    gh.state.itemsOf(repo).find((i) => i.isIssue && i.body?.startsWith(dashboardMarker(EXPERIMENT_ID)));
  return { repo, pass, pulls, requests, dashboard, log, port, exp, checkout, skewClock };
}

describe('stage autopilot on the local GitHub API', () => {
  it('two passes at once open one round; the pass that opened a pull request validated it; the next passes request each once', async () => {
    const t = setup();
    const done = await Promise.all([t.pass(), t.pass()]);
    const pulls = t.pulls();
    expect(pulls, JSON.stringify([done, t.log])).toHaveLength(2);
    expect(pulls).toHaveLength(2);
    for (const p of pulls) {
      expect(p.head.ref).toMatch(new RegExp(`^topo/autopilot/${EXPERIMENT_ID}/`));
      expect(p.user.login).toBe(gh.botLogin);
      expect(p.body).toContain('**Autopilot, round 1**');
      expect(p.body).toMatch(/\*\*Hypothesis\.\*\*/);
      expect(p.body).toContain('Predicted GPU memory');
      // the candidate file is the only change, its hypothesis carries the round for the record
      const files = gh.files(t.repo, p.head.ref);
      const changed = [...files.keys()].filter((f) => !gh.files(t.repo, 'main').has(f));
      expect(changed).toHaveLength(1);
      expect((parse(files.get(changed[0] as string) as string) as { hypothesis: string }).hypothesis).toMatch(
        /^Autopilot round 1: /,
      );
      const checks = gh.state.checkRuns.filter(
        (r) => r.headSha === p.head.sha && r.name === VALIDATE_CHECK_NAME,
      );
      expect(checks.map((c) => c.conclusion)).toContain('success');
    }
    // killed after opening, before the Requests: the next passes (two at once) make each once
    await Promise.all([t.pass(), t.pass()]);
    await t.pass();
    for (const p of pulls) {
      const rs = t.requests(p.number);
      expect(rs).toHaveLength(1);
      expect(rs[0]).toMatchObject({ login: gh.botLogin, headSha: p.head.sha, experiment: EXPERIMENT_ID });
    }
    expect(t.pulls()).toHaveLength(2);
    // one dashboard: the one of the two first passes that came second closed its own as a duplicate
    expect(gh.state.itemsOf(t.repo).filter((i) => i.isIssue && i.state === 'open')).toHaveLength(1);
    expect(t.dashboard()?.body).toContain('**Round:** 1');
    expect(gh.violations()).toEqual([]);
  });

  it('pause on the dashboard holds; a reader’s resume is ignored; a writer’s resume goes on', async () => {
    const t = setup();
    await t.pass(); // the first pass writes the dashboard with the round it opens
    const [first] = t.pulls();
    const d = t.dashboard();
    expect(d).toBeDefined();
    gh.comment(t.repo, d!.number, 'alice', '/topo pause');
    gh.closePull(first!); // a person closes one: withdrawn, the round goes on without it
    const paused = await t.pass();
    expect(paused?.waiting).toMatch(/^paused on the dashboard/);
    expect(t.pulls()).toHaveLength(2);
    gh.comment(t.repo, d!.number, 'rita', '/topo resume');
    expect((await t.pass())?.waiting).toMatch(/^paused/);
    gh.comment(t.repo, d!.number, 'alice', '/topo resume');
    await t.pass();
    const [, second] = t.pulls();
    expect(t.requests(second!.number)).toHaveLength(1);
    expect(t.requests(first!.number)).toHaveLength(0);
    expect(t.dashboard()?.body).toContain('withdrawn');
  });

  it('a person’s push to a bot branch leaves it to the person: no Request', async () => {
    const t = setup();
    await t.pass();
    const [first] = t.pulls();
    const files = gh.files(t.repo, first!.head.ref);
    const path = [...files.keys()].find(
      (f) => f.endsWith('.yaml') && f.includes('/topology-opt') && !gh.files(t.repo, 'main').has(f),
    );
    gh.state.pushToPull(first!, { [path as string]: `${files.get(path as string)}# mine\n` }, 'my own take');
    await t.pass();
    expect(t.requests(first!.number)).toHaveLength(0);
    const [, second] = t.pulls();
    expect(t.requests(second!.number)).toHaveLength(1);
  });

  it('the controls live in the bot’s state: a reader closing the dashboard concludes nothing, editing out its marker loses no pause, every command is answered', async () => {
    const t = setup();
    await t.pass();
    const d = t.dashboard();
    gh.addCollaborator(t.repo, 'tess', 'triage');
    gh.comment(t.repo, d!.number, 'alice', '/topo pause');
    gh.comment(t.repo, d!.number, 'tess', '/topo conclude');
    gh.comment(t.repo, d!.number, 'alice', '/topo pasue');
    expect((await t.pass())?.waiting).toMatch(/^paused on the dashboard/);
    const replies = gh.state.commentsOn(t.repo, d!.number).filter((c) => c.user.login === gh.botLogin);
    expect(replies.map((c) => c.body.split(':').slice(0, 2).join(':'))).toEqual([
      '@alice: paused',
      '@tess: refused',
      '@alice: not done',
    ]);
    gh.state.closePull(d!); // a triage user closes it: a view, not a control
    expect((await t.pass())?.waiting).toMatch(/^paused/);
    expect(t.dashboard()?.state).toBe('open');
    d!.body = 'our notes'; // a writer edits its hidden marker out: the next pass makes a new one
    expect((await t.pass())?.waiting).toMatch(/^paused/);
    for (const p of t.pulls()) expect(t.requests(p.number)).toHaveLength(0);
    expect(t.dashboard()?.number).not.toBe(d!.number);
    await t.pass(); // answered once: no second reply to the same commands
    expect(gh.state.commentsOn(t.repo, d!.number).filter((c) => c.user.login === gh.botLogin)).toHaveLength(
      3,
    );
  });

  it('a /topo conclude on a dashboard whose marker a writer edited out is applied and answered there, once', async () => {
    const t = setup();
    await t.pass();
    const d = t.dashboard();
    d!.body = 'our notes'; // a writer edits its hidden marker out: the next pass makes a new one
    gh.comment(t.repo, d!.number, 'alice', '/topo conclude');
    await t.pass();
    const fresh = t.dashboard();
    expect(fresh?.number).not.toBe(d!.number);
    const bot = (n: number) => gh.state.commentsOn(t.repo, n).filter((c) => c.user.login === gh.botLogin);
    expect(bot(d!.number).map((c) => c.body)).toEqual([
      '@alice: concluding with the best so far: no new runs start, running bot runs are stopped.',
    ]);
    expect(fresh?.body).toMatch(/\*\*Concluded:\*\*/);
    // a command given on the former dashboard after the new one is written is read too
    gh.comment(t.repo, d!.number, 'alice', '/topo pause');
    await t.pass();
    expect(bot(d!.number).at(-1)?.body).toBe(
      '@alice: not done: the experiment has concluded; a conclusion is final.',
    );
    await t.pass(); // answered once
    expect(bot(d!.number)).toHaveLength(2);
    // the new dashboard holds the final report, no reply to a command given elsewhere
    expect(bot(fresh!.number).filter((c) => c.body.startsWith('@'))).toHaveLength(0);
    expect(gh.violations()).toEqual([]);
  });

  it('refuses a merged policy that breaks validate’s rules (parallel above max_parallel) and says so on the dashboard', async () => {
    const t = setup({ ...POLICY, parallel: 16 });
    const done = await t.pass();
    expect(done?.actions).toEqual([]);
    expect(t.pulls()).toHaveLength(0);
    expect(t.dashboard()?.body).toMatch(
      /refused, nothing starts until it is fixed: .*experiment\.yaml:\d+: autopilot-parallel: parallel 16 is above max_parallel/,
    );
  });

  it('the pass that closes a bot pull request records it (GITHUB_TOKEN starts no record workflow)', async () => {
    const t = setup();
    await t.pass();
    await t.pass(); // the Requests
    const [first] = t.pulls();
    const [request] = t.requests(first!.number);
    await updateRunState(
      octokit,
      { owner: 'acme', repo: t.repo.name, issue_number: first!.number, botLogin: gh.botLogin },
      (s) => withOutcome(s, request!.id, { kind: 'failed', at: new Date().toISOString(), evidence: ['oom'] }),
    );
    await t.port.close(t.exp, first!.number, 'Closed by the autopilot: rejected by its decision.');
    const record = JSON.parse(gh.files(t.repo, 'main').get(`experiments/${EXPERIMENT_ID}.json`) as string);
    const run = record.runs.find((r: { name: string }) => r.name === request!.candidate);
    expect(run, t.log.join('\n')).toMatchObject({ pull_request: { number: first!.number } });
    expect(t.requests(first!.number)).toHaveLength(1);
  });
});

describe('the loop closes, on the local GitHub API', () => {
  it('merge: auto: the winner labelled, merged once branch protection’s required checks pass, recorded, the final report on the dashboard, closed', async () => {
    const t = setup({ ...POLICY, merge: 'auto', required_checks: ['topo/validate', 'topo/monitor'] });
    gh.protect(t.repo, ['topo/validate', 'topo/monitor']);
    await t.pass();
    await t.pass(); // the Requests
    const [winner] = t.pulls();
    const name = winner!.head.ref.split('/').at(-1) as string;
    await t.port.save(t.exp, (s) => ({ ...s, concluded: { reason: 'max_rounds 1 reached', winner: name } }));
    // topo/monitor still in progress: labelled, not merged
    const check = await octokit.rest.checks.create({
      owner: 'acme',
      repo: t.repo.name,
      name: 'topo/monitor',
      head_sha: winner!.head.sha,
      status: 'in_progress',
    });
    await t.pass();
    expect(winner!.labels).toEqual(['autopilot:winner']);
    expect(winner!.merged).toBe(false);
    expect(t.dashboard()?.body).toContain('waits for its required check');
    await octokit.rest.checks.update({
      owner: 'acme',
      repo: t.repo.name,
      check_run_id: check.data.id,
      status: 'completed',
      conclusion: 'success',
    });
    await t.pass();
    expect(winner!.merged).toBe(true);
    expect(winner!.mergedBy?.login).toBe(gh.botLogin);
    const main = gh.files(t.repo, 'main');
    const record = JSON.parse(main.get(`experiments/${EXPERIMENT_ID}.json`) as string);
    expect(record.runs.find((r: { name: string }) => r.name === name)).toMatchObject({ status: 'accepted' });
    expect(record.report?.concluded_at).toBeTruthy();
    expect(main.has(`experiments/${EXPERIMENT_ID}-report.md`)).toBe(true);
    const d = t.dashboard();
    expect(d?.state).toBe('closed');
    expect(d?.body).toContain('The final report is below.');
    const comments = gh.state.commentsOn(t.repo, d!.number).filter((c) => c.user.login === gh.botLogin);
    expect(comments.map((c) => c.body).join('\n')).toContain(`experiments/${EXPERIMENT_ID}.md`);
    await t.pass(); // closed: nothing more
    expect(gh.violations()).toEqual([]);
  });

  it('submit: approval: a writer’s approving review of the head starts the run; a reader’s does not', async () => {
    const t = setup({ ...POLICY, submit: 'approval' });
    await t.pass();
    const [first, second] = t.pulls();
    gh.review(first!, 'alice', 'APPROVED');
    gh.review(second!, 'rita', 'APPROVED');
    await t.pass();
    expect(t.requests(first!.number)).toHaveLength(1);
    expect(t.requests(second!.number)).toHaveLength(0);
    expect(t.dashboard()?.body).toMatch(
      new RegExp(`approving review or /topo submit on \\\\?#${second!.number}`),
    );
    expect(gh.violations()).toEqual([]);
  });
});

describe('nothing stalls silently, on the local GitHub API', () => {
  it('a person amending the bot’s commit (same message, trailer kept) takes it over: no Request, and the dashboard says what to do', async () => {
    const t = setup();
    await t.pass();
    const [first, second] = t.pulls();
    const head = gh.state.commit(first!.head.sha);
    const files = gh.files(t.repo, first!.head.ref);
    const path = [...files.keys()].find((f) => !gh.files(t.repo, 'main').has(f)) as string;
    // `git commit --amend` and a force push: the bot's message and parent, another tree
    const amended = gh.state.commitFiles(
      gh.state.user('alice'),
      head.parents[0],
      { [path]: `${files.get(path)}# mine\n` },
      head.message,
    );
    first!.head.sha = amended;
    t.repo.refs.set(`refs/heads/${first!.head.ref}`, amended);
    await t.pass();
    expect(t.requests(first!.number)).toHaveLength(0);
    expect(t.requests(second!.number)).toHaveLength(1);
    expect(t.dashboard()?.body).toMatch(
      new RegExp(
        `- #${first!.number}: .* was changed by someone else: its head is not the autopilot's commit`,
      ),
    );
  });

  it('a 403 on the topo/validate check run is on the dashboard and fails the pass; the next pass posts it', async () => {
    const t = setup();
    gh.failNext({
      match: /^POST \/repos\/acme\/sim\d+\/check-runs$/,
      status: 403,
      times: 2,
      message: 'Resource not accessible by integration',
    });
    await t.pass([
      expect.stringMatching(/could not post `topo\/validate`/),
      expect.stringMatching(/could not post/),
    ]);
    expect(t.dashboard()?.body).toMatch(
      /GitHub refused to post `topo\/validate` on #\d+ \(HTTP 403: Resource not accessible by integration/,
    );
    const heads = t.pulls().map((p) => p.head.sha);
    expect(gh.state.checkRuns.filter((r) => heads.includes(r.headSha))).toEqual([]);
    await t.pass();
    for (const p of t.pulls())
      expect(
        gh.state.checkRuns.filter((r) => r.headSha === p.head.sha && r.name === VALIDATE_CHECK_NAME),
      ).toHaveLength(1);
    expect(t.dashboard()?.body).not.toContain('Needs a person');
  });

  it('a pass that died opening a round is resumed by the next: the missing pull request and its topo/validate, no new round', async () => {
    const t = setup();
    // the first pull request is created, the second refused: the pass is cut there
    let creates = 0;
    const open = t.port.open;
    t.port.open = async (e, candidate, sha) => {
      if (++creates === 2) throw new Error('the runner was killed');
      return open(e, candidate, sha);
    };
    await t.pass([expect.stringMatching(/the runner was killed/)]);
    expect(t.pulls()).toHaveLength(1);
    t.port.open = open;
    await t.pass();
    const pulls = t.pulls();
    expect(pulls).toHaveLength(2);
    for (const p of pulls) {
      expect(p.body).toContain('**Autopilot, round 1**');
      expect(
        gh.state.checkRuns.filter((r) => r.headSha === p.head.sha && r.name === VALIDATE_CHECK_NAME),
      ).toHaveLength(1);
    }
    expect(t.dashboard()?.body).toContain('**Round:** 1');
    await t.pass();
    expect(t.pulls()).toHaveLength(2);
  });

  it('never proposes a name a person’s open pull request uses; a clash a person makes later is on the dashboard', async () => {
    const first = setup();
    await first.pass();
    const names = first.pulls().map((p) => p.head.ref.split('/').at(-1) as string);
    const t = setup();
    const file = (name: string) => `topologies/${EXPERIMENT_ID}/${name}.yaml`;
    gh.openPull({
      repo: t.repo,
      author: 'alice',
      title: 'mine',
      head: 'alice/mine',
      files: { [file(names[0]!)]: `name: ${names[0]}\n` },
    });
    await t.pass();
    const proposed = t
      .pulls()
      .filter((p) => p.user.login === gh.botLogin)
      .map((p) => p.head.ref.split('/').at(-1));
    expect(proposed).not.toContain(names[0]);
    expect(proposed.length).toBeGreaterThan(0);
    const clash = gh.openPull({
      repo: t.repo,
      author: 'alice',
      title: 'also mine',
      head: 'alice/also',
      files: { [file(proposed[0]!)]: `name: ${proposed[0]}\n` },
    });
    await t.pass();
    expect(t.dashboard()?.body).toContain(
      `is also the candidate of #${clash.number}, a person's pull request`,
    );
  });

  it('a runner clock off Prometheus’s on the first pass opens nothing and says so; once fixed the round opens', async () => {
    const t = setup();
    t.skewClock(600);
    await t.pass();
    expect(t.pulls()).toHaveLength(0);
    expect(t.dashboard()?.body).toMatch(
      /the runner's clock cannot be trusted: the runner's clock .* is 10 min ahead of Prometheus's/,
    );
    t.skewClock(0);
    await t.pass();
    expect(t.pulls()).toHaveLength(2);
  });
});

describe('topo autopilot status|plan --repo read what the dashboard is written from', () => {
  it('agree with the dashboard the monitor’s pass wrote: the bot’s state, its pull requests, the live Requests', async () => {
    const t = setup();
    const config = {
      workspace: t.checkout.dir,
      topologiesDir: 'topologies',
      clustersFile: 'topologies/clusters.yaml',
      owner: 'acme',
      repo: t.repo.name,
      botLogin: gh.botLogin,
      env: process.env,
      log: () => {},
    };
    // the monitor's own pass (its read of the open pull requests), without act: nothing is submitted
    const stages = withStage(
      stagesNamed('read', 'observe', 'decide'),
      { name: 'autopilot', run: autopilot },
      { after: 'decide' },
    );
    const pass = async () => {
      const ports = buildMonitorPorts(octokit, config);
      try {
        await runStages(newPassState({ tickSeconds: 60 }), ports, stages);
      } finally {
        await ports.close();
      }
    };
    await pass(); // round 1 opened
    await pass(); // its Requests
    await pass(); // round 1 is running: the dashboard as it stands
    // the test's cluster (SLURM_CONF of this worker's own Slurm), as the monitor's pass above reads it
    const env = { ...process.env, GITHUB_TOKEN: gh.token, GITHUB_API_URL: gh.url };
    const status = await runTopo(
      ['autopilot', 'status', EXPERIMENT_ID, '--repo', `acme/${t.repo.name}`],
      t.checkout.dir,
      env,
    );
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toBe(`${t.dashboard()?.body}\n`);
    expect(status.stdout).toContain('**Round:** 1.');
    const plan = await runTopo(
      ['autopilot', 'plan', EXPERIMENT_ID, '--repo', `acme/${t.repo.name}`],
      t.checkout.dir,
      env,
    );
    expect(plan.stdout).toMatch(/^\S+: round 1, waiting: round 1 is running\nnothing to do now\n$/);
    // without --repo: the record alone, and it says so
    const bare = await runTopo(['autopilot', 'status', EXPERIMENT_ID], t.checkout.dir, {});
    expect(bare.stdout).toContain('From the record on this checkout only');
  });
});
