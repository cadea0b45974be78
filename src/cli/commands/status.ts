// `topo status <experiment> [--watch]`: the experiment's runs from Slurm (one call) and Prometheus
// (one query per quantity), each judged by the detector, as a table; --watch refreshes it.
import type { Figure } from '../../analysis/figure.js';
import { referenceText } from '../../analysis/reference.js';
import { round } from '../../analysis/series.js';
import type { RunJob } from '../../judge/job.js';
import type { ExperimentRun, Judgement } from '../../judge/judge.js';
import type { ExperimentTelemetry } from '../../judge/telemetry.js';
import { slurmMonitorPort } from '../../monitor/adapters.js';
import { conflictNote } from '../../monitor/judge.js';
import { slurmClientForCluster } from '../../slurm/for-cluster.js';
import type { PrometheusClient } from '../../telemetry/prometheus.js';
import { experimentSelector } from '../../telemetry/queries.js';
import type { Experiment } from '../../types/generated/experiment.js';
import type { DecisionReference, Interval } from '../../types/generated/metrics.js';
import { judgeExperiment, runsOfJobs } from '../../usecases/analyze-run.js';
import { flag, num, parseOptions, str } from '../args.js';
import type { Command } from '../command.js';
import { ConfigError, EXIT, UnreachableError, UsageError } from '../errors.js';
import { ensurePrometheus } from '../services.js';
import { TELEMETRY_OPTIONS, type TelemetryOptions, telemetryOptions, telemetryValues } from './analyze.js';
import { loadExperiment, recordReferencesOf } from './experiments.js';
import { JSON_OPTION, TOPOLOGIES_OPTION } from './options.js';

/** One candidate of `status --json` (schemas/cli/status.schema.json). */
export interface StatusRow {
  candidate: string;
  run_name: string;
  job_id: string;
  slurm_state: string;
  state: string | null;
  verdict: string | null;
  /** The judge's Decision (src/judge), as the monitor's comment shows it. */
  decision: { state: string; reference: DecisionReference; relative_change: Interval | null } | null;
  /** THE figure of its judgement (what every surface shows for it); a reading has no interval. */
  seconds_per_rollout: { value: number; low: number | null; high: number | null; basis: string } | null;
  projected_seconds_per_rollout: { value: number; low: number; high: number } | null;
  seconds_per_rollout_full_run: number | null;
  seconds_per_rollout_5m: number | null;
  completed_rollouts: number | null;
  bottleneck: { kind: string; service: string | null } | null;
}

const HEADER = [
  'candidate',
  'job',
  'slurm',
  'state',
  'verdict',
  'decision',
  's/rollout',
  'projected s/rollout',
  'full-run',
  '5m',
  'rollouts',
  'bottleneck',
];

/**
 * Every job of the experiment judged by the judge as one monitor pass judges it (src/usecases
 * analyze-run.ts judgeExperiment over src/judge readRuns): the same series, clock, wall minutes,
 * expected rollouts and reference.
 */
export async function judgeJobs(input: {
  experiment: Experiment;
  jobs: RunJob[];
  now: number;
  t: TelemetryOptions;
  cwd: string;
  /** Judge against the record's references as they were before this candidate's entry. */
  without?: string;
}): Promise<{ rows: StatusRow[]; telemetry: ExperimentTelemetry | undefined; judged: JudgedJob[] }> {
  const { experiment, now, t } = input;
  const references = recordReferencesOf(input.cwd, experiment.experiment_id, input.without);
  const known = { experiment, jobs: input.jobs, ...references };
  const { read, judgements } = await judgeExperiment(t, known, now);
  const rows = judgements.map((j, i) => rowOf(read.runs[i] as ExperimentRun, j));
  const judged = judgements.map((judgement, i) => ({
    job: (read.runs[i] as ExperimentRun).run.job as RunJob,
    judgement,
  }));
  return { rows, telemetry: read.telemetry, judged };
}

/** A job of the experiment and its judgement. */
export interface JudgedJob {
  job: RunJob;
  judgement: Judgement;
}

/** A run's figure as `--json` gives it (status, watch); a reading has no interval: none rather than a zero-width one. */
export function figureJson(f: Figure | null): StatusRow['seconds_per_rollout'] {
  if (!f) return null;
  return f.basis === 'reading'
    ? { value: f.value, low: null, high: null, basis: f.basis }
    : { value: f.value, low: f.low, high: f.high, basis: f.basis };
}

