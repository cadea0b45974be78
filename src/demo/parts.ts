// The real parts behind the demo's seams (DemoParts in src/demo/run.ts): each seam calls the
// part that owns it, so the demo shows exactly what the product does on a cluster:
//   prepare  → topology init (parseRunCommand + buildExperiment)
//   submit   → renderSubmission + submitCandidate (Slurm part), cancel → cancelCandidate
//   observe  → the monitor's pass (detector, bottleneck, resources, sticky comment), with
//              the pull request's comment kept in memory instead of on GitHub
//   record   → createRecord / apply / renderRecordMarkdown, report → renderFinalReport
//   suggest  → `topo suggest` (runSuggest) over the output folder, read as the experiment's repository
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LabelState } from '../github/labels.js';
import { slurmMonitorPort } from '../monitor/adapters.js';
import { monitorPass } from '../monitor/pass.js';
import type { MonitorCheck, MonitorExperiment, MonitorPorts } from '../monitor/ports.js';
import type { CandidateReport } from '../monitor/report.js';
import { apply } from '../record/apply.js';
import { topologyChange } from '../record/change.js';
import { referenceWithFigure } from '../record/figure.js';
import { baselineRun, bestRun, createRecord, recordPaths } from '../record/model.js';
import { applyReferenceRun, betweenRunOf, referenceRunEntry } from '../record/reference-runs.js';
import { renderRecordMarkdown } from '../record/render.js';
import { renderFinalReport } from '../report/final-report.js';
import { viewStanding } from '../report/pr-comment.js';
import { slurmClientForCluster } from '../slurm/for-cluster.js';
import type { SlurmClient } from '../slurm/types.js';
import { createPrometheusClient } from '../telemetry/prometheus.js';
import { expandCandidate, expandPreset, hash8 } from '../topology/expand.js';
import { checkClusters, checkPreset } from '../topology/files.js';
import { buildExperiment } from '../topology/init.js';
import { renderSubmission } from '../topology/render.js';
import { parseRunCommand } from '../topology/run-command.js';
import { newRunLabel, runNameFor } from '../topology/run-name.js';
import { experimentSettings } from '../topology/settings.js';
import type { Candidate } from '../types/generated/candidate.js';
import type { Cluster } from '../types/generated/clusters.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { ExperimentRecord } from '../types/generated/record.js';
import type { Topology } from '../types/generated/topology.js';
import { withRunName } from '../usecases/prepare.js';
import { cancelCandidate, submitCandidate } from '../usecases/submit.js';
import { runSuggest } from '../usecases/suggest.js';
import { type FileSource, fileSystemSource } from '../usecases/validate.js';
import { localCluster } from './cluster.js';
import {
  type ClusterEnv,
  type DemoOutcome,
  type DemoParts,
  type DemoReference,
  type DemoSuggestion,
  judgedValue,
  type Observed,
  type PreparedExperiment,
  type Reference,
  type SubmittedRun,
} from './run.js';

/** The cluster of clusters.yaml the demo submits to (transport local). */
export const DEMO_CLUSTER = 'local';

/** States after which the monitor has nothing more to say about a candidate. */
// `stable` is not final: the monitor cancels a candidate on its decision (stop_when_decided) and the
// baseline once stable (stop_when_stable), and the next pass writes the comment a reviewer keeps
// (the job's end state, who stopped it).
const FINAL_STATES = new Set(['finished', 'stopped', 'failed']);

interface Context {
  cluster: Cluster;
  base: Topology;
  slurm: SlurmClient;
  timeScale: number;
  prometheusUrl: string;
  experimentId: string;
  /** The sticky comment of each run's (imaginary) pull request, by run name. */
  comments: Map<string, string>;
  /** The check run and state label the monitor last wrote on each run's pull request, by run name. */
  checks: Map<string, MonitorCheck>;
  labels: Map<string, LabelState | null>;
  /** Each run's (imaginary) pull request, numbered as the runs were first watched: stable across looks. */
  prs: Map<string, number>;
}

export function loadCluster(env: ClusterEnv): Cluster {
  const text = readFileSync(env.clustersFile, 'utf8');
  const checked = checkClusters(text, env.clustersFile);
  const cluster = checked.value?.clusters[DEMO_CLUSTER];
  if (!cluster) {
    const why = checked.issues[0]?.message ?? `no cluster "${DEMO_CLUSTER}"`;
    throw new Error(`${env.clustersFile}: ${why} (written by scripts/local-cluster up)`);
  }
  return cluster;
}

/** hhmmss (UTC) that makes each demo run's experiment id, job names and run_name labels its own. */
function runTag(): string {
  return new Date().toISOString().slice(11, 19).replace(/:/g, '');
}

