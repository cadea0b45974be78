// The /topo router over the registry with injected runners, against the local GitHub API: what each
// outcome looks like on the pull request (reply and reactions), including the paths the action's
// commands do not reach in other tests (a runner that throws, a closed pull request, not a PR, a
// dashboard's command on a pull request).
import { beforeAll, describe, expect, it } from 'vitest';
import type {
  CommandContext,
  CommandPorts,
  HandlerResult,
  PullCommand,
} from '../../../src/commands/command.js';
import { COMMANDS } from '../../../src/commands/registry.js';
import { routeComment } from '../../../src/commands/route.js';
import type { Pull, Repo } from '../../../src/github-local/index.js';
import { useLocalGitHub } from '../../support/local-github.js';

const { gh, octokit } = useLocalGitHub({ strict: true });
let repo: Repo;
let pull: Pull;

beforeAll(async () => {
  repo = gh.createRepo('acme/sim');
  gh.addCollaborator(repo, 'alice', 'maintain');
  pull = gh.openPull({
    repo,
    author: 'alice',
    title: 'c',
    head: 'c',
    files: { 'topologies/e/c.yaml': 'name: c\n' },
  });
});

type Runners = Record<string, (ctx: CommandContext) => Promise<HandlerResult>>;

/** The registry with these runners in place of the real ones (the others must not be reached). */
function registry(runners: Runners) {
  return COMMANDS.map((c) =>
    c.where === 'pull'
      ? ({
          ...c,
          run:
            runners[c.name] ??
            (c.name === 'help'
              ? c.run
              : async () => {
                  throw new Error(`${c.name} was not expected to run`);
                }),
        } satisfies PullCommand)
      : c,
  );
}

const ports = {} as CommandPorts;

async function route(body: string, runners: Runners, p: Pull = pull, isPullRequest = true) {
  const c = gh.comment(repo, p.number, 'alice', body);
  const outcome = await routeComment(
    octokit,
    {
      owner: 'acme',
      repo: 'sim',
      issueNumber: p.number,
      isPullRequest,
      comment: { id: c.id, body, user: { login: 'alice', type: 'User' } },
    },
    { botLogin: gh.botLogin, ports, commands: registry(runners) },
  );
  return {
    outcome,
    reactions: gh.state.reactions.filter((r) => r.commentId === c.id).map((r) => r.content),
    reply: gh.state.comments.filter((x) => x.id > c.id && x.user.login === gh.botLogin).at(0)?.body,
  };
}

describe('routeComment', () => {
  it('passes the pull request context to the handler and replies with its message', async () => {
    let seen: unknown;
    const r = await route('/topo learn the driver saturates at 2 concurrent rollouts', {
      learn: async (ctx) => {
        seen = {
          argument: ctx.argument,
          headSha: ctx.headSha,
          actor: ctx.actor,
          defaultBranch: ctx.defaultBranch,
        };
        return { ok: true, message: 'learned' };
      },
    });
    expect(seen).toEqual({
      argument: 'the driver saturates at 2 concurrent rollouts',
      headSha: pull.head.sha,
      actor: 'alice',
      defaultBranch: 'main',
    });
    expect(r.outcome).toEqual({ outcome: 'done', command: 'learn', message: 'learned' });
    expect(r.reactions).toEqual(['eyes', 'rocket']);
    expect(r.reply).toBe('> /topo learn the driver saturates at 2 concurrent rollouts\n\nlearned');
  });

  it('answers a dashboard’s command on a pull request with the help and where it is taken', async () => {
    const r = await route('/topo pause', {});
    expect(r.outcome.outcome).toBe('invalid');
    expect(r.reactions).toEqual(['eyes', 'confused']);
    expect(r.reply).toMatch(/`\/topo pause` is taken on an autopilot experiment's dashboard issue, not here/);
  });

  it('answers /topo help itself, listing the registry', async () => {
    const r = await route('/topo help', {});
    expect(r.outcome.outcome).toBe('done');
    expect(r.reply).toContain('`/topo state rebuild`');
    expect(r.reply).toContain('`/topo report`');
  });

  it('turns a refusal into confused + reason, and a thrown error into failed', async () => {
    const refused = await route('/topo submit', {
      submit: async () => ({ ok: false, message: 'nothing to submit' }),
    });
    expect(refused.outcome.outcome).toBe('refused');
    expect(refused.reactions).toEqual(['eyes', 'confused']);
    const failed = await route('/topo cancel', {
      cancel: async () => {
        throw new Error('squeue: connection refused');
      },
    });
    expect(failed.outcome).toMatchObject({ outcome: 'failed', command: 'cancel' });
    expect(failed.reply).toMatch(/`\/topo cancel` failed: squeue: connection refused/);
  });

  it('refuses commands on closed pull requests except the report, the rebuild and the help', async () => {
    const closed = gh.openPull({
      repo,
      author: 'alice',
      title: 'd',
      head: 'd',
      files: { 'topologies/e/d.yaml': 'name: d\n' },
    });
    gh.closePull(closed);
    const r = await route('/topo submit', { submit: async () => ({ ok: true, message: 'no' }) }, closed);
    expect(r.outcome.outcome).toBe('refused');
    expect(r.reply).toMatch(/This pull request is closed/);
    const c = await route(
      '/topo report',
      { report: async () => ({ ok: true, message: 'report posted' }) },
      closed,
    );
    expect(c.outcome.outcome).toBe('done');
  });

  it('explains that commands work on pull requests only', async () => {
    const r = await route('/topo submit', {}, pull, false);
    expect(r.outcome.outcome).toBe('invalid');
    expect(r.reply).toMatch(/work on pull requests/);
  });
});
