// What the action tests on the local cluster share: a unique twin experiment, the default-branch
// checkout the actions read their trusted configuration from, the state labels, and the clean-up;
// useActionTestbed puts them together, so an action test is its pull requests and its assertions.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { parse } from 'yaml';
import { type GitHubServer, type Pull, type Repo, startGitHubServer } from '../../src/github-local/index.js';
import { type ClientForClusterOptions, slurmClientForCluster } from '../../src/slurm/for-cluster.js';
import { isLive, type SlurmClient, type SlurmJob } from '../../src/slurm/types.js';
import type { ClustersFile } from '../../src/types/generated/clusters.js';
import { type LocalClusterEnv, repoRoot, requireCluster } from './cluster.js';
import { type EventFile, issueCommentEvent, pullRequestEvent } from './events.js';
import { runActionOn } from './local-github.js';
import { type PrivateCluster, startPrivateCluster } from './private-cluster.js';
import type { ActionRun } from './run-action.js';
import { requireTwinBundle, twinJobArgs } from './twin-job.js';

/** A suffix that keeps concurrent test files' experiment ids (and Slurm job names) apart. */
export function uniqueSuffix(): string {
  return `${process.pid.toString(36)}${Date.now().toString(36).slice(-5)}`.replace(/[^a-z0-9]/g, '');
}

export interface TwinExperimentOptions {
  cluster?: string;
  maxParallel?: number;
  /** 1 by default: a run of about 40 s at time scale 60 (913 scenes at about 0.4 rollouts a second). */
  rolloutsPerScene?: number;
}

/** An experiment on the twin (8gpu_64rollouts, a 10-minute wall time). */
export function twinExperimentYaml(experimentId: string, o: TwinExperimentOptions = {}): string {
  return `experiment_id: ${experimentId}
cluster: ${o.cluster ?? 'local'}
base_topology: 8gpu_64rollouts
max_parallel: ${o.maxParallel ?? 1}
fixed_inputs:
  deploy: twin-balanced
  driver: vavam
  scenes: public_2601
  scene_count: 913
  rollouts_per_scene: ${o.rolloutsPerScene ?? 1}
  slurm:
    time: "00:10:00"
`;
}

/** A candidate that changes the runtime's worker count. */
export function workersCandidate(name: string, workers: number): string {
  return `name: ${name}\nhypothesis: more event loops\ntopology:\n  runtime:\n    nr_workers: ${workers}\n`;
}

/** The default branch's checkout: the experiment, its preset and the clusters file. */
export function defaultBranchWorkspace(
  prefix: string,
  o: { experimentId: string; experimentYaml: string; clustersFile: string },
): string {
  const workspace = mkdtempSync(join(tmpdir(), `topo-${prefix}-ws-`));
  mkdirSync(join(workspace, 'topologies', o.experimentId), { recursive: true });
  mkdirSync(join(workspace, 'topologies', 'presets'), { recursive: true });
  writeFileSync(join(workspace, 'topologies', o.experimentId, 'experiment.yaml'), o.experimentYaml);
  copyFileSync(
    join(repoRoot, 'topologies/presets/8gpu_64rollouts.yaml'),
    join(workspace, 'topologies/presets/8gpu_64rollouts.yaml'),
  );
  copyFileSync(o.clustersFile, join(workspace, 'topologies/clusters.yaml'));
  return workspace;
}

/**
 * The state labels as a set-up repository has them (ensureStateLabels). The local server renders a
 * label created without a description as null, which GitHub's schema for pulls.list does not allow.
 */
export function ensureStateLabels(
  gh: GitHubServer,
  repo: Repo,
  names = ['topology:queued', 'topology:running', 'topology:stable', 'topology:failed'],
): void {
  for (const name of names) gh.state.ensureLabel(repo, name).description = name;
}

/** Cancels what the test left running of its experiment. */
export async function cancelLiveJobs(slurm: SlurmClient | undefined, experimentId: string): Promise<void> {
  for (const j of (await slurm?.jobs(`topo-${experimentId}-`)) ?? [])
    if (isLive(j.status)) await slurm?.cancel(j.id);
}

