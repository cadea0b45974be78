// The monitor action's ports: experiments from the default-branch checkout (trusted), candidates
// from open pull requests read through the API as data (never checked out), Slurm per cluster,
// Prometheus per cluster, GitHub through src/github. GitHub budget: a pass reads every open pull
// request in one paginated GraphQL query (labels, head, files, the bot's comments) and the
// candidates' files in one more; comments are read from that snapshot and written by their ids.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { upsertCheckRun } from '../../src/github/check-runs.js';
import type { Octokit } from '../../src/github/client.js';
import { setStateLabel } from '../../src/github/labels.js';
import {
  type PullSnapshot,
  readBlobs,
  readPullSnapshot,
  readPullSnapshots,
  snapshotSticky,
} from '../../src/github/pull-snapshots.js';
import { pullRunStates, RUN_STATE_PURPOSE, updateRunStateFrom } from '../../src/github/run-state.js';
import { findStickyComments, type StickyComment, stickyText } from '../../src/github/sticky-comment.js';
import { admitRequest, RunStateFullError } from '../../src/lifecycle/bounds.js';
import { recordedJobIds } from '../../src/lifecycle/jobs.js';
import {
  latestRequests,
  type RunRequest,
  type RunState,
  withOutcome,
  withRun,
} from '../../src/lifecycle/model.js';
import { roundReferenceRequest } from '../../src/lifecycle/reference.js';
import { githubMonitorPort, MONITOR_CHECK_NAME, slurmMonitorPort } from '../../src/monitor/adapters.js';
import type { MonitorCandidate, MonitorExperiment, MonitorPorts } from '../../src/monitor/ports.js';
import { recordPaths } from '../../src/record/model.js';
import { recordedReferences } from '../../src/record/references.js';
import { parseRecord } from '../../src/record/validate.js';
import { slurmClientForCluster } from '../../src/slurm/for-cluster.js';
import type { SlurmClient } from '../../src/slurm/types.js';
import { createPrometheusClient, type PrometheusClient } from '../../src/telemetry/prometheus.js';
import { expandCandidate, expandPreset, hash8 } from '../../src/topology/expand.js';
import { checkCandidate, checkClusters, checkExperiment, checkPreset } from '../../src/topology/files.js';
import { presetOverrideDir, readPresetFromCheckout } from '../../src/topology/presets.js';
import { newRunLabel } from '../../src/topology/run-name.js';
import type { Cluster } from '../../src/types/generated/clusters.js';
import type { Experiment } from '../../src/types/generated/experiment.js';
import type { ExperimentRecord } from '../../src/types/generated/record.js';
import { candidatesIn } from '../../src/usecases/autopilot-github.js';
import {
  findMonitorComment,
  monitorCommentParts,
  writeMonitorComment,
} from '../../src/usecases/monitor-comment.js';
import {
  candidateFilesOf,
  prepareCandidateAt,
  prepareReferenceAt,
  withRunName,
} from '../../src/usecases/prepare.js';
import { refuseOrphanedRequest, refuseRequest } from '../../src/usecases/refuse.js';
import { submitCandidate } from '../../src/usecases/submit.js';
import { autopilotPort, closedPullRecorder } from './autopilot.js';

export interface MonitorConfig {
  workspace: string;
  topologiesDir: string;
  clustersFile: string;
  owner: string;
  repo: string;
  botLogin: string;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** Only this pull request (the `/topo status` pass). */
  onlyPull?: number;
}

const repoOf = (config: MonitorConfig) => ({
  owner: config.owner,
  repo: config.repo,
  botLogin: config.botLogin,
});

interface Loaded {
  experiment: Experiment;
  cluster: Cluster;
  base: ReturnType<typeof expandPreset>;
}

