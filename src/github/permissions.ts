// Who may run /topo commands that touch the cluster: people with write, maintain or admin access
// to the repository, on pull requests whose branch lives in the repository itself. Fork pull
// requests are refused: the self-hosted runner must never act for code the maintainers did not
// push. Every refusal carries a polite reason that is posted as the reply.
import type { Octokit } from './client.js';

export type CommandDecision = { allowed: true; permission: string } | { allowed: false; reason: string };

export interface PullRequestOrigin {
  /** `owner/name` of the head repository; null when the fork was deleted. */
  headRepoFullName: string | null;
  baseRepoFullName: string;
  state: 'open' | 'closed' | string;
}

const WRITE_ROLES = new Set(['admin', 'maintain', 'write']);

/** Pure: the decision from the facts. */
export function decideCommandAllowed(facts: {
  commenter: string;
  command: string;
  repository: string;
  /** Legacy `permission` (admin/write/read/none) and the exact `role_name`. */
  permission: string;
  roleName?: string;
  pull: PullRequestOrigin;
}): CommandDecision {
  const { commenter, command, repository, pull } = facts;
  if (
    pull.headRepoFullName === null ||
    pull.headRepoFullName.toLowerCase() !== pull.baseRepoFullName.toLowerCase()
  ) {
    return {
      allowed: false,
      reason:
        `Sorry @${commenter}, \`/topo ${command}\` is not available on pull requests from forks: experiments run on a ` +
        `self-hosted runner next to the cluster, and it only acts for branches pushed to ${repository} itself. ` +
        'A maintainer can push this branch to the repository and open the pull request from there.',
    };
  }
  const role = facts.roleName && WRITE_ROLES.has(facts.roleName) ? facts.roleName : facts.permission;
  if (!WRITE_ROLES.has(role)) {
    return {
      allowed: false,
      reason:
        `Sorry @${commenter}, \`/topo ${command}\` needs write access to ${repository} (you have ` +
        `${facts.roleName || facts.permission || 'none'}), because it spends GPU hours on the cluster. ` +
        'Ask a maintainer to run it for you.',
    };
  }
  return { allowed: true, permission: role };
}

/** Reads the commenter's permission and the pull request's origin, then decides. */
export async function checkCommandAllowed(
  octokit: Octokit,
  input: { owner: string; repo: string; username: string; command: string; pull: PullRequestOrigin },
): Promise<CommandDecision> {
  let permission = 'none';
  let roleName: string | undefined;
  try {
    const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({
      owner: input.owner,
      repo: input.repo,
      username: input.username,
    });
    permission = data.permission;
    roleName = data.role_name;
  } catch (e) {
    // 404: not a collaborator (or no such user) — no access.
    if ((e as { status?: number }).status !== 404) throw e;
  }
  return decideCommandAllowed({
    commenter: input.username,
    command: input.command,
    repository: `${input.owner}/${input.repo}`,
    permission,
    roleName,
    pull: input.pull,
  });
}

/** The origin facts from a pull request as the REST API (or a webhook payload) returns it. */
export function pullOrigin(pull: {
  state: string;
  head: { repo: { full_name: string } | null };
  base: { repo: { full_name: string } };
}): PullRequestOrigin {
  return {
    headRepoFullName: pull.head.repo?.full_name ?? null,
    baseRepoFullName: pull.base.repo.full_name,
    state: pull.state,
  };
}