/** The output folder first (experiment, candidates, record), the package for the rest (presets). */
function layered(outDir: string, root: string): FileSource {
  const out = fileSystemSource(outDir);
  const repo = fileSystemSource(root);
  return {
    read: async (path) => (await out.read(path)) ?? repo.read(path),
    list: async (dir) => {
      const names = [...((await out.list(dir)) ?? []), ...((await repo.list(dir)) ?? [])];
      return names.length ? [...new Set(names)].sort() : undefined;
    },
  };
}

/** The demo's experiment as the monitor reads it: its runs as candidates, the reference job as the bot's. */
function monitorExperiment(
  c: Context,
  experiment: Experiment,
  byPr: ReadonlyMap<number, SubmittedRun>,
  reference: Reference,
  resolved: (candidate: Candidate) => { expanded: Topology },
): MonitorExperiment {
  return {
    experiment,
    timeScale: c.timeScale,
    scrapeSeconds: 1,
    grafanaUrl: c.cluster.grafana_url ?? null,
    baseline: reference.baseline,
    best: reference.best,
    betweenRun: reference.betweenRun ?? null,
    candidates: [...byPr].map(([pr, r]) => ({
      candidate: r.candidate.name,
      runName: r.runName,
      pr,
      headSha: '0'.repeat(40),
      labels: [],
      topology: resolved(r.candidate).expanded,
      requested: true,
      ...(r.role ? { role: r.role } : {}),
    })),
  };
}

/** One run's look as the demo shows it, from the monitor's report of it (none yet: submitted). */
function observedOf(c: Context, run: SubmittedRun, outcome: CandidateReport | undefined): Observed {
  if (!outcome) {
    return {
      state: 'submitted',
      simulatedMinutes: null,
      secondsPerRollout: null,
      observation: null,
      comment: '',
      done: false,
      standing: null,
      check: null,
      label: null,
    };
  }
  const observation = outcome.view.observation;
  const verdict = observation.verdict;
  return {
    state: outcome.state,
    simulatedMinutes: verdict.minutes_of_data ?? null,
    // the judgement's figure, the one the verdict column and the comment show
    secondsPerRollout: judgedValue(observation),
    observation,
    comment: c.comments.get(run.runName) ?? '',
    done: FINAL_STATES.has(outcome.state),
    standing: viewStanding(outcome.view),
    check: c.checks.get(run.runName) ?? null,
    label: c.labels.get(run.runName) ?? null,
    referenceJob: outcome.view.referenceJob ?? null,
  };
}

/** The round's reference job as the record keeps it (src/record/reference-runs.ts). */
function referenceRunOf(r: DemoReference) {
  return referenceRunEntry({
    of: r.run.candidate.name,
    runName: r.run.runName,
    jobId: r.run.jobId,
    pullRequest: null,
    heldGpuMinutes: r.gpuMinutes,
    ended: r.ended,
    candidates: r.candidates,
    at: new Date().toISOString(),
    // the demo charges what its loop measured, not the comment's figure
    observation: r.observation ? { ...r.observation, decision: undefined } : null,
  });
}

/**
 * The demo's experiment from an AlpaSim run command, as `topo init` builds it (cluster `local`), with
 * an id of its own (each run's job names and run_name labels never meet an earlier run's) and the
 * baseline cancelled once stable; its cluster and expanded base preset.
 */
export function demoExperiment(root: string, command: string, clusterEnv: ClusterEnv, dateStamp: string) {
  const cluster = loadCluster(clusterEnv);
  const parsed = parseRunCommand(command);
  const presetFile = join(root, 'topologies', 'presets', `${parsed.topology}.yaml`);
  const preset = checkPreset(readFileSync(presetFile, 'utf8'), presetFile);
  if (!preset.value) throw new Error(`${presetFile}: ${preset.issues[0]?.message ?? 'invalid preset'}`);
  const built = buildExperiment(parsed, preset.value, command, { cluster: DEMO_CLUSTER, date: dateStamp });
  const experiment: Experiment = {
    ...built.experiment,
    experiment_id: built.experiment.experiment_id.replace(
      `-${DEMO_CLUSTER}-${dateStamp}`,
      `-demo${runTag()}-${DEMO_CLUSTER}-${dateStamp}`,
    ),
    // The monitor cancels a candidate on its decision (stop_when_decided, the default) and the
    // baseline once stable: the demo's GPU-hours are seconds.
    stop_when_stable: true,
    // a round's three candidates and its reference job beside them (reference: beside, the default)
    max_parallel: 4,
  };
  return { experiment, baseline: built.baseline, cluster, base: expandPreset(preset.value, experiment) };
}

/** What the demo's parts share: where they run, and the experiment's context once prepared. */
interface Wiring {
  root: string;
  env: NodeJS.ProcessEnv;
  outDir: string;
  /** clusters.yaml of the prepared experiment (`topo suggest` reads it). */
  clustersFile: string;
  ctx: Context | undefined;
}

