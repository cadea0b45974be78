// `topo status <experiment> [--watch]`: the experiment's runs from Slurm (one call) and Prometheus
// (one query per quantity), each judged by the detector, as a table; --watch refreshes it.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { observeRun } from '../../analysis/observe.js';
import { round } from '../../analysis/series.js';
import { slurmClientForCluster } from '../../slurm/for-cluster.js';
import { isLive } from '../../slurm/types.js';
import { experimentSelector, fetchTelemetry } from '../../telemetry/queries.js';
import { checkExperiment } from '../../topology/files.js';
import type { Experiment } from '../../types/generated/experiment.js';
import { candidateState, slurmMonitorPort } from '../../usecases/reconcile.js';
import { type CliIO, type Command, UsageError } from '../command.js';
import { parseTelemetryArgs, telemetryOptions } from './analyze.js';

function loadExperiment(io: CliIO, id: string, dir: string): Experiment {
  const file = join(resolve(io.cwd, dir), id, 'experiment.yaml');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new UsageError(
      `no experiment ${id}: ${file} does not exist (experiments live in <topologies>/<experiment_id>/experiment.yaml)`,
    );
  }
  const checked = checkExperiment(text, file);
  if (!checked.value)
    throw new UsageError(checked.issues.map((i) => `${i.file}:${i.line}: ${i.message}`).join('\n'));
  return checked.value;
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
  usage:
    'topo status <experiment> [--watch [--interval SECONDS] [--count N]] [--topologies DIR] [--clusters FILE] [--prometheus URL] [--time-scale S]',
  async run(args, io) {
    const { positional, options, flags } = parseTelemetryArgs(
      args,
      ['watch'],
      ['interval', 'count', 'topologies'],
    );
    const [id, extra] = positional;
    if (!id || extra) throw new UsageError('give exactly one experiment id');
    const selector = experimentSelector(id);
    const experiment = loadExperiment(io, id, options.topologies ?? 'topologies');
    const t = telemetryOptions(options, io, experiment.cluster);
    if (!t.cluster) throw new UsageError(`cluster ${experiment.cluster} not found`);
    const slurm = slurmClientForCluster(t.cluster.name, t.cluster.config, { env: io.env });
    const port = slurmMonitorPort(slurm);
    const interval = Number(options.interval ?? 10);
    const count = options.count ? Number(options.count) : flags.has('watch') ? Number.POSITIVE_INFINITY : 1;
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
          rows.push([
            j.name.replace(`topo-${id}-`, ''),
            j.jobId,
            j.state,
            candidateState(j, true, a, j.state === 'CANCELLED' && experiment.stop_when_stable === true) ??
              '—',
            v?.state ?? '—',
            p ? `${round(p.value, 3)} [${round(p.low, 3)}, ${round(p.high, 3)}]` : '—',
            m?.seconds_per_rollout_full_run != null ? String(round(m.seconds_per_rollout_full_run, 3)) : '—',
            m?.seconds_per_rollout_5m != null ? String(round(m.seconds_per_rollout_5m, 3)) : '—',
            m?.completed_rollouts != null ? String(m.completed_rollouts) : '—',
            b ? `${b.kind}${b.service ? ` ${b.service}` : ''}` : '—',
          ]);
        }
        const clear = flags.has('watch') && io.isTTY ? '\x1b[2J\x1b[H' : '';
        const header = `${id} — ${new Date(now * 1000).toISOString().slice(0, 19)}Z — ${jobs.length} job(s)`;
        io.stdout(
          `${clear}${header}\n${jobs.length ? table(rows) : 'no jobs of this experiment in Slurm'}\n`,
        );
        for (const e of telemetry?.errors ?? []) io.stderr(`warning: ${e.quantity}: ${e.message}\n`);
      }
    } finally {
      await slurm.close();
    }
    return 0;
  },
};