/** A Slurm client for a cluster of the test's clusters file (fails clearly when it is not there). */
export function clusterSlurm(
  clustersFile: string,
  name = 'local',
  options: ClientForClusterOptions = {},
): SlurmClient {
  const clusters = parse(readFileSync(clustersFile, 'utf8')) as ClustersFile;
  const cluster = clusters.clusters[name];
  if (!cluster) throw new Error(`${clustersFile} has no cluster "${name}"`);
  return slurmClientForCluster(name, cluster, options);
}

/** The repository `acme/sim` with the experiment (and `files`) on its default branch and `alice` as a writer. */
export function experimentRepo(
  gh: GitHubServer,
  experimentId: string,
  experimentYaml: string,
  files: Record<string, string> = {},
): Repo {
  const repo = gh.createRepo('acme/sim', {
    files: { [`topologies/${experimentId}/experiment.yaml`]: experimentYaml, ...files },
  });
  gh.addCollaborator(repo, 'alice', 'write');
  return repo;
}

/** A pull request the testbed opens before the file's tests: its candidate files by path under the experiment. */
export interface PullSpec {
  /** Files by their path below topologies/<experiment>/ (`alpha.yaml`), or the whole path when it starts with `topologies/`. */
  files: Record<string, string>;
  title?: string;
  author?: string;
}

export interface TestbedOptions {
  /** A few letters naming the experiment (`topology-opt-<tag><unique>-local-20260101`) and its folders. */
  tag: string;
  /** The experiment on the default branch: the twin's, with these settings, or the YAML itself. */
  experiment?: TwinExperimentOptions | ((experimentId: string) => string);
  /** The shared local cluster (default) or a private one of the file's own (it may restart its controller). */
  cluster?: 'shared' | 'private';
  /** With `cluster: 'private'`: its own slurmdbd and MariaDB, so sacct answers. */
  accounting?: boolean;
  /** The cluster of clusters.yaml the test's own Slurm client talks to (`local`, or `local-ssh`). */
  slurmCluster?: string;
  /** The pull requests, by name, opened before the tests. */
  pulls?: Record<string, PullSpec>;
  /** State labels the repository has (ensureStateLabels's by default). */
  labels?: string[];
  /** More files of the default branch by whole path: in the repository and in its checkout. */
  defaultBranch?: (experimentId: string, experimentYaml: string) => Record<string, string>;
  /** Fail the file when any request broke GitHub's OpenAPI description (as useLocalGitHub's strict). */
  strict?: boolean;
}

export interface ActionRunOptions {
  inputs?: Record<string, string>;
  /** GITHUB_WORKSPACE: the testbed's default-branch checkout by default. */
  workspace?: string;
  /** Added to the testbed's environment for the action (SLURM_CONF, or the SSH key). */
  env?: Record<string, string>;
  /** Fail the test when the action does not exit 0 (default true). */
  expectOk?: boolean;
  timeoutMs?: number;
}

/**
 * An action test's world: the local GitHub API with `acme/sim` (the experiment on its default
 * branch, `alice` a writer, the state labels, the named pull requests), the default-branch checkout
 * the actions read their trusted configuration from, the cluster and a Slurm client on it, and the
 * bundled actions run against all of it. Every field is set before the file's first test; afterwards
 * the experiment's live jobs are cancelled and everything is closed.
 */
