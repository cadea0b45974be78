// The monitor's GitHub API budget world, shared by the integration test and the bench: a repository
// on the local GitHub API with E experiments × R running candidates (each a pull request with the
// bot-owned run state: a Request and its Run) and I idle pull requests, a default-branch workspace
// with the experiments, and the REAL monitor ports (actions/monitor/ports.ts) over it. Slurm and
// Prometheus are the monitor pass's fakes (jobs RUNNING, synthetic traces): only GitHub is measured.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildMonitorPorts } from '../../actions/monitor/ports.js';
import { createOctokit, type Octokit } from '../../src/github/client.js';
import { renderRunStateComment } from '../../src/github/run-state.js';
import { stickyMarker } from '../../src/github/sticky-comment.js';
import { type GitHubServer, type Repo, startGitHubServer } from '../../src/github-local/index.js';
import { emptyRunState, withRequest, withRun } from '../../src/lifecycle/model.js';
import type { MonitorExperiment, MonitorPorts } from '../../src/monitor/ports.js';
import { expandCandidate, expandPreset, hash8 } from '../../src/topology/expand.js';
import { checkCandidate, checkExperiment, checkPreset } from '../../src/topology/files.js';
import { jobName } from '../../src/topology/render.js';
import { runNameFor } from '../../src/topology/run-name.js';
import { PROFILES } from '../fixtures/traces/synthetic.js';
import { repoRoot as checkoutRoot } from './cluster.js';
import { type FakeWorld, fakeWorld, runJob } from './monitor-fakes.js';

// A bench runs bundled elsewhere: it names the checkout in TOPO_REPO_ROOT.
const repoRoot = process.env.TOPO_REPO_ROOT ?? checkoutRoot;

export interface BudgetWorld {
  gh: GitHubServer;
  repo: Repo;
  octokit: Octokit;
  world: FakeWorld;
  /** Pull request numbers of the candidates. */
  candidatePulls: number[];
  /** The monitor's ports for one pass (GitHub real, Slurm and Prometheus fakes). */
  ports(options?: { onlyPull?: number }): MonitorPorts & { close(): Promise<void> };
  close(): Promise<void>;
}

const isRead = (c: { method: string; path: string }) => c.method === 'GET' || c.path === '/graphql';

/** Reads and writes among the local server's recorded calls. */
export function countCalls(gh: GitHubServer): { reads: number; writes: number } {
  const calls = gh.calls();
  return { reads: calls.filter(isRead).length, writes: calls.filter((c) => !isRead(c)).length };
}

const candidateYaml = (name: string, workers: number) =>
  `name: ${name}\nhypothesis: more event loops\ntopology:\n  runtime:\n    nr_workers: ${workers}\n`;

