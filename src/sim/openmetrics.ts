// A whole run's history as OpenMetrics text for `promtool tsdb create-blocks-from openmetrics`, so hours of
// simulated time reach a real Prometheus in seconds. Samples come from the same prom-client registries the live
// twin serves, stamped with simulated time and the file-SD target labels a scrape would attach.
import { createWriteStream } from 'node:fs';
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import { TARGET_JOBS } from '../catalog/alpasim.js';
import type { Topology } from '../types/generated/topology.js';
import type { TwinProfile } from '../types/generated/twin-profile.js';
import { Simulation } from './engine.js';
import { createRegistries, type TwinRegistries } from './metrics.js';

export interface ExportOptions {
  minutes: number;
  /** Seconds between samples (a scrape interval); default 15. */
  intervalS?: number;
  seed?: number;
  /** Unix seconds of the first sample; default: now minus the run's length. */
  startUnix?: number;
  runName: string;
  runUuid: string;
  totalRollouts?: number;
  node?: string;
  user?: string;
  slurmJobId?: string;
}

interface Family {
  type: string;
  series: Map<string, string[]>;
}

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** Writes the history; resolves to the number of samples (timestamps) written. */
export async function exportOpenMetrics(
  topology: Topology,
  profile: TwinProfile,
  file: string,
  opts: ExportOptions,
): Promise<{ timestamps: number; startUnix: number; endUnix: number; ended?: string }> {
  const sim = new Simulation(topology, profile, {
    ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
    ...(opts.totalRollouts !== undefined ? { totalRollouts: opts.totalRollouts } : {}),
  });
  const interval = opts.intervalS ?? 15;
  const duration = opts.minutes * 60;
  const startUnix = Math.floor(opts.startUnix ?? Date.now() / 1000 - duration - 60);
  const node = opts.node ?? 'twin-node';
  const regs = createRegistries(sim.state, { hostname: node });
  const targets = scrapeTargets(regs, node, opts);
  const families = new Map<string, Family>();
  let timestamps = 0;
  for (let t = 0; t <= duration + 1e-9; t += interval) {
    regs.update(sim.advanceTo(t));
    const ts = startUnix + t;
    for (const { r, labels } of targets)
      for (const metric of await r.getMetricsAsJSON()) addSamples(families, metric, labels, ts);
    timestamps++;
    if (sim.state.ended) break;
  }
  await writeFamilies(file, families);
  return {
    timestamps,
    startUnix,
    endUnix: startUnix + (timestamps - 1) * interval,
    ...(sim.state.ended ? { ended: sim.state.ended.reason } : {}),
  };
}

/** Each registry with the labels a file-SD scrape of it would attach. */
function scrapeTargets(regs: TwinRegistries, node: string, opts: ExportOptions) {
  const base = {
    run_uuid: opts.runUuid,
    run_name: opts.runName,
    user: opts.user ?? 'twin',
    node,
    slurm_job_id: opts.slurmJobId ?? '',
  };
  return [
    ...regs.workers.map((r, i) => ({
      r,
      labels: { ...base, job: TARGET_JOBS.runtime, component: 'runtime', instance: `${node}:${9100 + i}` },
    })),
    { r: regs.node, labels: { ...base, job: TARGET_JOBS.node, instance: `${node}:9200` } },
    { r: regs.process, labels: { ...base, job: TARGET_JOBS.process, instance: `${node}:9201` } },
    { r: regs.dcgm, labels: { ...base, job: TARGET_JOBS.dcgm, instance: `${node}:9202` } },
  ];
}

/** Adds one scrape of one metric at `ts` to its family (counters without their _total suffix). */
function addSamples(
  families: Map<string, Family>,
  metric: MetricObjectWithValues<MetricValue<string>>,
  labels: Record<string, string>,
  ts: number,
): void {
  const type = String(metric.type);
  const familyName = type === 'counter' ? metric.name.replace(/_total$/, '') : metric.name;
  let fam = families.get(familyName);
  if (!fam) {
    fam = { type, series: new Map() };
    families.set(familyName, fam);
  }
  // Histogram points: one key per label set (without le), holding bucket, sum and count lines together.
  const points = new Map<string, string[]>();
  for (const v of metric.values as {
    metricName?: string;
    labels: Record<string, string | number>;
    value: number;
  }[]) {
    const all = { ...v.labels, ...labels };
    const { le, ...rest } = all as Record<string, string | number>;
    const key = JSON.stringify(Object.entries(rest).sort());
    const text = Object.entries(all)
      .map(([k, val]) => `${k}="${escapeLabel(String(val))}"`)
      .join(',');
    const list = points.get(key) ?? [];
    list.push(`${v.metricName ?? metric.name}{${text}} ${v.value} ${ts}`);
    points.set(key, list);
    void le;
  }
  for (const [key, lines] of points) {
    const list = fam.series.get(key) ?? [];
    list.push(lines.join('\n'));
    fam.series.set(key, list);
  }
}

async function writeFamilies(file: string, families: ReadonlyMap<string, Family>): Promise<void> {
  const out = createWriteStream(file);
  const write = (s: string) =>
    new Promise<void>((res) => (out.write(s) ? res() : out.once('drain', () => res())));
  for (const [name, fam] of families) {
    await write(
      `# TYPE ${name} ${fam.type === 'histogram' || fam.type === 'counter' ? fam.type : 'gauge'}\n`,
    );
    for (const lines of fam.series.values()) await write(`${lines.join('\n')}\n`);
  }
  await write('# EOF\n');
  await new Promise<void>((res, rej) => out.end((e?: Error | null) => (e ? rej(e) : res())));
}