function loadExperiments(config: MonitorConfig): Map<string, Loaded> {
  const clustersPath = join(config.workspace, config.clustersFile);
  const clusters = checkClusters(readFileSync(clustersPath, 'utf8'), clustersPath);
  if (!clusters.value)
    throw new Error(
      `${clustersPath}: ${clusters.issues.map((i) => `line ${i.line}: ${i.message}`).join('; ')}`,
    );
  const root = join(config.workspace, config.topologiesDir);
  const out = new Map<string, Loaded>();
  for (const dir of readdirSync(root, { withFileTypes: true })) {
    const file = join(root, dir.name, 'experiment.yaml');
    if (!dir.isDirectory() || !existsSync(file)) continue;
    const checked = checkExperiment(readFileSync(file, 'utf8'), file);
    if (!checked.value) {
      config.log(`skipping ${file}: ${checked.issues.map((i) => `line ${i.line}: ${i.message}`).join('; ')}`);
      continue;
    }
    const cluster = clusters.value.clusters[checked.value.cluster];
    if (!cluster) {
      config.log(`skipping ${file}: cluster ${checked.value.cluster} is not in ${config.clustersFile}`);
      continue;
    }
    // The same preset rule as validate and submit: the repository's own, else the shipped one.
    const found = readPresetFromCheckout(checked.value.base_topology, config.workspace, {
      topologiesDir: config.topologiesDir,
      overrideDir: presetOverrideDir(config.env, config.workspace),
    });
    const preset = found ? checkPreset(found.text, found.path).value : undefined;
    if (!preset) {
      config.log(`skipping ${file}: preset ${checked.value.base_topology} not found or invalid`);
      continue;
    }
    out.set(checked.value.experiment_id, {
      experiment: checked.value,
      cluster,
      base: expandPreset(preset, checked.value),
    });
  }
  return out;
}

/**
 * The experiment record on the default branch (the checkout): its baseline and current best are the
 * references candidates are decided against, and its chart is linked from the comments. A missing
 * record means no recorded reference yet; a corrupt one is logged and ignored (record reports it).
 */
function recordReferences(
  config: MonitorConfig,
  experimentId: string,
): Pick<MonitorExperiment, 'baseline' | 'best' | 'referenceSource' | 'betweenRun' | 'recordChartUrl'> {
  const paths = recordPaths(experimentId);
  const file = join(config.workspace, paths.json);
  if (!existsSync(file)) return {};
  let record: ExperimentRecord;
  try {
    record = parseRecord(readFileSync(file, 'utf8'), paths.json);
  } catch (e) {
    config.log(`${paths.json}: ${(e as Error).message}; deciding without the recorded references`);
    return {};
  }
  const server = config.env.GITHUB_SERVER_URL ?? 'https://github.com';
  return {
    ...recordedReferences(record),
    recordChartUrl: existsSync(join(config.workspace, paths.chart))
      ? `${server}/${config.owner}/${config.repo}/blob/HEAD/${paths.chart}`
      : null,
  };
}

/** The open pull requests of this pass: every one (one paginated GraphQL query), or just `onlyPull`. */
async function readSnapshots(octokit: Octokit, config: MonitorConfig): Promise<PullSnapshot[]> {
  const repo = repoOf(config);
  if (config.onlyPull === undefined) return (await readPullSnapshots(octokit, repo)).pulls;
  const { pull } = await readPullSnapshot(octokit, repo, config.onlyPull);
  return pull ? [pull] : [];
}

/**
 * Candidates of each experiment: the standing Requests in the bot-owned run state of the open pull
 * requests of this repository (never labels, never forks, never the PR's own files alone). A
 * Request's candidate is re-read at the Request's head and checked against the default branch
 * before it may be submitted (`submit` below).
 */
