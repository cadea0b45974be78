// `topo analyze <run_name>`: one run read from Prometheus, judged by the detector and the analysis,
// printed as the monitor's comment (Markdown) or as the observation JSON.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { experimentJobs, type RunJob } from '../../judge/job.js';
import { coarseStep, defaultStepSeconds } from '../../judge/read.js';
import { type CandidateView, renderMonitorComment } from '../../report/pr-comment.js';
import { slurmClientForCluster } from '../../slurm/for-cluster.js';
import { isLive } from '../../slurm/types.js';
import { createPrometheusClient, type PrometheusClient } from '../../telemetry/prometheus.js';
import { anyRunSelector } from '../../telemetry/queries.js';
import { checkClusters } from '../../topology/files.js';
import { formatIssue } from '../../topology/issues.js';
import { candidateOfRunName, experimentIdOfRun } from '../../topology/run-name.js';
import { EXPERIMENT_DEFAULTS } from '../../topology/settings.js';
import type { Cluster } from '../../types/generated/clusters.js';
import type { Experiment } from '../../types/generated/experiment.js';
import {
  type AnalyzeRunResult,
  analyzeRun,
  type KnownExperiment,
  parseAt,
} from '../../usecases/analyze-run.js';
import { num, type OptionSpec, type Parsed, parseOptions } from '../args.js';
import type { CliIO, Command } from '../command.js';
import { ConfigError, EXIT, FindingError, UsageError } from '../errors.js';
import { ensurePrometheus } from '../services.js';
import { experimentOfRun, recordReferencesOf } from './experiments.js';
import { CLUSTERS_OPTION, JSON_OPTION } from './options.js';

export interface TelemetryOptions {
  prometheus: PrometheusClient;
  timeScale: number;
  stepSeconds: number;
  grafanaUrl: string | null;
  cluster?: { name: string; config: Cluster };
}

/** Options every Prometheus-reading command takes (`analyze`, `status`). */
export const TELEMETRY_OPTIONS: readonly OptionSpec[] = [
  {
    name: 'prometheus',
    type: 'string',
    value: 'URL',
    description: 'Prometheus to query',
    default: "the cluster's prometheus_url",
    env: 'TOPO_PROMETHEUS_URL',
  },
  {
    name: 'cluster',
    type: 'string',
    value: 'NAME',
    description: 'cluster of clusters.yaml (its Prometheus, Grafana and time scale)',
  },
  CLUSTERS_OPTION,
  {
    name: 'time-scale',
    type: 'number',
    positive: true,
    value: 'S',
    description: 'time compression of the runs (the twin runs 60x)',
    default: "the cluster's time_scale, else 1",
  },
  {
    name: 'step',
    type: 'number',
    positive: true,
    value: 'SECONDS',
    description:
      'query step in seconds: at most one run-minute (60 ÷ time-scale), the width of the start cohorts decisions compare; a coarser step is refused',
    default: '5, or 60 ÷ time-scale when shorter (1 at 60x)',
  },
  {
    name: 'grafana',
    type: 'string',
    value: 'URL',
    description: 'Grafana base URL for the links',
    default: "the cluster's grafana_url",
  },
];

/** The telemetry options of a parse as the record `telemetryOptions` reads (numbers already checked). */
export function telemetryValues(parsed: Parsed): Record<string, string> {
  const out: Record<string, string> = {};
  for (const o of TELEMETRY_OPTIONS) {
    const v = parsed.values[o.name];
    if (v !== undefined && typeof v !== 'boolean') out[o.name] = String(v);
  }
  return out;
}

