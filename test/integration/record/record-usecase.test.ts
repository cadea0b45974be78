// The record use case against the local GitHub API: five pull requests merged at once all land in
// the record (none lost, no commit duplicated), a corrupt record is never overwritten, and closed
// pull requests are recorded as rejected or failed with their reasons and learnings.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { recordedAtClose } from '../../../src/commands/recorded.js';
import type { Pull, Repo } from '../../../src/github-local/index.js';
import { RecordError } from '../../../src/record/validate.js';
import { renderObservationBlock } from '../../../src/report/observation-block.js';
import { expandCandidate, expandPreset } from '../../../src/topology/expand.js';
import { jobName } from '../../../src/topology/render.js';
import type { Topology } from '../../../src/types/generated/topology.js';
import {
  type ClosedPullRequest,
  type RecordDeps,
  recordClosedPullRequest,
} from '../../../src/usecases/record.js';
import { EXPERIMENT, OUTCOMES } from '../../fixtures/record/scenario.js';
import { useLocalGitHub } from '../../support/local-github.js';
import { repoRoot } from '../../support/run-action.js';
import { postRequests } from './requested.js';

const ID = EXPERIMENT.experiment_id;
const PRESET = readFileSync(join(repoRoot, 'topologies/presets/8gpu_64rollouts.yaml'), 'utf8');
const BASE = expandPreset((await import('yaml')).parse(PRESET) as Topology, EXPERIMENT);

const { gh, octokit } = useLocalGitHub();

function newRepo(name: string, extra: Record<string, string> = {}): Repo {
  const repo = gh.createRepo(`acme/${name}`, {
    files: {
      'README.md': '# experiments\n',
      'topologies/presets/8gpu_64rollouts.yaml': PRESET,
      [`topologies/${ID}/experiment.yaml`]: stringify(EXPERIMENT),
      [`topologies/${ID}/baseline.yaml`]: stringify({ name: 'baseline', topology: {} }),
      ...extra,
    },
  });
  gh.addCollaborator(repo, 'alice', 'write');
  return repo;
}

function deps(repo: Repo): RecordDeps {
  return {
    octokit,
    owner: repo.owner.login,
    repo: repo.name,
    defaultBranch: repo.defaultBranch,
    botLogin: gh.botLogin,
    closeCommands: recordedAtClose({
      octokit,
      owner: repo.owner.login,
      repo: repo.name,
      botLogin: gh.botLogin,
    }),
    // Small, jittered backoff: five writers race on purpose.
    backoffMs: (attempt) => 5 + Math.floor(Math.random() * 20 * attempt),
    maxAttempts: 30,
  };
}

function candidateYaml(name: string, workers: number): { text: string; runName: string } {
  const topology: Topology = { runtime: { nr_workers: workers } };
  const text = stringify({ name, parent: 'baseline', hypothesis: `${workers} runtime workers`, topology });
  return { text, runName: jobName(ID, name, expandCandidate(BASE, topology)) };
}

/** A pull request with one candidate, submitted (its Request finished). */
function openCandidate(
  repo: Repo,
  name: string,
  workers: number,
  body = '',
): { pull: Pull; runName: string } {
  const { text, runName } = candidateYaml(name, workers);
  const pull = gh.openPull({
    repo,
    author: 'alice',
    title: `Try ${name}`,
    body,
    head: `try-${name}`,
    files: { [`topologies/${ID}/${name}.yaml`]: text },
  });
  postRequests(gh, repo, pull, ID, [{ candidate: name, runName }]);
  return { pull, runName };
}

function postObservation(repo: Repo, pull: Pull, runName: string, index: number, failure = false): void {
  const observation = structuredClone(OUTCOMES[1]!.observation!);
  observation.run_name = runName;
  observation.verdict.projected_full_run = {
    value: 5 - index * 0.1,
    low: 4.9 - index * 0.1,
    high: 5.1 - index * 0.1,
  };
  if (failure) {
    observation.verdict = { state: 'unhealthy', evidence: ['job failed'] };
    observation.failure = { kind: 'gpu-oom', message: 'CUDA out of memory on GPU 2', gpu: 2 };
  }
  gh.comment(
    repo,
    pull.number,
    gh.botLogin,
    `<!-- topo:sticky:monitor -->\n### Status\n\n${renderObservationBlock(observation)}\n`,
  );
}

async function restPull(repo: Repo, pull: Pull): Promise<ClosedPullRequest> {
  const { data } = await octokit.rest.pulls.get({
    owner: repo.owner.login,
    repo: repo.name,
    pull_number: pull.number,
  });
  return data;
}