async function loadCandidates(
  octokit: Octokit,
  config: MonitorConfig,
  experiments: Map<string, Loaded>,
  snapshots: readonly PullSnapshot[],
) {
  const byExperiment = new Map<string, MonitorCandidate[]>();
  const { pulls, corrupt } = pullRunStates(snapshots, {
    owner: config.owner,
    repo: config.repo,
    botLogin: config.botLogin,
  });
  for (const c of corrupt) config.log(`pull request #${c.pr}: ${c.message}: its runs are left alone`);
  for (const pull of pulls) {
    let monitored = 0;
    for (const request of latestRequests(pull.state)) {
      const loaded = experiments.get(request.experiment);
      if (!loaded) {
        // its label is the pull request's, from all its candidates: not removed for this one alone
        await refuseOrphanedRequest(octokit, repoOf(config), config, pull, request, config.log, {
          keepLabel: true,
        });
        continue;
      }
      monitored++;
      const list = byExperiment.get(request.experiment) ?? [];
      list.push({
        candidate: request.candidate,
        runName: request.runName,
        pr: pull.pr,
        headSha: request.headSha,
        currentHeadSha: pull.headSha,
        labels: pull.labels,
        requested: false,
        requestedAt: Date.parse(request.requestedAt),
        request,
        ...(request.role ? { role: request.role, ...referenceTopology(config, loaded, request) } : {}),
        ...(pull.state.runs[request.id] ? { run: pull.state.runs[request.id] } : {}),
        ...(pull.state.outcomes[request.id] ? { outcome: pull.state.outcomes[request.id] } : {}),
      });
      byExperiment.set(request.experiment, list);
    }
    // Labels only show state: with no Request the monitor follows (none, or only ones of experiments
    // gone from the default branch), a topology:* label goes.
    if (monitored === 0 && pull.labels.some((l) => l.startsWith('topology:')))
      await setStateLabel(
        octokit,
        { owner: config.owner, repo: config.repo, issue_number: pull.pr },
        null,
        pull.labels,
      );
  }
  return byExperiment;
}

/**
 * A reference job's topology (for the estimators and failure explanations): the best's file on the
 * default branch, when it still expands to the topology the Request was pinned to.
 */
function referenceTopology(config: MonitorConfig, loaded: Loaded, request: RunRequest) {
  const file = join(config.workspace, request.path);
  if (request.path.includes('..') || !existsSync(file)) return {};
  const checked = checkCandidate(readFileSync(file, 'utf8'), request.path);
  if (!checked.value) return {};
  const topology = expandCandidate(loaded.base, checked.value.topology);
  return hash8(topology) === request.topologyHash ? { topology } : {};
}

/**
 * One GraphQL request for what the pass needs of the candidates' commits: each candidate's
 * expanded topology (capacity for the estimators, failure explanations) from its file at the
 * Request's commit, read as data, checked against the candidate schema and kept only when it
 * expands to the topology the Request was validated with (its hash); and the id of each commit's
 * `topo/monitor` check run, so writing it needs no listing. Returns those ids.
 */
async function readCandidateCommits(
  octokit: Octokit,
  config: MonitorConfig,
  experiments: Map<string, Loaded>,
  candidates: MonitorCandidate[],
): Promise<Map<string, number | null>> {
  const wanted = candidates.filter(
    (c): c is MonitorCandidate & { request: RunRequest } =>
      !!c.request &&
      !c.request.role &&
      candidateFilesOf([c.request.path], config.topologiesDir).length === 1 &&
      c.request.path.split('/').at(-2) === c.request.experiment,
  );
  if (!candidates.length) return new Map();
  const refs = wanted.map((c) => ({ sha: c.request.headSha, path: c.request.path }));
  const { texts, checkRuns } = await readBlobs(octokit, { owner: config.owner, repo: config.repo }, refs, {
    name: MONITOR_CHECK_NAME,
    shas: candidates.map((c) => c.headSha),
  });
  for (const c of wanted) {
    const text = texts.get(`${c.request.headSha}:${c.request.path}`);
    const loaded = experiments.get(c.request.experiment);
    if (text === undefined || !loaded) continue;
    const checked = checkCandidate(text, c.request.path);
    if (!checked.value || checked.value.name !== c.request.candidate) continue;
    const expanded = expandCandidate(loaded.base, checked.value.topology);
    if (hash8(expanded) === c.request.topologyHash) c.topology = expanded;
    else config.log(`${c.runName}: the default branch's base changed since the request: no topology`);
  }
  return checkRuns;
}

