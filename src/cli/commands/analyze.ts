// `topo analyze <run_name>`: one run read from Prometheus, judged by the detector and the analysis,
// printed as the monitor's comment (Markdown) or as the observation JSON.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { RunAnalysis } from '../../analysis/observe.js';
import type { CandidateState } from '../../report/pr-comment.js';
import { renderMonitorComment } from '../../report/pr-comment.js';
import { createPrometheusClient, type PrometheusClient } from '../../telemetry/prometheus.js';
import { anyRunSelector } from '../../telemetry/queries.js';
import { checkClusters } from '../../topology/files.js';
import { formatIssue } from '../../topology/issues.js';
import type { Cluster } from '../../types/generated/clusters.js';
import { analyzeRun, parseAt } from '../../usecases/analyze-run.js';
import { parseArgs } from '../args.js';
import { type CliIO, type Command, UsageError } from '../command.js';

export interface TelemetryOptions {
  prometheus: PrometheusClient;
  timeScale: number;
  stepSeconds: number;
  grafanaUrl: string | null;
  cluster?: { name: string; config: Cluster };
}

/** Options every Prometheus-reading command takes (`analyze`, `status`). */
export const TELEMETRY_OPTIONS = [
  'prometheus',
  'cluster',
  'clusters',
  'time-scale',
  'step',
  'grafana',
] as const;

/** Parsed with the shared strict parser; options as a record for `telemetryOptions`. */
export function parseTelemetryArgs(args: string[], flags: readonly string[], valued: readonly string[]) {
  const parsed = parseArgs(args, flags, [...TELEMETRY_OPTIONS, ...valued]);
  return { positional: parsed.positional, options: Object.fromEntries(parsed.values), flags: parsed.flags };
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
      throw new UsageError(
        `cannot read the clusters file ${file}: ${(e as Error).message} (set --clusters or TOPO_CLUSTERS_FILE)`,
      );
    }
    const checked = checkClusters(text, file);
    if (!checked.value) throw new Error(checked.issues.map(formatIssue).join('\n'));
    const config = checked.value.clusters[name];
    if (!config)
      throw new UsageError(
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
  const stepSeconds = Number(options.step ?? (timeScale > 1 ? 1 : 5));
  if (!(stepSeconds > 0))
    throw new UsageError(`--step must be a positive number of seconds, got ${options.step}`);
  return {
    prometheus: createPrometheusClient({ baseUrl: url }),
    timeScale,
    stepSeconds,
    grafanaUrl: options.grafana ?? cluster?.config.grafana_url ?? null,
    cluster,
  };
}

/** The monitor-like state of a run from its verdict alone (no Slurm). */
export function stateFromVerdict(a: RunAnalysis): CandidateState {
  switch (a.observation.verdict.state) {
    case 'no-data':
      return 'starting';
    case 'warming':
      return 'warming';
    case 'stable':
    case 'cyclic':
      return 'stable';
    case 'unhealthy':
      return 'failed';
    default:
      return 'stabilising';
  }
}

// --- options of `analyze` only (kept apart from the shared telemetry options) ---
const ANALYZE_OPTIONS = ['at', 'in-flight'] as const;

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

export const analyzeCommand: Command = {
  name: 'analyze',
  summary: 'Analyse one run from Prometheus',
  usage:
    'topo analyze <run_name> [--json] [--at ISO|EPOCH] [--in-flight N] [--prometheus URL | --cluster NAME [--clusters FILE]] [--time-scale S] [--step SECONDS] [--minutes M]',
  async run(args, io) {
    const { positional, options, flags } = parseTelemetryArgs(
      args,
      ['json'],
      ['minutes', ...ANALYZE_OPTIONS],
    );
    const [runName, extra] = positional;
    if (!runName || extra)
      throw new UsageError('give exactly one run name (the run_name label of its metrics)');
    const t = telemetryOptions(options, io);
    const minutes = Number(options.minutes ?? 360);
    if (!(minutes > 0)) throw new UsageError(`--minutes must be positive, got ${options.minutes}`);
    const { atTs, inFlight } = analyzeOptions(options);
    try {
      anyRunSelector(runName);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    const result = await analyzeRun({
      prometheus: t.prometheus,
      runName,
      timeScale: t.timeScale,
      stepSeconds: t.stepSeconds,
      nowTs: Date.now() / 1000,
      atTs,
      minutes,
      inFlight,
    });
    const { analysis, telemetry } = result;
    const judgedAt = new Date(result.atTs * 1000).toISOString();
    // JSON carries it in the document (stdout and stderr may be read together); people get a note
    if (result.ended && !flags.has('json'))
      io.stderr(`the run has ended: judged as of its last sample, ${judgedAt}\n`);
    for (const e of telemetry.errors) io.stderr(`warning: ${e.quantity}: ${e.message}\n`);
    if (flags.has('json')) {
      io.stdout(
        `${JSON.stringify({ observation: analysis.observation, opportunities: analysis.opportunities, queries: telemetry.queries, judged_at: judgedAt, ended: result.ended }, null, 2)}\n`,
      );
    } else {
      const [, experimentId = '', candidate = runName] =
        /^topo-(.+-[0-9]{8})-(.+)-[0-9a-f]{8}$/.exec(runName) ?? [];
      io.stdout(
        `${renderMonitorComment({
          experimentId,
          candidate,
          runName,
          state: stateFromVerdict(analysis),
          timeline: [],
          observation: analysis.observation,
          comparisons: [],
          chart: analysis.chart,
          opportunities: analysis.opportunities,
          queries: telemetry.queries,
          grafanaUrl: t.grafanaUrl,
          timeRange: analysis.startTs ? { fromMs: analysis.startTs * 1000, toMs: null } : null,
        })}\n`,
      );
    }
    return analysis.startTs === null ? 1 : 0;
  },
};