export interface ActionTestbed {
  readonly experimentId: string;
  readonly experimentYaml: string;
  /** `topologies/<experimentId>`. */
  readonly dir: string;
  readonly gh: GitHubServer;
  readonly repo: Repo;
  readonly workspace: string;
  readonly cluster: LocalClusterEnv;
  readonly slurm: SlurmClient;
  /** The file's own cluster (`cluster: 'private'`), to restart its controller. */
  readonly privateCluster: PrivateCluster;
  /** What every action run gets in its environment (SLURM_CONF; TOPO_SSH_KEY over SSH). */
  readonly actionEnv: Record<string, string>;
  /** A pull request opened in the set-up, by its name. */
  pull(name: string): Pull;
  /** Opens a pull request now (files as in PullSpec). */
  openPull(name: string, spec: PullSpec): Pull;
  /** Runs a bundled action (actions/<name>) against the testbed. */
  run(name: string, event: EventFile, options?: ActionRunOptions): Promise<ActionRun>;
  /** One monitor pass (a `synchronize` event of `pull`, or of the first pull request; tick 600 s). */
  monitor(options?: ActionRunOptions & { pull?: Pull }): Promise<ActionRun>;
  /** A `/topo` comment by `login` (alice) and the submit action's run; `reply` is the pull request's last comment. */
  command(
    pull: Pull,
    body: string,
    options?: ActionRunOptions & { login?: string },
  ): Promise<ActionRun & { reply: string }>;
  /** The experiment's Slurm jobs, or one candidate's. */
  jobs(candidate?: string): Promise<SlurmJob[]>;
  /** The experiment's live Slurm jobs, or one candidate's. */
  live(candidate?: string): Promise<SlurmJob[]>;
  /** The bot's sticky comment `purpose` (`lifecycle`, `monitor-<candidate>`, `submit-<candidate>`) on `pull`, or ''. */
  sticky(pull: Pull, purpose: string): string;
  /** A candidate's run name (`topo-<experiment>-<candidate>-<hash>-<request>`), as a pattern. */
  runName(candidate: string): RegExp;
}

/**
 * The testbed's twin runs last about 7 minutes (under the experiment's 10-minute Slurm limit): longer
 * than any file's tests on a loaded machine, so a test that acts on a running job finds it still
 * running. No test here waits for a run to end by itself; the testbed cancels what is left afterwards.
 */
const TESTBED_ROLLOUTS_PER_SCENE = 12;