/**
 * A pass's comment parts by key: found once (from the pass's snapshot, else one listing), then as
 * written (a later read or write in the same pass sees the new parts and ids).
 */
function partsCache<K>(keyOf: (k: K) => string, find: (k: K) => Promise<StickyComment[]>) {
  const parts = new Map<string, StickyComment[]>();
  return {
    async get(k: K): Promise<StickyComment[]> {
      let known = parts.get(keyOf(k));
      if (!known) {
        known = await find(k);
        parts.set(keyOf(k), known);
      }
      return known;
    },
    set: (k: K, written: StickyComment[]) => parts.set(keyOf(k), written),
  };
}

/** The pull requests' run state comments (src/github/run-state.ts), from the pass's snapshot. */
function runStateCache(
  octokit: Octokit,
  config: MonitorConfig,
  snapshotOf: (pr: number) => PullSnapshot | undefined,
) {
  return partsCache(String, (pr: number) => {
    const target = { ...repoOf(config), issue_number: pr, purpose: RUN_STATE_PURPOSE };
    const snap = snapshotOf(pr);
    return snap ? Promise.resolve(snapshotSticky(snap, target)) : findStickyComments(octokit, target);
  });
}

/**
 * A pass's monitor comments, one per candidate (src/usecases/monitor-comment.ts): found in the
 * pass's snapshot (no listing; a legacy `monitor` comment of the candidate included), then as written.
 */
function monitorCommentCache(
  octokit: Octokit,
  config: MonitorConfig,
  snapshotOf: (pr: number) => PullSnapshot | undefined,
) {
  type Key = { pr: number; candidate: string };
  const target = (pr: number) => ({ ...repoOf(config), issue_number: pr });
  const cache = partsCache(
    ({ pr, candidate }: Key) => `${pr}/${candidate}`,
    async ({ pr, candidate }: Key) => {
      const snap = snapshotOf(pr);
      return snap
        ? monitorCommentParts(snap.botComments, candidate, config.botLogin)
        : findMonitorComment(octokit, target(pr), candidate);
    },
  );
  return {
    read: async (pr: number, candidate: string) => stickyText(await cache.get({ pr, candidate })),
    /** Writes by the known comment ids; a comment deleted since the snapshot is found again. */
    async write(pr: number, candidate: string, body: string) {
      const known = await cache.get({ pr, candidate });
      const written = await writeMonitorComment(octokit, target(pr), candidate, body, known).catch(
        (e: { status?: number }) => {
          if (e.status !== 404) throw e;
          return writeMonitorComment(octokit, target(pr), candidate, body);
        },
      );
      cache.set({ pr, candidate }, written.parts);
    },
  };
}

/**
 * The monitor's GitHub port over the pass's snapshot: the candidates' sticky comments (read from
 * it, written by their ids), the pull request's check run (updated by the id the pass read), the
 * state label (labels from it).
 */
function snapshotGithubPort(
  octokit: Octokit,
  config: MonitorConfig,
  comments: ReturnType<typeof monitorCommentCache>,
  checkRuns: Map<string, number | null>,
): MonitorPorts['github'] {
  const direct = githubMonitorPort(octokit, repoOf(config));
  return {
    readComment: (pr, candidate) => comments.read(pr, candidate),
    writeComment: (pr, candidate, body) => comments.write(pr, candidate, body),
    async writeCheck(_pr, headSha, check) {
      // As githubMonitorPort writes it (any further MonitorCheck field passes through), by known id.
      const { conclusion, ...output } = check;
      const written = await upsertCheckRun(
        octokit,
        {
          ...output,
          owner: config.owner,
          repo: config.repo,
          name: MONITOR_CHECK_NAME,
          head_sha: headSha,
          ...(conclusion ? { conclusion } : {}),
        },
        checkRuns.get(headSha),
      );
      checkRuns.set(headSha, written.id);
    },
    setLabel: direct.setLabel,
  };
}

