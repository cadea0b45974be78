// Workflow runs waiting for a runner: what the monitor's watch loop yields to. One read per call.
import type { Octokit } from './client.js';

/** The workflows the loop yields to by default: the /topo commands and the record (self-hosted). */
export const DEFAULT_YIELD_TO = [
  '.github/workflows/topology-submit.yml',
  '.github/workflows/topology-record.yml',
];

/**
 * The queued runs of the given workflow files (`.github/workflows/<file>.yml`, or the file name
 * alone), as "<name> #<run_number>": one `GET /repos/{owner}/{repo}/actions/runs?status=queued`.
 */
export async function queuedWorkflowRuns(
  octokit: Octokit,
  repo: { owner: string; repo: string },
  workflows: readonly string[],
): Promise<string[]> {
  const { data } = await octokit.rest.actions.listWorkflowRunsForRepo({
    ...repo,
    status: 'queued',
    per_page: 100,
  });
  const wanted = (path: string) => workflows.some((w) => path === w || path.endsWith(`/${w}`));
  return data.workflow_runs
    .filter((r) => wanted(r.path.replace(/@.*$/, '')))
    .map((r) => `${r.name ?? r.path} #${r.run_number}`);
}