/** Prometheus, time scale and scrape step from --prometheus/--time-scale/--step or the cluster's entry. */
export function telemetryOptions(
  options: Record<string, string>,
  io: CliIO,
  clusterName?: string,
): TelemetryOptions {
  const file = resolve(io.cwd, options.clusters ?? io.env.TOPO_CLUSTERS_FILE ?? 'topologies/clusters.yaml');
  let cluster: { name: string; config: Cluster } | undefined;
  const name = options.cluster ?? clusterName;
  if (name) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new ConfigError(
        `cannot read the clusters file ${file}: ${(e as Error).message} (set --clusters or TOPO_CLUSTERS_FILE)`,
      );
    }
    const checked = checkClusters(text, file);
    if (!checked.value) throw new ConfigError(checked.issues.map(formatIssue).join('\n'));
    const config = checked.value.clusters[name];
    if (!config)
      throw new ConfigError(
        `${file}: no cluster "${name}" (known: ${Object.keys(checked.value.clusters).join(', ') || 'none'})`,
      );
    cluster = { name, config };
  }
  const url = options.prometheus ?? cluster?.config.prometheus_url ?? io.env.TOPO_PROMETHEUS_URL;
  if (!url)
    throw new UsageError(
      'no Prometheus: pass --prometheus <url>, --cluster <name>, or set TOPO_PROMETHEUS_URL',
    );
  const timeScale = Number(options['time-scale'] ?? cluster?.config.time_scale ?? 1);
  if (!(timeScale > 0))
    throw new UsageError(`--time-scale must be a positive number, got ${options['time-scale']}`);
  const stepSeconds = options.step === undefined ? defaultStepSeconds(timeScale) : Number(options.step);
  if (!(stepSeconds > 0))
    throw new UsageError(`--step must be a positive number of seconds, got ${options.step}`);
  const coarse = coarseStep(stepSeconds, timeScale);
  if (coarse) throw new UsageError(coarse);
  return {
    prometheus: createPrometheusClient({ baseUrl: url }),
    timeScale,
    stepSeconds,
    grafanaUrl: options.grafana ?? cluster?.config.grafana_url ?? null,
    cluster,
  };
}

/**
 * A run without a verdict's data may simply be young; a run_name that no series carries at all is a
 * wrong name (exit 1, said plainly), not a run that is "measuring".
 */
async function assertSeriesExist(
  prometheus: PrometheusClient,
  runName: string,
  atTs: number,
  minutes: number,
  prefix = '',
): Promise<void> {
  const found = await prometheus.instant(
    `count(last_over_time({${anyRunSelector(runName)}}[${Math.ceil(minutes)}m]))`,
    atTs,
  );
  if (found.series.length > 0) return;
  throw new FindingError(
    `${prefix}no series in Prometheus at ${prometheus.baseUrl} has run_name="${runName}" in the ${minutes} minutes before ${new Date(atTs * 1000).toISOString()}: check the run name (\`topo jobs <experiment>\` lists them), the Prometheus, or --minutes`,
  );
}

// --- options of `analyze` only (kept apart from the shared telemetry options) ---

interface AnalyzeArgs {
  options: Record<string, string>;
  runName: string;
  against: string | undefined;
  atTs: number | null;
  inFlight: number | null;
  /** `--min-improvement` (with an experiment: only when given, over the experiment's). */
  minImprovement: number | undefined;
  minutes: number;
  json: boolean;
}

/** The arguments of `topo analyze`, checked. */
function analyzeArgs(specs: readonly OptionSpec[], args: string[], io: CliIO): AnalyzeArgs {
  const parsed = parseOptions(specs, args, io.env);
  const options = telemetryValues(parsed);
  for (const name of ANALYZE_OPTIONS) {
    const v = parsed.values[name];
    if (v !== undefined && typeof v !== 'boolean') options[name] = String(v);
  }
  const [runName, extra] = parsed.positionals;
  if (!runName || extra)
    throw new UsageError('give exactly one run name (the run_name label of its metrics)');
  const against = options.against;
  for (const name of against === undefined ? [runName] : [runName, against])
    try {
      anyRunSelector(name);
    } catch (error) {
      throw new UsageError(`${name === runName ? '' : '--against: '}${(error as Error).message}`);
    }
  if (against === runName) throw new UsageError('--against names the run itself: give another run');
  const given = options['min-improvement'];
  const minImprovement = given === undefined ? undefined : Number(given);
  if (minImprovement !== undefined && !(minImprovement > 0 && minImprovement < 1))
    throw new UsageError(`--min-improvement must be a fraction between 0 and 1 (0.02 is 2%), got ${given}`);
  const json = !!parsed.values.json;
  return {
    options,
    runName,
    against,
    ...analyzeOptions(options),
    minImprovement,
    minutes: num(parsed, 'minutes') ?? 360,
    json,
  };
}

/**
 * The run's experiment as the monitor reads it: its settings (`--min-improvement` over them), the
 * record's references and its jobs from its cluster's Slurm (when reachable: else judged from
 * Prometheus alone, with a warning).
 */