export async function budgetWorld(options: {
  experiments: number;
  running: number;
  idle: number;
  now: number;
}): Promise<BudgetWorld> {
  const gh = await startGitHubServer();
  const repo = gh.createRepo('acme/budget', { files: { 'README.md': '# budget\n' } });
  gh.addCollaborator(repo, 'alice', 'write');
  const octokit = createOctokit({ token: gh.token, baseUrl: gh.url });
  const workspace = mkdtempSync(join(tmpdir(), 'topo-budget-ws-'));
  const topologies = join(workspace, 'topologies');
  mkdirSync(join(topologies, 'presets'), { recursive: true });
  copyFileSync(join(repoRoot, 'topologies/clusters.yaml'), join(topologies, 'clusters.yaml'));
  const presetFile = join(repoRoot, 'topologies/presets/8gpu_64rollouts.yaml');
  copyFileSync(presetFile, join(topologies, 'presets/8gpu_64rollouts.yaml'));
  const preset = checkPreset(readFileSync(presetFile, 'utf8'), presetFile).value;
  if (!preset) throw new Error(`${presetFile} does not check`);
  const template = readFileSync(
    join(repoRoot, 'topologies/topology-opt-vavam-ord-20261202/experiment.yaml'),
    'utf8',
  );
  const fakes: MonitorExperiment[] = [];
  const jobs: Array<{ runName: string; jobId: string }> = [];
  const candidatePulls: number[] = [];
  let k = 0;
  for (let e = 0; e < options.experiments; e++) {
    const id = `topology-opt-budget${e}-ord-20260101`;
    const text = template.replaceAll('topology-opt-vavam-ord-20261202', id);
    mkdirSync(join(topologies, id));
    writeFileSync(join(topologies, id, 'experiment.yaml'), text);
    const experiment = checkExperiment(text, 'experiment.yaml').value;
    if (!experiment) throw new Error(`experiment ${id} does not check`);
    const base = expandPreset(preset, experiment);
    fakes.push({ experiment, timeScale: 1, scrapeSeconds: 5, candidates: [] });
    for (let c = 0; c < options.running; c++, k++) {
      const name = `c${c}`;
      const path = `topologies/${id}/${name}.yaml`;
      const yaml = candidateYaml(name, 10 + c);
      const pull = gh.openPull({
        repo,
        author: 'alice',
        title: path,
        head: `${id}-${name}`,
        files: { [path]: yaml },
      });
      for (let i = 0; i < 5; i++) gh.comment(repo, pull.number, 'alice', `review ${i}`);
      const expanded = expandCandidate(base, checkCandidate(yaml, path).value?.topology);
      const label = (0x10000000 + k).toString(16);
      const runName = runNameFor(jobName(id, name, expanded), label);
      const requestedAt = new Date((options.now - 3600) * 1000).toISOString();
      const state = withRun(
        withRequest(emptyRunState(), {
          id: label,
          experiment: id,
          candidate: name,
          path,
          pr: pull.number,
          headSha: pull.head.sha,
          topologyHash: hash8(expanded),
          runName,
          login: 'alice',
          requestedAt,
        }),
        label,
        { jobId: String(5000 + k), submittedAt: requestedAt },
      );
      gh.comment(
        repo,
        pull.number,
        gh.botLogin,
        `${stickyMarker('lifecycle')}\n${renderRunStateComment(state)}`,
      );
      jobs.push({ runName, jobId: String(5000 + k) });
      candidatePulls.push(pull.number);
    }
  }
  for (let i = 0; i < options.idle; i++) {
    const pull = gh.openPull({
      repo,
      author: 'alice',
      title: `idle ${i}`,
      head: `idle-${i}`,
      files: { [`docs/${i}.md`]: 'x\n' },
    });
    for (let j = 0; j < 3; j++) gh.comment(repo, pull.number, 'alice', `talk ${j}`);
  }
  const world = fakeWorld(fakes, { now: options.now, timeScale: 1 });
  for (const [i, j] of jobs.entries()) {
    const profile = PROFILES[i % PROFILES.length] as (typeof PROFILES)[number];
    // staggered starts: 20 to 110 minutes of run time so far
    runJob(world, j.runName, { ...profile, seed: i + 1 }, options.now - (20 + 3 * i) * 60, 1, j.jobId);
  }
  return {
    gh,
    repo,
    octokit,
    world,
    candidatePulls,
    ports(opts = {}) {
      const real = buildMonitorPorts(octokit, {
        workspace,
        topologiesDir: 'topologies',
        clustersFile: 'topologies/clusters.yaml',
        owner: 'acme',
        repo: 'budget',
        botLogin: gh.botLogin,
        env: {},
        log: () => {},
        ...(opts.onlyPull !== undefined ? { onlyPull: opts.onlyPull } : {}),
      });
      return {
        ...real,
        experiments: async () =>
          (await real.experiments()).map((e) => ({ ...e, prometheus: world.ports.prometheus })),
        slurm: world.ports.slurm,
        submit: world.ports.submit,
        prometheus: world.ports.prometheus,
        now: world.ports.now,
      };
    },
    close: () => gh.close(),
  };
}
