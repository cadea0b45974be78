// `topo status <experiment> [--watch]`: the experiment's runs from Slurm (one call) and Prometheus
// (one query per quantity), each judged by the detector, as a table; --watch refreshes it.
import { observeRun } from '../../analysis/observe.js';
import { round } from '../../analysis/series.js';
import { slurmMonitorPort } from '../../monitor/adapters.js';
import { candidateState } from '../../monitor/judge.js';
import { slurmClientForCluster } from '../../slurm/for-cluster.js';
import { isLive } from '../../slurm/types.js';
import { experimentSelector, fetchTelemetry } from '../../telemetry/queries.js';
import { flag, num, parseOptions, str } from '../args.js';
import type { Command } from '../command.js';
import { ConfigError, EXIT, UsageError } from '../errors.js';
import { ensurePrometheus } from '../services.js';
import { TELEMETRY_OPTIONS, telemetryOptions, telemetryValues } from './analyze.js';
import { loadExperiment } from './experiments.js';
import { JSON_OPTION, TOPOLOGIES_OPTION } from './options.js';

/** One candidate of `status --json` (schemas/cli/status.schema.json). */
interface StatusRow {
  candidate: string;
  run_name: string;
  job_id: string;
  slurm_state: string;
  state: string | null;
  verdict: string | null;
  projected_seconds_per_rollout: { value: number; low: number; high: number } | null;
  seconds_per_rollout_full_run: number | null;
  seconds_per_rollout_5m: number | null;
  completed_rollouts: number | null;
  bottleneck: { kind: string; service: string | null } | null;
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
      "One table of the experiment's jobs: Slurm state (one call), the monitor's candidate state, the detector's verdict and metrics from Prometheus. --watch refreshes it; --json prints one snapshot per refresh (schemas/cli/status.schema.json), one JSON document per line.",
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
    let selector: string;
    try {
      selector = experimentSelector(id);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const experiment = loadExperiment(io, id, str(parsed, 'topologies') ?? 'topologies');
    const t = telemetryOptions(options, io, experiment.cluster);
    if (!t.cluster) throw new ConfigError(`cluster ${experiment.cluster} not found`);
    const json = flag(parsed, 'json');
    await ensurePrometheus(t.prometheus);
    const slurm = slurmClientForCluster(t.cluster.name, t.cluster.config, { env: io.env });
    const port = slurmMonitorPort(slurm);
    const interval = num(parsed, 'interval') ?? 10;
    const count = num(parsed, 'count') ?? (flag(parsed, 'watch') ? Number.POSITIVE_INFINITY : 1);
    try {
      for (let i = 0; i < count; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, interval * 1000));
        const jobs = await port.jobs(id);
        const now = Math.floor(Date.now() / 1000);
        const started = jobs.filter((j) => j.startTs);
        const start = started.length ? Math.min(...started.map((j) => j.startTs as number)) : now;
        const telemetry = started.length
          ? await fetchTelemetry(
              t.prometheus,
              selector,
              {
                start: Math.floor(start / t.stepSeconds) * t.stepSeconds,
                end: now,
                stepSeconds: t.stepSeconds,
              },
              { timeScale: t.timeScale, scrapeSeconds: t.stepSeconds },
            )
          : undefined;
        const snapshot: StatusRow[] = [];
        const rows = [
          [
            'candidate',
            'job',
            'slurm',
            'state',
            'verdict',
            'projected s/rollout',
            'full-run',
            '5m',
            'rollouts',
            'bottleneck',
          ],
        ];
        for (const j of jobs.sort((a, b) => Number(a.jobId) - Number(b.jobId))) {
          const a = j.startTs
            ? observeRun({
                runName: j.name,
                series: (telemetry?.byRun.get(j.name) ?? {}) as Parameters<typeof observeRun>[0]['series'],
                timeScale: t.timeScale,
                nowTs: j.endTs ? Math.min(now, j.endTs) : now,
                stepSeconds: t.stepSeconds,
                jobStartTs: j.startTs,
                settings: experiment.stabilisation,
                ended: j.endTs != null && !isLive(j.state),
              })
            : undefined;
          const v = a?.observation.verdict;
          const m = a?.observation.stable_metrics;
          const p = v?.projected_full_run;
          const b = m?.bottleneck;
          const state =
            candidateState(
              j,
              true,
              a,
              // the monitor cancels on a stable verdict or a decision: a cancelled run is stopped, not failed
              j.state === 'CANCELLED' &&
                (experiment.stop_when_stable === true || experiment.stop_when_decided !== false),
            ) ?? null;
          snapshot.push({
            candidate: j.name.replace(`topo-${id}-`, ''),
            run_name: j.name,
            job_id: j.jobId,
            slurm_state: j.state,
            state,
            verdict: v?.state ?? null,
            projected_seconds_per_rollout: p ? { value: p.value, low: p.low, high: p.high } : null,
            seconds_per_rollout_full_run: m?.seconds_per_rollout_full_run ?? null,
            seconds_per_rollout_5m: m?.seconds_per_rollout_5m ?? null,
            completed_rollouts: m?.completed_rollouts ?? null,
            bottleneck: b ? { kind: b.kind, service: b.service ?? null } : null,
          });
          rows.push([
            j.name.replace(`topo-${id}-`, ''),
            j.jobId,
            j.state,
            state ?? '—',
            v?.state ?? '—',
            p ? `${round(p.value, 3)} [${round(p.low, 3)}, ${round(p.high, 3)}]` : '—',
            m?.seconds_per_rollout_full_run != null ? String(round(m.seconds_per_rollout_full_run, 3)) : '—',
            m?.seconds_per_rollout_5m != null ? String(round(m.seconds_per_rollout_5m, 3)) : '—',
            m?.completed_rollouts != null ? String(m.completed_rollouts) : '—',
            b ? `${b.kind}${b.service ? ` ${b.service}` : ''}` : '—',
          ]);
        }
        const warnings = (telemetry?.errors ?? []).map((e) => `${e.quantity}: ${e.message}`);
        if (json) {
          const doc = {
            schema_version: 1,
            experiment_id: id,
            cluster: t.cluster.name,
            at: new Date(now * 1000).toISOString(),
            candidates: snapshot,
            warnings,
          };
          io.stdout(`${JSON.stringify(doc)}\n`);
          continue;
        }
        const clear = flag(parsed, 'watch') && io.isTTY ? '\x1b[2J\x1b[H' : '';
        const header = `${id} — ${new Date(now * 1000).toISOString().slice(0, 19)}Z — ${jobs.length} job(s)`;
        io.stdout(
          `${clear}${header}\n${jobs.length ? table(rows) : 'no jobs of this experiment in Slurm'}\n`,
        );
        for (const w of warnings) io.stderr(`warning: ${w}\n`);
      }
    } finally {
      await slurm.close();
    }
    return EXIT.ok;
  },
};