async function knownExperiment(
  io: CliIO,
  experiment: Experiment,
  t: TelemetryOptions,
  minImprovement: number | undefined,
): Promise<KnownExperiment> {
  const x = minImprovement === undefined ? experiment : { ...experiment, min_improvement: minImprovement };
  const refs = recordReferencesOf(io.cwd, experiment.experiment_id);
  if (!t.cluster) return { experiment: x, ...refs, jobs: [] };
  const slurm = slurmClientForCluster(t.cluster.name, t.cluster.config, { env: io.env });
  try {
    return { experiment: x, ...refs, jobs: await experimentJobs(slurm, experiment.experiment_id) };
  } catch (error) {
    io.stderr(
      `warning: Slurm of ${t.cluster.name} unreachable (${(error as Error).message}): judged from Prometheus alone\n`,
    );
    return { experiment: x, ...refs, jobs: [] };
  } finally {
    await slurm.close();
  }
}

/** A run without any series is a wrong name (exit 1, said plainly), not a young run. */
async function checkSeries(prometheus: PrometheusClient, a: AnalyzeArgs, r: AnalyzeRunResult): Promise<void> {
  if (r.analysis?.startTs === null) await assertSeriesExist(prometheus, a.runName, r.atTs, a.minutes);
  if (r.reference?.analysis?.startTs === null)
    await assertSeriesExist(prometheus, a.against as string, r.atTs, a.minutes, '--against: ');
}

