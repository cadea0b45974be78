// `topo doctor`'s checks of the repository settings the security model rests on (docs/security.md):
// fork pull requests need a maintainer's approval before their workflows run (a fork's `pull_request`
// workflow could target the self-hosted runner), and the SSH key is a secret of the `slurm`
// environment limited to the default branch (a repository secret reaches every branch's workflow).
// What the token cannot read is a warning with the exact setting to check by hand, never a pass.
import type { Octokit } from '../github/client.js';
import type { Check } from './checks.js';
import { classifyRequestError, describeFailure } from './network.js';

const FORK_SETTING =
  'Settings → Actions → General → "Approval for running fork pull request workflows from contributors": "Require approval for all external contributors"';

const warn = (name: string, detail: string, fix: string): Check => ({ name, status: 'warn', detail, fix });

/** Why a settings read failed, in one line (403/404: the token may not read it). */
function unreadable(what: string, error: unknown): string {
  const f = classifyRequestError(error);
  return f.kind === 'permission' || f.kind === 'not-found'
    ? `the token cannot read ${what} (HTTP ${f.status}: it needs admin on the repository, Administration: read)`
    : describeFailure(`cannot read ${what}`, f);
}

/** The repository's approval policy for fork pull request workflows. */
export async function checkForkApproval(octokit: Octokit, owner: string, repo: string): Promise<Check> {
  const name = 'fork pull requests';
  let policy: string;
  try {
    const res = await octokit.request(
      'GET /repos/{owner}/{repo}/actions/permissions/fork-pr-contributor-approval',
      { owner, repo },
    );
    policy = (res.data as { approval_policy: string }).approval_policy;
  } catch (error) {
    return warn(
      name,
      unreadable('the fork pull request approval setting', error),
      `check by hand: ${FORK_SETTING}`,
    );
  }
  if (policy === 'all_external_contributors')
    return { name, status: 'ok', detail: 'workflows of every outside contributor wait for approval' };
  return warn(
    name,
    `approval is required only for ${policy === 'first_time_contributors' ? 'first-time contributors' : 'first-time contributors new to GitHub'}: a returning contributor's fork pull request runs its workflows unapproved`,
    `set ${FORK_SETTING}, and keep the runner in a group limited to this repository`,
  );
}

/**
 * The SSH key is a secret of the environment (default branch only), not a repository secret. Only
 * for clusters reached over SSH (transport local needs no key).
 */
export async function checkKeySecret(
  octokit: Octokit,
  owner: string,
  repo: string,
  environment: string,
): Promise<Check> {
  const name = 'ssh key secret';
  const fix = `Settings → Environments → ${environment}: "Deployment branches and tags": the default branch only, and the secret TOPO_SSH_PRIVATE_KEY there (docs/adopting.md, step 3)`;
  let env: { secrets: string[]; defaultBranchOnly: boolean };
  try {
    env = await environmentOf(octokit, owner, repo, environment);
  } catch (error) {
    if (classifyRequestError(error).status === 404)
      return warn(
        name,
        `${owner}/${repo} has no environment ${environment} (or the token cannot see it)`,
        `create it: ${fix}`,
      );
    return warn(name, unreadable(`the environment ${environment}`, error), `check by hand: ${fix}`);
  }
  const asRepoSecret = await repositoryHas(octokit, owner, repo, 'TOPO_SSH_PRIVATE_KEY');
  const problems = [
    env.secrets.includes('TOPO_SSH_PRIVATE_KEY')
      ? ''
      : `the environment ${environment} has no secret TOPO_SSH_PRIVATE_KEY`,
    asRepoSecret
      ? 'TOPO_SSH_PRIVATE_KEY is a repository secret: a workflow edited in any branch can read it (delete it there)'
      : '',
    env.defaultBranchOnly ? '' : `the environment ${environment} accepts deployments from every branch`,
  ].filter(Boolean);
  return problems.length
    ? warn(name, problems.join('; '), fix)
    : {
        name,
        status: 'ok',
        detail: `TOPO_SSH_PRIVATE_KEY is a secret of ${environment}, limited to protected or named branches`,
      };
}

async function environmentOf(octokit: Octokit, owner: string, repo: string, environment: string) {
  const params = { owner, repo, environment_name: environment };
  const got = await octokit.request('GET /repos/{owner}/{repo}/environments/{environment_name}', params);
  const policy = (
    got.data as {
      deployment_branch_policy?: { protected_branches: boolean; custom_branch_policies: boolean } | null;
    }
  ).deployment_branch_policy;
  const listed = await octokit.request('GET /repos/{owner}/{repo}/environments/{environment_name}/secrets', {
    ...params,
    per_page: 100,
  });
  return {
    secrets: (listed.data as { secrets: { name: string }[] }).secrets.map((s) => s.name),
    // null: every branch may deploy; protected branches or named patterns limit it
    defaultBranchOnly: Boolean(policy?.protected_branches || policy?.custom_branch_policies),
  };
}

/** Whether a repository secret of that name exists (false when it does not, or cannot be read). */
async function repositoryHas(
  octokit: Octokit,
  owner: string,
  repo: string,
  secret: string,
): Promise<boolean> {
  try {
    await octokit.request('GET /repos/{owner}/{repo}/actions/secrets/{secret_name}', {
      owner,
      repo,
      secret_name: secret,
    });
    return true;
  } catch {
    return false;
  }
}
