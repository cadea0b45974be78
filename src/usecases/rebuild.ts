// `/topo state rebuild`: a writer's recovery when the bot state of a pull request cannot be read
// (cut, split by an older version, damaged) or lost runs. The runs come from the bot's own
// structured records on the pull request only (the state block when it reads, the submission
// records of its submission comments), never from other text: a run name a reader planted in a
// comment the bot quoted is nobody's run (invariant 22). Their jobs come from Slurm; src/lifecycle/
// rebuild.ts decides what stands. A readable state is kept and only added to; an unreadable one is
// replaced. Jobs of runs that no longer stand are cancelled, so none is left that no command reaches.
import type { Octokit } from '../github/client.js';
import { type RunStateTarget, readRunState, replaceRunState } from '../github/run-state.js';
import { readSubmissions } from '../github/submissions.js';
import { jobForRun, recordedJobIds } from '../lifecycle/jobs.js';
import type { RunState } from '../lifecycle/model.js';
import {
  type FoundRun,
  planRebuild,
  type RebuildJob,
  runsOfRecords,
  underCurrent,
} from '../lifecycle/rebuild.js';
import { RunStateError } from '../lifecycle/state-block.js';
import { slurmTimeToUnix } from '../slurm/parse.js';
import { isLive, type SlurmClient } from '../slurm/types.js';
import {
  type CandidateSource,
  candidateNameOf,
  type ExperimentOnDefaultBranch,
  experimentOnDefaultBranch,
  prepareCandidateAt,
  pullRequestCandidates,
} from './prepare.js';
import { ownJobs } from './queue.js';

export interface RebuildDeps {
  octokit: Octokit;
  owner: string;
  repo: string;
  botLogin: string;
  source: CandidateSource;
  /** Runs `use` with a Slurm client of the experiment's cluster (closed afterwards). */
  withSlurm: <T>(
    exp: Extract<ExperimentOnDefaultBranch, { ok: true }>,
    use: (s: SlurmClient) => Promise<T>,
  ) => Promise<T>;
  now?: () => Date;
}

export interface RebuildResult {
  state: RunState;
  /** Runs the bot's records name, and how many of them Slurm still knows. */
  found: number;
  known: number;
  /** Requests added to the state (all of them when it was unreadable). */
  added: number;
  cancelled: string[];
  /** Experiments whose jobs could not be read (not on the default branch): their runs are taken as Slurm-less. */
  unreachable: string[];
  wasReadable: boolean;
  /** Submission records that did not check (left out), each with its comment. */
  problems: string[];
}

/**
 * The runs the bot's own records on the pull request name: its state as read (null when it cannot
 * be read) and its submission records. Nothing else the pull request says is read.
 */
async function recordedRuns(deps: RebuildDeps, target: RunStateTarget) {
  let state: RunState | null = null;
  try {
    state = await readRunState(deps.octokit, target);
  } catch (error) {
    if (!(error instanceof RunStateError)) throw error;
  }
  const { submissions, problems } = await readSubmissions(deps.octokit, target);
  return { runs: runsOfRecords(state, submissions), problems };
}

/**
 * The candidates `wanted` (`<experiment>/<name>`) at the pull request's head, validated against the
 * default branch: file and topology hash (only a run at the head's topology may stand).
 */
async function headCandidates(deps: RebuildDeps, pr: number, headSha: string, wanted: ReadonlySet<string>) {
  const head = new Map<string, { path: string; topologyHash: string }>();
  if (!wanted.size) return head;
  const { files, changed } = await pullRequestCandidates(
    deps.octokit,
    { owner: deps.owner, repo: deps.repo, number: pr },
    deps.source,
  );
  for (const path of files) {
    if (!wanted.has(`${path.split('/').at(-2)}/${candidateNameOf(path)}`)) continue;
    const prepared = await prepareCandidateAt(deps.octokit, deps, headSha, path, deps.source, changed);
    if (prepared.ok)
      head.set(`${prepared.candidate.experimentId}/${candidateNameOf(path)}`, {
        path,
        topologyHash: prepared.candidate.topologyHash,
      });
  }
  return head;
}

const iso = (slurmTime: string | null | undefined) => {
  const ts = slurmTimeToUnix(slurmTime ?? null);
  return ts ? new Date(ts * 1000).toISOString() : null;
};

export async function rebuildRunState(
  deps: RebuildDeps,
  pull: { number: number; headSha: string; actor: string },
): Promise<RebuildResult> {
  const now = (deps.now ?? (() => new Date()))().toISOString();
  const target: RunStateTarget = {
    owner: deps.owner,
    repo: deps.repo,
    issue_number: pull.number,
    botLogin: deps.botLogin,
  };
  const { runs, problems } = await recordedRuns(deps, target);
  const { jobs, listed, unreachable } = await jobsOfRuns(deps, runs);
  const live = new Set(
    runs
      .filter((r) => isLive(jobs.get(r.runName)?.status ?? 'completed'))
      .map((r) => `${r.experiment}/${r.candidate}`),
  );
  const head = await headCandidates(deps, pull.number, pull.headSha, live);
  const plan = planRebuild({
    pr: pull.number,
    headSha: pull.headSha,
    login: pull.actor,
    now,
    runs,
    jobs,
    head,
    topologiesDir: deps.source.topologiesDir,
  });
  let added = new Set(plan.state.requests.map((r) => r.id));
  let wasReadable = false;
  const state = await replaceRunState(deps.octokit, target, (current) => {
    if (!current) return plan.state;
    wasReadable = true;
    const merged = underCurrent(current, plan.state);
    added = merged.added;
    return merged.state;
  });
  const cancelled: string[] = [];
  for (const c of plan.cancel.filter((c) => added.has(c.runName.slice(-8)))) {
    const exp = listed.get(c.experiment);
    if (!exp) continue;
    await deps.withSlurm(exp, (s) => s.cancel(c.jobId));
    cancelled.push(c.jobId);
  }
  return {
    state,
    found: runs.length,
    known: jobs.size,
    added: added.size,
    cancelled,
    unreachable,
    wasReadable,
    problems,
  };
}

type ReadyExperiment = Extract<ExperimentOnDefaultBranch, { ok: true }>;

/** Slurm's job of each run the records name, per experiment of the default branch (else unreachable). */
async function jobsOfRuns(
  deps: RebuildDeps,
  runs: readonly FoundRun[],
): Promise<{ jobs: Map<string, RebuildJob>; listed: Map<string, ReadyExperiment>; unreachable: string[] }> {
  const jobs = new Map<string, RebuildJob>();
  const listed = new Map<string, ReadyExperiment>();
  const unreachable: string[] = [];
  for (const id of new Set(runs.map((r) => r.experiment))) {
    const exp = await experimentOnDefaultBranch(deps.source, id);
    if (!exp.ok) {
      unreachable.push(id);
      continue;
    }
    // a job that names no Request is a run only when the records name its id (invariant 21)
    const recorded = recordedJobIds(runs.filter((r) => r.experiment === id));
    const all = await deps.withSlurm(exp, async (s) =>
      ownJobs(await s.jobs(`topo-${id}-`), id, [], recorded),
    );
    listed.set(id, exp);
    for (const r of runs.filter((r) => r.experiment === id)) {
      const job = jobForRun(all, r.runName, (j) => j);
      if (job)
        jobs.set(r.runName, {
          id: job.id,
          state: job.state,
          status: job.status,
          submittedAt: iso(job.submitTime),
        });
    }
  }
  return { jobs, listed, unreachable };
}