/** `--json`: the judgement's observation (its verdict, failure and Decision), as schemas/cli/analyze.schema.json says. */
function analyzeJson(r: AnalyzeRunResult): string {
  const doc = {
    schema_version: 1,
    observation: r.judgement.observation,
    opportunities: r.analysis?.opportunities ?? [],
    queries: r.telemetry.queries,
    judged_at: new Date(r.atTs * 1000).toISOString(),
    ended: r.ended,
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** The monitor's comment of the run, from its judgement. */
function analyzeComment(a: AnalyzeArgs, r: AnalyzeRunResult, grafanaUrl: string | null): string {
  const { analysis, judgement } = r;
  return renderMonitorComment({
    experimentId: experimentIdOfRun(a.runName),
    candidate: candidateOfRunName(a.runName) ?? a.runName,
    runName: a.runName,
    state: judgement.state ?? 'starting',
    // its job as the monitor's comment names it (before: "No Slurm job" for a RUNNING one)
    ...jobOfView(r.job),
    stoppedBy: judgement.stoppedBy ?? null,
    timeline: [],
    observation: judgement.observation,
    chart: analysis?.chart,
    opportunities: analysis?.opportunities,
    queries: r.telemetry.queries,
    grafanaUrl,
    timeRange: analysis?.startTs ? { fromMs: analysis.startTs * 1000, toMs: null } : null,
    baseline: againstFigure(a.against, r.reference),
  });
}
/**
 * A run of a topo experiment the checkout does not hold is judged from its samples alone: with the
 * default settings (or the flags), not its experiment's, and without its job. Said, not hidden:
 * the same pair may then read otherwise than `topo status` reads it in the experiment's checkout.
 */
export function aloneNote(runName: string): string | null {
  const id = experimentIdOfRun(runName);
  if (!id) return null;
  return `experiment ${id} is not in this checkout (topologies/${id}/experiment.yaml): ${runName} is judged from its samples alone, with the default settings (min_improvement ${100 * EXPERIMENT_DEFAULTS.minImprovement}%, the ${EXPERIMENT_DEFAULTS.maxDecisionMinutes}-minute decision horizon, AlpaSim's wall time, no rollout count) or the flags given, not its experiment's; run topo analyze in the experiment's checkout to judge it as topo status does`;
}

const ANALYZE_OPTIONS = ['at', 'in-flight', 'against', 'min-improvement'] as const;

/** `--at <ISO | epoch>` and `--in-flight N`, checked. */
export function analyzeOptions(options: Record<string, string>): {
  atTs: number | null;
  inFlight: number | null;
} {
  let atTs: number | null = null;
  if (options.at !== undefined) {
    atTs = parseAt(options.at);
    if (atTs === null)
      throw new UsageError(
        `--at must be an ISO 8601 time (2026-01-01T12:00:00Z) or unix seconds, got ${JSON.stringify(options.at)}`,
      );
  }
  let inFlight: number | null = null;
  if (options['in-flight'] !== undefined) {
    inFlight = Number(options['in-flight']);
    if (!(Number.isInteger(inFlight) && inFlight > 0))
      throw new UsageError(
        `--in-flight must be a positive whole number of rollouts, got ${options['in-flight']}`,
      );
  }
  return { atTs, inFlight };
}

/** The job's lines of the comment: its id and Slurm state (the final one once it ended). */
function jobOfView(job: RunJob | null): Pick<CandidateView, 'jobId' | 'slurmState' | 'finalJobState'> {
  if (!job) return {};
  return isLive(job.status)
    ? { jobId: job.jobId, slurmState: job.state }
    : { jobId: job.jobId, finalJobState: job.state };
}

/** The `--against` run as the comment draws it: at its judgement's figure. */
function againstFigure(
  name: string | undefined,
  reference: AnalyzeRunResult | undefined,
): CandidateView['baseline'] {
  const f = reference?.judgement.figure;
  return name && f ? { name, secondsPerRollout: f.value } : null;
}

export const analyzeCommand: Command = {
  name: 'analyze',
  summary: 'Analyse one run from Prometheus',
  help: {
    synopsis: 'topo analyze <run_name> [options]',
    description:
      "Reads any run from Prometheus (runs launched by hand or by AlpaSim's scripts too), judges it with the detector as of --at (default now, or the run's end once it ended) and prints the monitor comment (Markdown) or, with --json, the observation (schemas/cli/analyze.schema.json). A run of an experiment of this checkout is judged within it, as `topo status` judges it; a topo run whose experiment the checkout does not hold is judged from its samples alone with the default settings (or the flags), and a note on stderr says so. Exit 1 while the run has no data yet.",
    options: [
      JSON_OPTION,
      ...TELEMETRY_OPTIONS,
      {
        name: 'minutes',
        type: 'number',
        positive: true,
        value: 'M',
        description: 'how far back to read',
        default: '360',
      },
      {
        name: 'at',
        type: 'string',
        value: 'ISO|EPOCH',
        description: 'judge the run as of this moment (ISO 8601 time or unix seconds)',
        default: "now, or the run's last sample once it ended",
      },
      {
        name: 'in-flight',
        type: 'integer',
        min: 1,
        value: 'N',
        description:
          "rollouts in flight (the topology's capacity) for Little's law when the run does not export alpasim_renderer_active_rollouts",
      },
      {
        name: 'against',
        type: 'string',
        value: 'RUN_NAME',
        description:
          "decide the run against another one (a baseline run), judged as of the same moment (each as of its own end once it ended, as `topo status` reads them), with the monitor's decision (the same function and defaults: one-sided alpha-spending boundaries over 120 minutes): better, worse, equivalent, not-better or measuring",
      },
      {
        name: 'min-improvement',
        type: 'number',
        positive: true,
        value: 'FRACTION',
        description: 'with --against: the smallest relative gain that counts as better',
        default: '0.02',
      },
    ],
    examples: [
      'topo analyze topo-topology-opt-vavam-ord-20261202-baseline-0123abcd --cluster ord',
      'topo analyze my-hand-run --prometheus http://127.0.0.1:9093 --at 2026-12-01T12:00:00Z --json',
      'topo analyze my-hand-run-2gpu --against my-hand-run --prometheus http://127.0.0.1:9093',
    ],
  },
  async run(args, io) {
    const a = analyzeArgs(analyzeCommand.help.options, args, io);
    // a run of an experiment of this checkout is judged within it, as the monitor judges it
    const experiment = experimentOfRun(io, a.runName);
    const alone = experiment ? null : aloneNote(a.runName);
    if (alone) io.stderr(`note: ${alone}\n`);
    const t = telemetryOptions(a.options, io, experiment?.cluster);
    await ensurePrometheus(t.prometheus);
    const known = experiment ? await knownExperiment(io, experiment, t, a.minImprovement) : undefined;
    const result = await analyzeRun({
      prometheus: t.prometheus,
      runName: a.runName,
      timeScale: t.timeScale,
      stepSeconds: t.stepSeconds,
      nowTs: Date.now() / 1000,
      atTs: a.atTs,
      minutes: a.minutes,
      inFlight: a.inFlight,
      ...(known ? { known } : { settings: { min_improvement: a.minImprovement } }),
      ...(a.against !== undefined ? { against: a.against } : {}),
    });
    await checkSeries(t.prometheus, a, result);
    if (result.ended && !a.json)
      io.stderr(`the run has ended: judged as of its end, ${new Date(result.atTs * 1000).toISOString()}\n`);
    for (const e of result.telemetry.errors) io.stderr(`warning: ${e.quantity}: ${e.message}\n`);
    io.stdout(a.json ? analyzeJson(result) : `${analyzeComment(a, result, t.grafanaUrl)}\n`);
    return result.analysis?.startTs == null ? EXIT.findings : EXIT.ok;
  },
};