/** One Slurm and one Prometheus client per cluster, made on first use; `close()` ends the Slurm connections. */
function clusterClients(config: MonitorConfig, experiments: Map<string, Loaded>) {
  const slurm = new Map<string, SlurmClient>();
  const prom = new Map<string, PrometheusClient>();
  const loaded = (id: string) => {
    const l = experiments.get(id);
    if (!l) throw new Error(`unknown experiment ${id}`);
    return l;
  };
  return {
    loaded,
    slurmFor(id: string): SlurmClient {
      const { experiment, cluster } = loaded(id);
      let c = slurm.get(experiment.cluster);
      if (!c) {
        c = slurmClientForCluster(experiment.cluster, cluster, { env: config.env });
        slurm.set(experiment.cluster, c);
      }
      return c;
    },
    promFor(name: string, cluster: Cluster): PrometheusClient {
      let p = prom.get(name);
      if (!p) {
        p = createPrometheusClient({ baseUrl: cluster.prometheus_url });
        prom.set(name, p);
      }
      return p;
    },
    async close() {
      for (const c of slurm.values()) await c.close();
    },
  };
}
type ClusterClients = ReturnType<typeof clusterClients>;

/** The pass's Slurm port: each experiment's over its cluster's client (one port each, so what a listing saw stays with it). */
function slurmPorts(clients: ClusterClients, known: readonly string[]): MonitorPorts['slurm'] {
  const ports = new Map<string, MonitorPorts['slurm']>();
  const of = (id: string) => {
    const port =
      ports.get(id) ??
      slurmMonitorPort(clients.slurmFor(id), known, {
        releaseAbandonedHolds: { now: () => Date.now() / 1000 },
      });
    ports.set(id, port);
    return port;
  };
  return {
    jobs: (id, recorded) => of(id).jobs(id, recorded),
    cancel: (jobId, id) => clients.slurmFor(id).cancel(jobId),
    conflicts: (id) => of(id).conflicts?.(id) ?? [],
    accounting: (id) => of(id).accounting?.(id) ?? null,
    accountingProblem: (id) => of(id).accountingProblem?.(id) ?? null,
  };
}

/**
 * The submit port: only a standing Request is ever submitted, re-validated at its head against the
 * default branch; one no longer valid is refused (its Outcome and comment) and left out of the pass.
 */
function submitPort(
  octokit: Octokit,
  config: MonitorConfig,
  experiments: Map<string, Loaded>,
  clients: ClusterClients,
): MonitorPorts['submit'] {
  return async (exp, c) => {
    if (!c.request) return undefined;
    const { experiment } = clients.loaded(exp.experiment.experiment_id);
    const source = {
      workspace: config.workspace,
      clustersFile: config.clustersFile,
      topologiesDir: config.topologiesDir,
      presetsDir: presetOverrideDir(config.env, config.workspace),
    };
    // a reference job runs the default branch's best, pinned to its hash; a candidate its pull request's file
    const prepared = c.request.role
      ? await prepareReferenceAt(source, c.request.path, c.request.topologyHash)
      : await prepareCandidateAt(
          octokit,
          { owner: config.owner, repo: config.repo },
          c.request.headSha,
          c.request.path,
          source,
        );
    if (!prepared.ok || prepared.candidate.experimentId !== experiment.experiment_id) {
      const errors = prepared.ok
        ? [`${c.request.path} now belongs to experiment ${prepared.candidate.experimentId}`]
        : prepared.errors;
      config.log(`${c.runName}: refused: ${errors.join('; ')}`);
      // the pass leaves it out and recomputes its pull request's label from the candidates that stay
      await refuseRequest(octokit, repoOf(config), c.request, errors, new Date().toISOString(), {
        keepLabel: true,
      });
      return { refused: true };
    }
    const result = await submitCandidate(
      { slurm: clients.slurmFor(experiment.experiment_id), log: config.log },
      {
        experimentId: experiment.experiment_id,
        cluster: experiment.cluster,
        submission: withRunName(prepared.candidate.submission, c.request.runName),
        maxParallel: experiment.max_parallel,
        knownExperimentIds: [...experiments.keys()],
        recorded: recordedJobIds(exp.candidates.flatMap((x) => [x.run, x.outcome])),
      },
    );
    config.log(`${c.runName}: ${result.status}`);
    return result.status === 'submitted' || result.status === 'existing'
      ? { jobId: result.jobId }
      : undefined;
  };
}