/** Registers the file's hooks and returns its testbed (read its fields inside tests and hooks). */
export function useActionTestbed(options: TestbedOptions): ActionTestbed {
  const experimentId = `topology-opt-${options.tag}${uniqueSuffix()}-local-20260101`;
  const experiment = options.experiment;
  const experimentYaml =
    typeof experiment === 'function'
      ? experiment(experimentId)
      : twinExperimentYaml(experimentId, { rolloutsPerScene: TESTBED_ROLLOUTS_PER_SCENE, ...experiment });
  const dir = `topologies/${experimentId}`;
  const slurmCluster = options.slurmCluster ?? 'local';
  let world:
    | {
        gh: GitHubServer;
        repo: Repo;
        workspace: string;
        cluster: LocalClusterEnv;
        slurm: SlurmClient;
        actionEnv: Record<string, string>;
        pulls: Map<string, Pull>;
      }
    | undefined;
  let privateCluster: PrivateCluster | undefined;
  const w = () => {
    if (!world) throw new Error('the action testbed is read before its beforeAll ran');
    return world;
  };
  const openPull = (name: string, spec: PullSpec): Pull => {
    const files = Object.fromEntries(
      Object.entries(spec.files).map(([path, text]) => [
        path.startsWith('topologies/') ? path : `${dir}/${path}`,
        text,
      ]),
    );
    const pull = w().gh.openPull({
      repo: w().repo,
      author: spec.author ?? 'alice',
      title: spec.title ?? name,
      head: name,
      files,
    });
    w().pulls.set(name, pull);
    return pull;
  };

  beforeAll(async () => {
    if (options.cluster === 'private')
      privateCluster = startPrivateCluster({ accounting: options.accounting ?? false });
    const cluster = privateCluster?.env ?? requireCluster();
    const sshKey = slurmCluster === 'local-ssh' ? readFileSync(cluster.sshKeyPath, 'utf8') : undefined;
    const actionEnv: Record<string, string> = sshKey
      ? { TOPO_SSH_KEY: sshKey }
      : { SLURM_CONF: cluster.slurmConf };
    const slurm = clusterSlurm(cluster.clustersFile, slurmCluster, {
      env: { ...process.env, SLURM_CONF: cluster.slurmConf, ...(sshKey ? { TOPO_SSH_KEY: sshKey } : {}) },
    });
    const workspace = defaultBranchWorkspace(options.tag, {
      experimentId,
      experimentYaml,
      clustersFile: cluster.clustersFile,
    });
    const files = options.defaultBranch?.(experimentId, experimentYaml) ?? {};
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(workspace, path)), { recursive: true });
      writeFileSync(join(workspace, path), text);
    }
    const gh = await startGitHubServer();
    const repo = experimentRepo(gh, experimentId, experimentYaml, files);
    world = { gh, repo, workspace, cluster, slurm, actionEnv, pulls: new Map() };
    for (const [name, spec] of Object.entries(options.pulls ?? {})) openPull(name, spec);
    ensureStateLabels(gh, repo, options.labels);
  }, 180_000);

  afterAll(async () => {
    const violations = world?.gh.violations() ?? [];
    await cancelLiveJobs(world?.slurm, experimentId).catch(() => {});
    await world?.slurm.close();
    await world?.gh.close();
    privateCluster?.stop();
    if (options.strict) expect(violations).toEqual([]);
  });

  const run = async (name: string, event: EventFile, o: ActionRunOptions = {}) => {
    const { gh, workspace, actionEnv } = w();
    const result = await runActionOn(gh, name, {
      event,
      workspace: o.workspace ?? workspace,
      ...(o.inputs ? { inputs: o.inputs } : {}),
      env: { ...actionEnv, ...o.env },
      timeoutMs: o.timeoutMs ?? 120_000,
    });
    if (o.expectOk !== false) expect(result.exitCode, result.stderr + result.stdout).toBe(0);
    return result;
  };
  const jobs = async (candidate?: string) =>
    (await w().slurm.jobs(`topo-${experimentId}-`)).filter(
      (j) => candidate === undefined || j.name.startsWith(`topo-${experimentId}-${candidate}-`),
    );

  return {
    experimentId,
    experimentYaml,
    dir,
    get gh() {
      return w().gh;
    },
    get repo() {
      return w().repo;
    },
    get workspace() {
      return w().workspace;
    },
    get cluster() {
      return w().cluster;
    },
    get slurm() {
      return w().slurm;
    },
    get privateCluster() {
      if (!privateCluster)
        throw new Error("the testbed's cluster is the shared one: ask for cluster: 'private'");
      return privateCluster;
    },
    get actionEnv() {
      return w().actionEnv;
    },
    pull(name) {
      const pull = w().pulls.get(name);
      if (!pull) throw new Error(`the testbed opened no pull request "${name}"`);
      return pull;
    },
    openPull,
    run,
    monitor: ({ pull, ...o } = {}) => {
      const event = pull ?? [...w().pulls.values()][0];
      if (!event) throw new Error('monitor(): the testbed has no pull request for its event');
      return run('monitor', pullRequestEvent(w().gh, event, 'synchronize', { sender: 'alice' }), {
        inputs: { 'tick-seconds': '600' },
        ...o,
      });
    },
    async command(pull, body, { login = 'alice', ...o } = {}) {
      const { gh, repo } = w();
      const result = await run('submit', issueCommentEvent(gh, gh.comment(repo, pull.number, login, body)), {
        timeoutMs: 60_000,
        ...o,
      });
      return { ...result, reply: gh.state.commentsOn(repo, pull.number).at(-1)?.body ?? '' };
    },
    jobs,
    live: async (candidate) => (await jobs(candidate)).filter((j) => isLive(j.status)),
    sticky(pull, purpose) {
      const { gh, repo } = w();
      return (
        gh.state
          .commentsOn(repo, pull.number)
          .find((c) => c.user.login === gh.botLogin && c.body.startsWith(`<!-- topo:sticky:${purpose} -->`))
          ?.body ?? ''
      );
    },
    runName: (candidate) => new RegExp(`topo-${experimentId}-${candidate}-[0-9a-f]{8}-[0-9a-f]{8}`),
  };
}

/** Submits the twin job (test/support/twin-job.ts) through the testbed's Slurm client; its job id. */
export async function submitTwinJob(
  t: Pick<ActionTestbed, 'slurm' | 'cluster'>,
  runName: string,
  overrides: readonly string[],
): Promise<string> {
  requireTwinBundle();
  return t.slurm.submit(['sbatch', ...twinJobArgs(t.cluster, runName, overrides)]);
}
