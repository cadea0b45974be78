// What the record reads back when a pull request closes: the commands recorded at close (`/topo reject`,
// `/topo learn`), parsed by the one parser and counted only from people the router accepts them from
// (write access, not a fork), so the record says what the "Noted" replies promised. The record action
// hands this to the record (src/usecases/record.ts `closeCommands`).
import type { Octokit } from '../github/client.js';
import { checkCommandAllowed, pullOrigin } from '../github/permissions.js';
import type { ClosedPullRequest, CommentFacts } from '../usecases/record.js';
import type { Command } from './command.js';
import { parseCommand } from './parse.js';
import { COMMANDS } from './registry.js';

export function recordedAtClose(
  target: { octokit: Octokit; owner: string; repo: string; botLogin: string },
  commands: readonly Command[] = COMMANDS,
): (pull: ClosedPullRequest) => Promise<CommentFacts> {
  const { octokit, owner, repo, botLogin } = target;
  return async (pull) => {
    const comments = await octokit.paginate(octokit.rest.issues.listComments, {
      owner,
      repo,
      issue_number: pull.number,
      per_page: 100,
    });
    let facts: CommentFacts = { rejectReason: null, learnings: [] };
    const allowed = new Map<string, boolean>();
    for (const c of comments) {
      const login = c.user?.login ?? null;
      if (!c.body || !login || login === botLogin || c.user?.type === 'Bot') continue;
      const parsed = parseCommand(c.body, 'pull', commands);
      if (parsed.kind !== 'command' || !parsed.command.recordedAtClose || !parsed.argument) continue;
      const name = parsed.command.name;
      if (!allowed.has(login))
        allowed.set(
          login,
          (
            await checkCommandAllowed(octokit, {
              owner,
              repo,
              username: login,
              command: name,
              pull: pullOrigin(pull),
            })
          ).allowed,
        );
      if (allowed.get(login))
        facts = parsed.command.recordedAtClose(facts, parsed.argument, { url: c.html_url, login });
    }
    return facts;
  };
}
