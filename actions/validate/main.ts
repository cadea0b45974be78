// Entry of the validate action (GitHub-hosted runner, no secrets). The workspace is the default
// branch's checkout (schemas are bundled, presets and clusters.yaml read from it); the pull request's
// files are read through the API at its head sha, as data. Logic: src/usecases/validate.ts; edges: ./ports.ts.
import { resolve } from 'node:path';
import * as core from '@actions/core';
import { postSummaryCheckRun, VALIDATE_CHECK_NAME } from '../../src/github/check-runs.js';
import { createOctokit, splitRepository } from '../../src/github/client.js';
import { changedFiles, githubFileSource } from '../../src/github/contents.js';
import { fileSystemSource, validatePullRequest } from '../../src/usecases/validate.js';
import { actionsReporter, pullRequestOfEvent } from './ports.js';

async function main(): Promise<void> {
  // Presets come with this version (beside the action); the repository's own override them by
  // name, and presets-dir overrides both (src/topology/presets.ts).
  const workspace = process.env.GITHUB_WORKSPACE ?? process.cwd();
  const presetsDir = core.getInput('presets-dir');
  const token = core.getInput('token', { required: true });
  core.setSecret(token);
  const pull = pullRequestOfEvent();
  const { owner, repo } = splitRepository(process.env.GITHUB_REPOSITORY ?? '');
  const octokit = createOctokit({ token });
  const summary = { text: '' };
  const changed = await changedFiles(octokit, { owner, repo, pull_number: pull.number });
  const report = await validatePullRequest(
    {
      changedPaths: changed.map((f) => f.path),
      topologiesDir: core.getInput('topologies-dir') || 'topologies',
    },
    {
      files: githubFileSource(octokit, { owner, repo, ref: pull.head.sha }),
      config: fileSystemSource(workspace),
      clustersFile: core.getInput('clusters-file') || 'topologies/clusters.yaml',
      presets: presetsDir ? { overrideDir: resolve(workspace, presetsDir) } : {},
    },
    actionsReporter(summary),
  );
  // The capacity table, GPU map and predicted memory in the pull request itself: a check run on
  // the head commit when the token may write one (checks: write), else only the job summary.
  const posted = await postSummaryCheckRun(octokit, {
    owner,
    repo,
    name: VALIDATE_CHECK_NAME,
    head_sha: pull.head.sha,
    conclusion: report.errorCount > 0 ? 'failure' : 'success',
    title: `${report.errorCount} error(s), ${report.warningCount} warning(s) in ${report.files.length} file(s)`,
    summary: summary.text || 'No topology files changed.',
  });
  if (posted.reason) core.info(`summary left in the job summary only: ${posted.reason}`);
  core.setOutput('summary-location', posted.place);
  core.setOutput('errors', String(report.errorCount));
  core.setOutput('warnings', String(report.warningCount));
  core.setOutput('files', JSON.stringify(report.files.map((f) => f.path)));
  if (report.errorCount > 0) {
    core.setFailed(
      `${report.errorCount} error(s) in the topology files (see the annotations and the job summary)`,
    );
  }
}

main().catch((error) => core.setFailed(error instanceof Error ? error.message : String(error)));
