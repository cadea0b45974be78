// `/topo why <candidate>` (the command added as one file, src/commands/why.ts): through the router over
// the registry, against the local GitHub API, anyone gets the evidence of a candidate's judgement as
// the monitor last published it, escaped; a candidate without a run is answered so.
import { beforeAll, describe, expect, it } from 'vitest';
import type { CommandPorts } from '../../../src/commands/command.js';
import { routeComment } from '../../../src/commands/route.js';
import { whyText } from '../../../src/commands/why.js';
import { createOctokit } from '../../../src/github/client.js';
import { updateRunState } from '../../../src/github/run-state.js';
import type { Pull, Repo } from '../../../src/github-local/index.js';
import { withRequest } from '../../../src/lifecycle/model.js';
import { renderObservationBlock } from '../../../src/report/observation-block.js';
import type { CandidateObservation } from '../../../src/types/generated/metrics.js';
import { useLocalGitHub } from '../../support/local-github.js';

const EXP = 'topology-opt-why-local-20260101';
const RUN = `topo-${EXP}-w-0badcafe-0000aaaa`;
const { gh, octokit } = useLocalGitHub({ strict: true });
let repo: Repo;
let pull: Pull;

const observation: CandidateObservation = {
  run_name: RUN,
  verdict: {
    state: 'stable',
    evidence: ['warm-up ended at run-minute 6', 'a <b>log</b> line @team'],
    projected_full_run: { value: 10.25, low: 9.9, high: 10.6 },
  },
  stable_metrics: {},
  decision: {
    state: 'better',
    reference: { role: 'baseline', name: 'baseline', pr: null },
    relative_change: { value: -0.059, low: -0.091, high: -0.026 },
    min_improvement: 0.02,
    decided_at_minutes: 14,
    evidence: ['the interval lies below −2% at run-minute 14'],
  },
} as CandidateObservation;

beforeAll(async () => {
  repo = gh.createRepo('acme/sim');
  gh.addCollaborator(repo, 'alice', 'write');
  pull = gh.openPull({
    repo,
    author: 'alice',
    title: 'w',
    head: 'w',
    files: { [`topologies/${EXP}/w.yaml`]: 'name: w\n' },
  });
  const target = { owner: 'acme', repo: 'sim', issue_number: pull.number, botLogin: gh.botLogin };
  await updateRunState(createOctokit({ token: gh.token, baseUrl: gh.url }), target, (s) =>
    withRequest(s, {
      id: '0000aaaa',
      experiment: EXP,
      candidate: 'w',
      path: `topologies/${EXP}/w.yaml`,
      pr: pull.number,
      headSha: pull.head.sha,
      topologyHash: '0badcafe',
      runName: RUN,
      login: 'alice',
      requestedAt: '2026-12-01T10:00:00.000Z',
    }),
  );
  gh.comment(
    repo,
    pull.number,
    gh.botLogin,
    `<!-- topo:sticky:monitor-w -->\n### w\n\n${renderObservationBlock(observation)}\n`,
  );
});

async function ask(body: string, login: string) {
  const c = gh.comment(repo, pull.number, login, body);
  const outcome = await routeComment(
    octokit,
    {
      owner: 'acme',
      repo: 'sim',
      issueNumber: pull.number,
      isPullRequest: true,
      comment: { id: c.id, body, user: { login, type: 'User' } },
    },
    { botLogin: gh.botLogin, ports: {} as CommandPorts },
  );
  return {
    outcome,
    reply: gh.state.comments.filter((x) => x.id > c.id && x.user.login === gh.botLogin).at(0)?.body,
  };
}

describe('/topo why', () => {
  it('gives anyone the evidence of the candidate’s judgement, escaped', async () => {
    const r = await ask('/topo why w', 'rita');
    expect(r.outcome.outcome).toBe('done');
    expect(r.reply).toContain(whyText('w', observation));
    expect(r.reply).toContain('Decision: **better** against the baseline by -5.9% [-9.1%, -2.6%]');
    expect(r.reply).toContain('decided at run-minute 14');
    expect(r.reply).toContain('- the interval lies below −2% at run-minute 14');
    expect(r.reply).toContain('&lt;b&gt;log&lt;/b&gt; line @\u200bteam');
    expect(r.reply).not.toContain('<b>');
  });

  it('answers a candidate without a run, naming the ones there are', async () => {
    const r = await ask('/topo why v', 'rita');
    expect(r.outcome.outcome).toBe('refused');
    expect(r.reply).toContain('This pull request has no run of `v`; its candidates are `w`.');
  });

  it('says a run has no judgement yet', () => {
    expect(whyText('w', undefined)).toContain('no judgement yet');
  });
});