function rowOf(r: ExperimentRun, j: Judgement): StatusRow {
  const job = r.run.job as RunJob;
  const analysed = j.observed.analysis ? j.observation : undefined;
  const v = analysed?.verdict;
  const m = analysed?.stable_metrics;
  const p = v?.projected_full_run;
  const b = m?.bottleneck;
  const d = j.decision;
  const f = j.figure;
  return {
    candidate: r.candidate.candidate,
    run_name: r.run.runName,
    job_id: job.jobId,
    slurm_state: job.state,
    state: j.state,
    verdict: v?.state ?? null,
    decision: d
      ? {
          state: d.state,
          reference: { ...d.reference, pr: d.reference.pr ?? null },
          relative_change: d.relative_change ?? null,
        }
      : null,
    seconds_per_rollout: figureJson(f),
    projected_seconds_per_rollout: p ? { value: p.value, low: p.low, high: p.high } : null,
    seconds_per_rollout_full_run: m?.seconds_per_rollout_full_run ?? null,
    seconds_per_rollout_5m: m?.seconds_per_rollout_5m ?? null,
    completed_rollouts: m?.completed_rollouts ?? null,
    bottleneck: b ? { kind: b.kind, service: b.service ?? null } : null,
  };
}

/**
 * Why Prometheus cannot be read now (one line), else null: `status` then shows what Slurm knows, each
 * run's Slurm state with nothing judged, and says so (exit 3), rather than nothing at all.
 */
async function prometheusOutage(prometheus: PrometheusClient): Promise<string | null> {
  try {
    await ensurePrometheus(prometheus);
    return null;
  } catch (error) {
    if (error instanceof UnreachableError) return error.message;
    throw error;
  }
}

/** The experiment's jobs as Slurm lists them, nothing judged: what status shows while Prometheus is down. */
function slurmRows(experiment: Experiment, jobs: RunJob[]): StatusRow[] {
  return runsOfJobs({ experiment, jobs }).map((r) => ({
    candidate: r.candidate.candidate,
    run_name: r.runName,
    job_id: (r.job as RunJob).jobId,
    slurm_state: (r.job as RunJob).state,
    state: null,
    verdict: null,
    decision: null,
    seconds_per_rollout: null,
    projected_seconds_per_rollout: null,
    seconds_per_rollout_full_run: null,
    seconds_per_rollout_5m: null,
    completed_rollouts: null,
    bottleneck: null,
  }));
}

/** One refresh: the rows, warnings and the outage that kept the metrics out (null: none). */
async function snapshot(input: {
  experiment: Experiment;
  port: ReturnType<typeof slurmMonitorPort>;
  now: number;
  t: TelemetryOptions;
  cwd: string;
}): Promise<{ jobs: RunJob[]; rows: StatusRow[]; warnings: string[]; unavailable: string | null }> {
  const id = input.experiment.experiment_id;
  const jobs = await input.port.jobs(id);
  const unavailable = await prometheusOutage(input.t.prometheus);
  const judged = unavailable ? null : await judgeJobs({ ...input, jobs });
  const warnings = [
    ...(judged?.telemetry?.errors ?? []).map((e) => `${e.quantity}: ${e.message}`),
    // a job under a run's name whose comment names another Request: not the run (invariant 21)
    ...(input.port.conflicts?.(id) ?? []).map((j) => `${j.name}: ${conflictNote(j)}`),
  ];
  return { jobs, rows: judged?.rows ?? slurmRows(input.experiment, jobs), warnings, unavailable };
}