/** An experiment as the pass reads it: its cluster's settings, its record's references, its candidates. */
function monitorExperiment(
  config: MonitorConfig,
  l: Loaded,
  clients: ClusterClients,
  candidates: MonitorCandidate[],
): MonitorExperiment {
  return {
    experiment: l.experiment,
    timeScale: l.cluster.time_scale ?? 1,
    scrapeSeconds: (l.cluster.time_scale ?? 1) > 1 ? 1 : 5,
    grafanaUrl: l.cluster.grafana_url ?? null,
    prometheus: clients.promFor(l.experiment.cluster, l.cluster),
    gpusPerNode: l.cluster.gpus_per_node,
    ...recordReferences(config, l.experiment.experiment_id),
    candidates,
  };
}

/**
 * The runner's wall clock (unix seconds). TOPO_TEST_CLOCK_OFFSET_SECONDS shifts it, to test a
 * runner whose clock is off Prometheus's and Slurm's (src/monitor/clock.ts holds such a pass).
 */
export function runnerClock(env: NodeJS.ProcessEnv): () => number {
  const raw = env.TOPO_TEST_CLOCK_OFFSET_SECONDS;
  const offset = raw === undefined || raw === '' ? 0 : Number(raw);
  if (!Number.isFinite(offset))
    throw new Error(`TOPO_TEST_CLOCK_OFFSET_SECONDS must be a number of seconds, got "${raw}"`);
  return () => Date.now() / 1000 + offset;
}

/**
 * The round's reference Request (src/lifecycle/reference.ts), the bot's, written to pull request
 * `pr`'s state at `headSha`; null when the experiment has no reference source or the state is full.
 */
async function requestReference(
  config: MonitorConfig,
  recordState: (pr: number, change: (s: RunState) => RunState) => Promise<void>,
  exp: MonitorExperiment,
  pr: number,
  headSha: string,
): Promise<RunRequest | null> {
  const request = roundReferenceRequest(exp, {
    pr,
    headSha,
    login: config.botLogin,
    requestedAt: new Date().toISOString(),
    label: newRunLabel(),
  });
  if (!request) return null;
  try {
    await recordState(pr, (s) => admitRequest(s, request));
  } catch (error) {
    if (!(error instanceof RunStateFullError)) throw error;
    config.log(`#${pr}: no reference job for ${exp.experiment.experiment_id}: ${error.message}`);
    return null;
  }
  config.log(`#${pr}: reference job ${request.runName} asked for (${request.candidate})`);
  return request;
}

/** Every experiment carries its cluster's Prometheus: the pass-wide port answers nothing. */
const PROMETHEUS_PER_EXPERIMENT: MonitorPorts['prometheus'] = {
  baseUrl: 'per-experiment',
  instant: () => Promise.reject(new Error('every experiment carries its cluster’s Prometheus')),
  range: () => Promise.reject(new Error('every experiment carries its cluster’s Prometheus')),
};

/** The pass's experiments, after reading its snapshot of the open pull requests and their check runs. */
async function readPassExperiments(
  octokit: Octokit,
  config: MonitorConfig,
  experiments: ReturnType<typeof loadExperiments>,
  clients: ReturnType<typeof clusterClients>,
  snapshots: Map<number, PullSnapshot>,
  checkRuns: Map<string, number | null>,
): Promise<MonitorExperiment[]> {
  snapshots.clear();
  for (const snap of await readSnapshots(octokit, config)) snapshots.set(snap.number, snap);
  const candidates = await loadCandidates(octokit, config, experiments, [...snapshots.values()]);
  checkRuns.clear();
  const read = await readCandidateCommits(octokit, config, experiments, [...candidates.values()].flat());
  for (const [sha, id] of read) checkRuns.set(sha, id);
  return [...experiments.values()].map((l) =>
    monitorExperiment(config, l, clients, candidates.get(l.experiment.experiment_id) ?? []),
  );
}