function need(w: Wiring): Context {
  if (!w.ctx) throw new Error('topo demo: the experiment is not prepared yet');
  return w.ctx;
}

/** A candidate's topology expanded over the base preset. */
function resolvedCandidate(w: Wiring, candidate: Candidate) {
  const { base } = need(w);
  return { name: candidate.name, expanded: expandCandidate(base, candidate.topology), base };
}

/** The experiment's context: its cluster, base preset, Slurm client and the runs' in-memory pull requests. */
function prepareDemo(
  w: Wiring,
  command: string,
  clusterEnv: ClusterEnv,
  dateStamp: string,
): PreparedExperiment {
  const built = demoExperiment(w.root, command, clusterEnv, dateStamp);
  w.clustersFile = clusterEnv.clustersFile;
  const slurmEnv = { ...w.env, SLURM_CONF: String(clusterEnv.slurmConf ?? w.env.SLURM_CONF ?? '') };
  w.ctx = {
    experimentId: built.experiment.experiment_id,
    cluster: built.cluster,
    base: built.base,
    slurm: slurmClientForCluster(DEMO_CLUSTER, built.cluster, { env: slurmEnv }),
    timeScale: clusterEnv.timeScale,
    prometheusUrl: clusterEnv.prometheusUrl,
    comments: new Map(),
    checks: new Map(),
    labels: new Map(),
    prs: new Map(),
  };
  return { experiment: built.experiment, baseline: built.baseline };
}

// `runName`: the run's name with its Request label (a candidate's, or the round's reference job's)
async function submitRun(
  w: Wiring,
  experiment: Experiment,
  candidate: Candidate,
  runName: string,
): Promise<SubmittedRun> {
  const { cluster, slurm } = need(w);
  const submission = withRunName(
    renderSubmission(experiment, resolvedCandidate(w, candidate), cluster),
    runName,
  );
  const result = await submitCandidate(
    { slurm },
    {
      experimentId: experiment.experiment_id,
      cluster: DEMO_CLUSTER,
      submission,
      maxParallel: experimentSettings(experiment).maxParallel,
    },
  );
  if (result.status !== 'submitted' && result.status !== 'existing') {
    throw new Error(`${candidate.name}: submit answered ${result.status}, expected a job`);
  }
  return { candidate, runName: submission.jobName, jobId: result.jobId };
}

// every run a Request of its own: a label in its name, written into the job (withRunName)
async function submitAs(
  w: Wiring,
  experiment: Experiment,
  candidate: Candidate,
  role?: 'reference',
): Promise<SubmittedRun> {
  const base = renderSubmission(experiment, resolvedCandidate(w, candidate), need(w).cluster).jobName;
  const run = await submitRun(w, experiment, candidate, runNameFor(base, newRunLabel()));
  return role ? { ...run, role } : run;
}

/** The monitor's GitHub port over the runs' in-memory pull requests: comment, check and label by run. */
function inMemoryGitHub(c: Context, keyOf: (pr: number) => string): MonitorPorts['github'] {
  return {
    // one comment per run, as the monitor's sticky comment `monitor-<candidate>` on its pull request
    readComment: async (pr) => c.comments.get(keyOf(pr)),
    writeComment: async (pr, _candidate, body) => {
      c.comments.set(keyOf(pr), body);
    },
    writeCheck: async (pr, _sha, check) => {
      c.checks.set(keyOf(pr), check);
    },
    setLabel: async (pr, state) => {
      c.labels.set(keyOf(pr), state);
      return true;
    },
  };
}

/** One monitor pass over a batch of runs, each run its own (imaginary) pull request. */
async function observeRuns(
  w: Wiring,
  prepared: PreparedExperiment,
  runs: readonly SubmittedRun[],
  reference: Reference,
): Promise<Observed[]> {
  const c = need(w);
  const { experiment } = prepared;
  // each run its own pull request, numbered once (the reference job's too, as the bot's Request)
  for (const r of runs) if (!c.prs.has(r.runName)) c.prs.set(r.runName, c.prs.size + 1);
  const byPr = new Map(runs.map((r) => [c.prs.get(r.runName) as number, r]));
  const keyOf = (pr: number) => byPr.get(pr)?.runName ?? `#${pr}`;
  const resolved = (candidate: Candidate) => resolvedCandidate(w, candidate);
  const report = await monitorPass(
    {
      experiments: async () => [monitorExperiment(c, experiment, byPr, reference, resolved)],
      // the monitor's own Slurm port: the one job model (src/judge/job.ts) and its failure rule
      slurm: slurmMonitorPort(c.slurm),
      // The demo submits before it watches; a candidate the monitor cannot find is submitted again,
      // idempotently (a reference job is not: once it ended, its data are what the candidates read).
      submit: async (_exp, candidate) => {
        const run = runs.find((r) => r.runName === candidate.runName && !r.role);
        return run
          ? { jobId: (await submitRun(w, experiment, run.candidate, run.runName)).jobId }
          : undefined;
      },
      prometheus: createPrometheusClient({ baseUrl: c.prometheusUrl }),
      github: inMemoryGitHub(c, keyOf),
      now: () => Date.now() / 1000,
    },
    // A loaded 2-core machine can take a while to scrape the first target: allow a simulated hour.
    { tickSeconds: 1, lagSeconds: 1, telemetryDeadlineMinutes: 60 },
  );
  if (report.errors.length) throw new Error(`monitor: ${report.errors.join('; ')}`);
  return runs.map((run) =>
    observedOf(
      c,
      run,
      report.candidates.find((o) => o.runName === run.runName),
    ),
  );
}