/** A row of the table. */
function cells(r: StatusRow): string[] {
  const p = r.projected_seconds_per_rollout;
  const n = (x: number | null) => (x != null ? String(round(x, 3)) : '—');
  const interval = (i: { value: number; low: number | null; high: number | null } | null) =>
    !i ? '—' : i.low === null || i.high === null ? n(i.value) : `${n(i.value)} [${n(i.low)}, ${n(i.high)}]`;
  return [
    r.candidate,
    r.job_id,
    r.slurm_state,
    r.state ?? '—',
    r.verdict ?? '—',
    r.decision ? `${r.decision.state} vs ${referenceText(r.decision.reference)}` : '—',
    interval(r.seconds_per_rollout),
    interval(p),
    n(r.seconds_per_rollout_full_run),
    n(r.seconds_per_rollout_5m),
    r.completed_rollouts != null ? String(r.completed_rollouts) : '—',
    r.bottleneck ? `${r.bottleneck.kind}${r.bottleneck.service ? ` ${r.bottleneck.service}` : ''}` : '—',
  ];
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export const statusCommand: Command = {
  name: 'status',
  summary: 'Show the live candidates of an experiment',
  help: {
    synopsis: 'topo status <experiment> [options]',
    description:
      "One table of the experiment's jobs: Slurm state (one call), the monitor's candidate state, the detector's verdict and metrics from Prometheus. --watch refreshes it; --json prints one snapshot per refresh (schemas/cli/status.schema.json), one JSON document per line. With Prometheus down it still shows each run's Slurm state (nothing judged), says so and exits 3 (--json: the judged fields null, `unavailable` saying why).",
    options: [
      {
        name: 'watch',
        short: 'w',
        type: 'boolean',
        description: 'refresh until interrupted (or --count times)',
      },
      {
        name: 'interval',
        short: 'i',
        type: 'number',
        min: 1,
        max: 3600,
        value: 'SECONDS',
        description: 'seconds between refreshes',
        default: '10',
      },
      {
        name: 'count',
        type: 'integer',
        min: 1,
        value: 'N',
        description: 'number of refreshes',
        default: '1, or unlimited with --watch',
      },
      TOPOLOGIES_OPTION,
      JSON_OPTION,
      ...TELEMETRY_OPTIONS,
    ],
    examples: [
      'topo status topology-opt-vavam-ord-20261202',
      'topo status topology-opt-vavam-ord-20261202 --watch --interval 30',
      'topo status topology-opt-vavam-ord-20261202 --json | jq .candidates',
    ],
    environment: [{ name: 'TOPO_SSH_KEY', description: 'private key for clusters reached over SSH' }],
  },
  async run(args, io) {
    const parsed = parseOptions(statusCommand.help.options, args, io.env);
    const options = telemetryValues(parsed);
    const [id, extra] = parsed.positionals;
    if (!id || extra) throw new UsageError('give exactly one experiment id');
    try {
      experimentSelector(id); // checks the id before anything is read
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const experiment = loadExperiment(io, id, str(parsed, 'topologies') ?? 'topologies');
    const t = telemetryOptions(options, io, experiment.cluster);
    if (!t.cluster) throw new ConfigError(`cluster ${experiment.cluster} not found`);
    const json = flag(parsed, 'json');
    const slurm = slurmClientForCluster(t.cluster.name, t.cluster.config, { env: io.env });
    const port = slurmMonitorPort(slurm);
    const interval = num(parsed, 'interval') ?? 10;
    const count = num(parsed, 'count') ?? (flag(parsed, 'watch') ? Number.POSITIVE_INFINITY : 1);
    let unavailable: string | null = null;
    try {
      for (let i = 0; i < count; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, interval * 1000));
        const now = Math.floor(Date.now() / 1000);
        const shot = await snapshot({ experiment, port, now, t, cwd: io.cwd });
        unavailable = shot.unavailable;
        if (json) {
          const doc = {
            schema_version: 2,
            experiment_id: id,
            cluster: t.cluster.name,
            at: new Date(now * 1000).toISOString(),
            candidates: shot.rows,
            warnings: shot.warnings,
            unavailable,
          };
          io.stdout(`${JSON.stringify(doc)}\n`);
          continue;
        }
        printTable(io, id, now, shot, flag(parsed, 'watch'));
      }
    } finally {
      await slurm.close();
    }
    // the Slurm states were shown; the metrics were not: still the outage's exit code
    return unavailable ? EXIT.unreachable : EXIT.ok;
  },
};

function printTable(
  io: Parameters<Command['run']>[1],
  id: string,
  now: number,
  shot: Awaited<ReturnType<typeof snapshot>>,
  watch: boolean,
): void {
  const clear = watch && io.isTTY ? '\x1b[2J\x1b[H' : '';
  const header = `${id} — ${new Date(now * 1000).toISOString().slice(0, 19)}Z — ${shot.jobs.length} job(s)`;
  const body = shot.jobs.length
    ? table([HEADER, ...shot.rows.map(cells)])
    : 'no jobs of this experiment in Slurm';
  io.stdout(`${clear}${header}\n${body}\n`);
  if (shot.unavailable)
    io.stderr(
      `topo status: ${shot.unavailable}: the Slurm states above are current; no state, verdict or metric until it answers\n`,
    );
  for (const w of shot.warnings) io.stderr(`warning: ${w}\n`);
}
