// The monitor's ports over the project's adapters: Slurm (src/slurm: one `jobs(prefix)` call per
// experiment, read by the one job model, src/judge/job.ts) and GitHub (src/github: the
// candidate's sticky comment, the pull request's check run and its state label).
import { MONITOR_CHECK_NAME, upsertCheckRun } from '../github/check-runs.js';
import type { Octokit } from '../github/client.js';
import { setStateLabel } from '../github/labels.js';
import { experimentJobs, runJob } from '../judge/job.js';
import { claimed, isOwnedRun } from '../lifecycle/jobs.js';
import type { JobListing, SlurmClient, SlurmJob } from '../slurm/types.js';
import { isRunOf } from '../topology/run-name.js';
import { readMonitorComment, writeMonitorComment } from '../usecases/monitor-comment.js';
import { experimentPrefix, releaseAbandonedHolds } from '../usecases/submit.js';
import type { MonitorPorts } from './ports.js';

/** What a pass (not a read-only view such as `topo status`) does besides reading. */
export interface SlurmPortEffects {
  /** Release the experiment's jobs held longer than a submit takes (src/usecases/submit.ts). */
  releaseAbandonedHolds: { now: () => number; log?: (message: string) => void };
}

/**
 * The monitor's Slurm port over the Slurm adapter: one `jobs(prefix)` call per experiment, its own
 * jobs as the one job model reads them (src/judge/job.ts: a failed job's log tail classified); with
 * `effects`, a job a dead submit left held is released on the way.
 */
export function slurmMonitorPort(
  slurm: SlurmClient,
  knownExperimentIds: readonly string[] = [],
  effects?: SlurmPortEffects,
): MonitorPorts['slurm'] {
  const problems = new Map<string, string>();
  const conflicts = new Map<string, SlurmJob[]>();
  const accounting = new Map<string, JobListing['accounting']>();
  return {
    async jobs(experimentId, recorded) {
      const listing = await slurm.listing(experimentPrefix(experimentId));
      if (listing.accounting === 'unreachable')
        problems.set(experimentId, listing.accountingProblem ?? 'sacct failed');
      else problems.delete(experimentId);
      accounting.set(experimentId, listing.accounting);
      const named = listing.jobs.filter((j) => isRunOf(j.name, experimentId, knownExperimentIds));
      const theirs = named.filter((j) => !isOwnedRun(claimed(j), experimentId, recorded));
      conflicts.set(experimentId, theirs);
      let listed = named.filter((j) => !theirs.includes(j));
      const release = effects?.releaseAbandonedHolds;
      if (release)
        listed = await releaseAbandonedHolds(
          { slurm, ...(release.log ? { log: release.log } : {}) },
          experimentId,
          listed,
          release.now(),
        );
      return experimentJobs(
        { jobs: async () => listed, tail: (j, n) => slurm.tail(j, n) },
        experimentId,
        knownExperimentIds,
      );
    },
    cancel: (jobId) => slurm.cancel(jobId),
    accountingProblem: (experimentId) => problems.get(experimentId) ?? null,
    conflicts: (experimentId) => (conflicts.get(experimentId) ?? []).map((j) => runJob(j)),
    accounting: (experimentId) => accounting.get(experimentId) ?? null,
  };
}

// The monitor's check run: one per head commit, over all the pull request's candidates at it
// (src/report/check-conclusion.ts pullRequestCheckRun), named MONITOR_CHECK_NAME.
export { MONITOR_CHECK_NAME };

/**
 * The monitor's GitHub port over src/github: sticky comment `monitor-<candidate>`
 * (src/usecases/monitor-comment.ts), check run, state label.
 */
export function githubMonitorPort(
  octokit: Octokit,
  repo: { owner: string; repo: string; botLogin: string },
): MonitorPorts['github'] {
  const target = (pr: number) => ({
    owner: repo.owner,
    repo: repo.repo,
    issue_number: pr,
    botLogin: repo.botLogin,
  });
  return {
    readComment: (pr, candidate) => readMonitorComment(octokit, target(pr), candidate),
    async writeComment(pr, candidate, body) {
      await writeMonitorComment(octokit, target(pr), candidate, body);
    },
    async writeCheck(_pr, headSha, check) {
      await upsertCheckRun(octokit, {
        owner: repo.owner,
        repo: repo.repo,
        name: MONITOR_CHECK_NAME,
        head_sha: headSha,
        title: check.title,
        summary: check.summary,
        ...(check.conclusion ? { conclusion: check.conclusion } : {}),
      });
    },
    setLabel: (pr, state, current) =>
      setStateLabel(octokit, { owner: repo.owner, repo: repo.repo, issue_number: pr }, state, current),
  };
}