/** A candidate's outcome into the record, with its topology, file and change from its parent. */
function applyOutcome(w: Wiring, record: ExperimentRecord, outcome: DemoOutcome): ExperimentRecord {
  const { base } = need(w);
  const expanded = expandCandidate(base, outcome.candidate.topology);
  const parentRun = record.runs.find((r) => r.name === outcome.candidate.parent);
  const parentExpanded = parentRun?.topology?.block ? expandCandidate(base, parentRun.topology.block) : base;
  return apply(record, {
    candidate: outcome.candidate.name,
    kind: outcome.decision,
    at: new Date().toISOString(),
    parent: outcome.candidate.parent ?? null,
    run_name: outcome.run.runName,
    job_id: outcome.run.jobId,
    topology: {
      base: `topology=${record.fixed_inputs.base_topology.replace(/^topology=/, '')}`,
      hash: hash8(expanded),
      block: outcome.candidate.topology,
      file: `topologies/${record.experiment_id}/${outcome.candidate.name}.yaml`,
    },
    change: topologyChange(parentExpanded, expanded),
    hypothesis: outcome.candidate.hypothesis ?? null,
    expected_effect: outcome.candidate.expected_effect ?? null,
    observation: outcome.observation,
    reason: outcome.reason,
    failure: outcome.observation?.failure ?? null,
  });
}

// The record and candidate files are already in the output folder: `topo suggest` reads them
// there as it reads a repository, validates its proposals and returns their file texts.
async function suggestNext(w: Wiring, record: ExperimentRecord, count: number): Promise<DemoSuggestion> {
  const outcome = await runSuggest({
    experimentId: record.experiment_id,
    files: layered(w.outDir, w.root),
    clustersFile: w.clustersFile,
    count,
  });
  for (const dropped of outcome.invalid) {
    outcome.result.rejected.push({ change: dropped.name, reason: dropped.errors.join('; ') });
  }
  return {
    proposals: outcome.proposals.map((p) => p.candidate),
    files: Object.fromEntries(outcome.proposals.map((p) => [p.candidate.name, p.text])),
    stop: outcome.result.stop.stop || outcome.proposals.length === 0 ? outcome.result.stop.reason : undefined,
  };
}

export function realDemoParts(
  root: string,
  env: NodeJS.ProcessEnv,
  outDir: string,
): DemoParts<ExperimentRecord> {
  const w: Wiring = { root, env, outDir, clustersFile: '', ctx: undefined };
  return {
    cluster: localCluster(root, env),
    jobLog: (run) => need(w).slurm.tail(run.jobId, 40),
    prepare: async (command, clusterEnv, dateStamp) => prepareDemo(w, command, clusterEnv, dateStamp),
    submit: (experiment, candidate, _env, role) => submitAs(w, experiment, candidate, role),
    async cancel(run: SubmittedRun): Promise<void> {
      const c = need(w);
      await cancelCandidate({ slurm: c.slurm }, { experimentId: c.experimentId, jobName: run.runName });
    },
    observe: (prepared, runs, _env, reference) => observeRuns(w, prepared, runs, reference),
    createRecord: (prepared) => createRecord(prepared.experiment, need(w).cluster),
    // as actions/monitor reads the record on the default branch
    references: (record) => ({
      baseline: referenceWithFigure(baselineRun(record)),
      best: referenceWithFigure(bestRun(record)),
      current: record.current_best.topology,
      betweenRun: betweenRunOf(record),
    }),
    applyReference: (record, reference) => applyReferenceRun(record, referenceRunOf(reference)),
    apply: (record, outcome) => applyOutcome(w, record, outcome),
    recordJson: (record) => `${JSON.stringify(record, null, 2)}\n`,
    recordMarkdown: (record) => renderRecordMarkdown(record),
    suggest: (record, _prepared, count) => suggestNext(w, record, count),
    finalReport: (record) =>
      renderFinalReport(record, {
        recordUrl: recordPaths(record.experiment_id).markdown,
        generatedAt: new Date().toISOString(),
      }),
  };
}