/** The autopilot's port: people's candidates from the pass's snapshot, closed pull requests recorded. */
function passAutopilotPort(
  octokit: Octokit,
  config: MonitorConfig,
  experiments: ReturnType<typeof loadExperiments>,
  clients: ReturnType<typeof clusterClients>,
  snapshots: ReadonlyMap<number, PullSnapshot>,
): MonitorPorts['autopilot'] {
  const presetsDir = presetOverrideDir(config.env, config.workspace);
  return autopilotPort(octokit, repoOf(config), {
    workspace: config.workspace,
    clustersFile: config.clustersFile,
    topologiesDir: config.topologiesDir,
    ...(presetsDir ? { presetsDir: presetsDir as string } : {}),
    log: config.log,
    // people's candidates from the pass's snapshot of the open pull requests: no request more
    others: (id) =>
      [...snapshots.values()].flatMap((snap) =>
        candidatesIn(
          snap.number,
          snap.files.filter((f) => f.status !== 'removed').map((f) => f.path),
          id,
          config.topologiesDir,
        ),
      ),
    ...(config.env.GITHUB_SERVER_URL ? { serverUrl: config.env.GITHUB_SERVER_URL } : {}),
    record: closedPullRecorder(octokit, repoOf(config), {
      topologiesDir: config.topologiesDir,
      log: config.log,
      clusterOf: (x) => experiments.get(x.experiment_id)?.cluster,
      slurmFor: async (x) =>
        experiments.has(x.experiment_id) ? clients.slurmFor(x.experiment_id) : undefined,
    }),
  });
}

/** Ports for one pass; `close()` ends the Slurm connections. */
export function buildMonitorPorts(
  octokit: Octokit,
  config: MonitorConfig,
): MonitorPorts & { close(): Promise<void> } {
  const experiments = loadExperiments(config);
  const stateTarget = (pr: number) => ({ ...repoOf(config), issue_number: pr });
  const clients = clusterClients(config, experiments);
  // The pass's snapshot of the open pull requests: every comment read and written below starts from it.
  const snapshots = new Map<number, PullSnapshot>();
  const snapshotOf = (pr: number) => snapshots.get(pr);
  const monitorComments = monitorCommentCache(octokit, config, snapshotOf);
  const checkRuns = new Map<string, number | null>();
  const runStates = runStateCache(octokit, config, snapshotOf);
  const recordState = async (pr: number, change: (s: RunState) => RunState) => {
    const written = await updateRunStateFrom(octokit, stateTarget(pr), await runStates.get(pr), change);
    runStates.set(pr, written.parts);
  };
  return {
    experiments: () => readPassExperiments(octokit, config, experiments, clients, snapshots, checkRuns),
    slurm: slurmPorts(clients, [...experiments.keys()]),
    submit: submitPort(octokit, config, experiments, clients),
    prometheus: PROMETHEUS_PER_EXPERIMENT,
    github: snapshotGithubPort(octokit, config, monitorComments, checkRuns),
    autopilot: passAutopilotPort(octokit, config, experiments, clients, snapshots),
    lifecycle: {
      recordRun: (pr, requestId, run) => recordState(pr, (s) => withRun(s, requestId, run)),
      recordOutcome: (pr, requestId, outcome) => recordState(pr, (s) => withOutcome(s, requestId, outcome)),
      requestReference: (exp, pr, headSha) => requestReference(config, recordState, exp, pr, headSha),
    },
    now: runnerClock(config.env),
    close: () => clients.close(),
  };
}