/** Commit messages on the branch, newest first, following first parents. */
function history(repo: Repo): string[] {
  const out: string[] = [];
  let sha: string | undefined = gh.state.branchSha(repo, repo.defaultBranch);
  while (sha) {
    const commit = gh.state.commit(sha);
    out.push(commit.message.split('\n', 1)[0]!);
    sha = commit.parents[0];
  }
  return out;
}

function recordOf(repo: Repo) {
  return JSON.parse(gh.files(repo).get(`experiments/${ID}.json`)!) as {
    runs: {
      name: string;
      status: string;
      decision: { reason: string };
      skill_reflections?: { learning: string }[];
      stable_metrics?: { telemetry_quality?: { gaps?: string[] } };
    }[];
    current_best: { topology: string | null };
  };
}

describe('record use case (local GitHub API)', () => {
  it('five pull requests merged at once: five entries land, none lost, no commit duplicated', async () => {
    const repo = newRepo('concurrent');
    const pulls = [1, 2, 3, 4, 5].map((i) => {
      const { pull, runName } = openCandidate(
        repo,
        `workers-${i}`,
        8 + i,
        `## Learnings\n- learning of ${i}\n`,
      );
      postObservation(repo, pull, runName, i);
      gh.comment(repo, pull.number, 'alice', `/topo learn queries: comment learning of ${i}`);
      return pull;
    });
    for (const pull of pulls) gh.merge(pull, 'alice');
    const payloads = await Promise.all(pulls.map((p) => restPull(repo, p)));
    gh.resetCalls();

    const results = await Promise.all(payloads.map((p) => recordClosedPullRequest(deps(repo), p)));

    const attempts = results.map((r) => r.recorded[0]!.commit.attempts);
    const conflicts = gh.calls().filter((c) => c.operationId === 'git/update-ref' && c.status === 422).length;
    console.log(`concurrent merge: attempts per writer ${attempts.join(',')}, lost ref races ${conflicts}`);
    expect(results.every((r) => r.recorded[0]!.commit.committed)).toBe(true);
    const record = recordOf(repo);
    expect(record.runs.map((r) => r.name).sort()).toEqual([
      'workers-1',
      'workers-2',
      'workers-3',
      'workers-4',
      'workers-5',
    ]);
    expect(record.runs.every((r) => r.status === 'accepted')).toBe(true);
    expect(record.current_best.topology).toBe('workers-5');
    for (const run of record.runs) {
      const i = run.name.slice(-1);
      expect(run.skill_reflections?.map((l) => l.learning)).toEqual([
        `learning of ${i}`,
        `comment learning of ${i}`,
      ]);
      expect(run.stable_metrics?.telemetry_quality?.gaps ?? []).toEqual([]);
    }
    const recordCommits = history(repo).filter((m) => m.startsWith('record:'));
    expect(recordCommits).toHaveLength(5);
    expect(new Set(recordCommits).size).toBe(5);
    expect(gh.files(repo).get(`experiments/${ID}.md`)).toContain('| 5 |');

    // Re-running every close (a re-delivered webhook, a re-run job) changes nothing.
    const head = gh.state.branchSha(repo, repo.defaultBranch);
    const again = await Promise.all(payloads.map((p) => recordClosedPullRequest(deps(repo), p)));
    expect(again.every((r) => !r.recorded[0]!.commit.committed)).toBe(true);
    expect(gh.state.branchSha(repo, repo.defaultBranch)).toBe(head);
    expect(gh.violations()).toEqual([]);
  });

  it('a merged pull request with two candidates records each from its own monitor comment', async () => {
    const repo = newRepo('two-candidates');
    const alpha = candidateYaml('alpha', 10);
    const bravo = candidateYaml('bravo', 12);
    const pull = gh.openPull({
      repo,
      author: 'alice',
      title: 'two ideas',
      head: 'two-ideas',
      files: { [`topologies/${ID}/alpha.yaml`]: alpha.text, [`topologies/${ID}/bravo.yaml`]: bravo.text },
    });
    const observed = (runName: string, value: number, failed: boolean) => {
      const o = structuredClone(OUTCOMES[1]!.observation!);
      o.run_name = runName;
      o.verdict.projected_full_run = { value, low: value - 0.1, high: value + 0.1 };
      if (failed) {
        o.verdict = { state: 'unhealthy', evidence: ['job failed'] };
        o.failure = { kind: 'gpu-oom', message: 'CUDA out of memory on GPU 5', gpu: 5 };
      }
      return renderObservationBlock(o);
    };
    postRequests(gh, repo, pull, ID, [
      { candidate: 'alpha', runName: alpha.runName },
      { candidate: 'bravo', runName: bravo.runName },
    ]);
    // the monitor's comments, one per candidate: bravo's written last (the old single comment's winner)
    gh.comment(
      repo,
      pull.number,
      gh.botLogin,
      `<!-- topo:sticky:monitor-alpha -->\n${observed(alpha.runName, 4.2, false)}`,
    );
    gh.comment(
      repo,
      pull.number,
      gh.botLogin,
      `<!-- topo:sticky:monitor-bravo -->\n${observed(bravo.runName, 9, true)}`,
    );
    gh.merge(pull, 'alice');

    const result = await recordClosedPullRequest(deps(repo), await restPull(repo, pull));

    expect(result.recorded.map((r) => [r.candidate, r.kind, r.runName])).toEqual([
      ['alpha', 'accepted', alpha.runName],
      ['bravo', 'failed', bravo.runName],
    ]);
    expect(result.recorded.flatMap((r) => r.telemetryGaps)).toEqual([]);
    const runs = recordOf(repo).runs;
    expect(runs.find((r) => r.name === 'alpha')?.status).toBe('accepted');
    expect(runs.find((r) => r.name === 'bravo')?.decision.reason).toBe(
      'gpu-oom: CUDA out of memory on GPU 5',
    );
    expect(gh.violations()).toEqual([]);
  });

  it('records closed pull requests as rejected (reason from /topo reject) or failed, and notes missing metrics', async () => {
    const repo = newRepo('closed');
    const rejected = openCandidate(repo, 'workers-12', 12);
    postObservation(repo, rejected.pull, rejected.runName, 0);
    gh.comment(repo, rejected.pull.number, 'alice', '/topo reject no better than the baseline within noise');
    // A commenter without write access is not counted (the router refused them too).
    gh.comment(repo, rejected.pull.number, 'mallory', '/topo learn spam learning');
    const failed = openCandidate(repo, 'workers-13', 13);
    postObservation(repo, failed.pull, failed.runName, 0, true);
    const silent = openCandidate(repo, 'workers-14', 14);
    for (const c of [rejected, failed, silent]) gh.closePull(c.pull);

    for (const c of [rejected, failed, silent])
      await recordClosedPullRequest(deps(repo), await restPull(repo, c.pull));

    const runs = recordOf(repo).runs;
    expect(runs.map((r) => [r.name, r.status])).toEqual([
      ['workers-12', 'rejected'],
      ['workers-13', 'failed'],
      ['workers-14', 'rejected'],
    ]);
    expect(runs[0]!.decision.reason).toBe('no better than the baseline within noise');
    expect(runs[0]!.skill_reflections).toBeUndefined();
    expect(runs[1]!.decision.reason).toBe('gpu-oom: CUDA out of memory on GPU 2');
    expect(runs[2]!.stable_metrics?.telemetry_quality?.gaps).toEqual([
      'metrics unavailable: no monitor comment for workers-14 on the pull request (Prometheus was not queried)',
    ]);
    expect(recordOf(repo).current_best.topology).toBeNull();
    expect(gh.violations()).toEqual([]);
  });

  it('never overwrites a corrupt record: fails naming the file and the problem', async () => {
    const corrupt = '{ "schema_version": 1, "runs": [\n';
    const repo = newRepo('corrupt', { [`experiments/${ID}.json`]: corrupt });
    const { pull, runName } = openCandidate(repo, 'workers-9', 9);
    postObservation(repo, pull, runName, 1);
    gh.merge(pull, 'alice');
    const head = gh.state.branchSha(repo, repo.defaultBranch);

    const attempt = recordClosedPullRequest(deps(repo), await restPull(repo, pull));
    await expect(attempt).rejects.toBeInstanceOf(RecordError);
    await expect(recordClosedPullRequest(deps(repo), await restPull(repo, pull))).rejects.toThrow(
      new RegExp(`^experiments/${ID}\\.json: not valid JSON .*not overwritten`),
    );
    expect(gh.state.branchSha(repo, repo.defaultBranch)).toBe(head);
    expect(gh.files(repo).get(`experiments/${ID}.json`)).toBe(corrupt);
    expect(gh.violations()).toEqual([]);
  });

  it('ignores pull requests that change no candidate', async () => {
    const repo = newRepo('docs-only');
    const pull = gh.openPull({
      repo,
      author: 'alice',
      title: 'docs',
      head: 'docs',
      files: { 'README.md': '# new\n' },
    });
    gh.merge(pull, 'alice');
    const result = await recordClosedPullRequest(deps(repo), await restPull(repo, pull));
    expect(result).toEqual({
      recorded: [],
      notRecorded: [],
      closed: { requests: [], cancelledJobs: [] },
      skipped: 'the pull request changes no candidate file',
    });
  });
});
