// How the bench's in-memory path relates to the Prometheus one: a few runs of a campaign are written
// as OpenMetrics exactly as the verdict bench writes its trace family, backfilled into a real
// Prometheus (promtool tsdb create-blocks-from openmetrics), read back with the monitor's queries
// (fetchTelemetry: the query catalog's rules or raw fallbacks), and judged by observeRun at several
// looks; the verdicts must equal those the bench computes from the in-memory series.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { observeRun, type RunSeries } from '../../src/analysis/observe.js';
import { loadProfile } from '../../src/sim/profile.js';
import { createPrometheusClient } from '../../src/telemetry/prometheus.js';
import { anyRunSelector, fetchTelemetry, type Quantity } from '../../src/telemetry/queries.js';
import type { Topology } from '../../src/types/generated/topology.js';
import { backfill, prometheusOn } from '../prometheus-blocks.js';
import { type RunSpec, writeFamily } from '../trace-family.js';
import { seriesAt, traceSeries } from './series.js';
import { MAX_MINUTES, SCRAPE_SECONDS, World } from './sim.js';
import { build } from './space.js';

const QUANTITIES: Quantity[] = [
  'secondsPerRolloutAvg',
  'rolloutsTotal',
  'rolloutsFailed',
  'elapsed',
  'rolloutDurationSum',
  'rolloutDurationCount',
  'activeRollouts',
];

/** Three runs of the twin's campaign (its base and two builds) as OpenMetrics specs, ending `start`+. */
function checkSpecs(base: Topology, root: string): RunSpec[] {
  const world = new World(loadProfile('twin-balanced', root), 101);
  const topologies = [
    base,
    build(base, { renderer: 1, driver: 8, physics: 4, total: 96, workers: 16 }),
    build(base, { renderer: 0, driver: 4, physics: 2, total: 48, workers: 8 }),
  ];
  return topologies.map((t, i) => ({
    shape: world.run(t).shape,
    seed: 7000 + i,
    factor: 1,
    runName: `campaign-check-${i}`,
    endMinutes: MAX_MINUTES,
    scrapeSeconds: SCRAPE_SECONDS,
  }));
}

/** The verdict (state and projection) of one run at the look `at`, from its series cut there. */
function verdictAt(spec: RunSpec, series: RunSeries, at: number) {
  const verdict = observeRun({
    runName: spec.runName,
    series,
    timeScale: 1,
    nowTs: at,
    stepSeconds: SCRAPE_SECONDS,
    inFlight: spec.shape.inFlight,
    ended: false,
  }).observation.verdict;
  return JSON.stringify([verdict.state, verdict.projected_full_run]);
}

/** Each run read back through the monitor's queries, judged at several looks beside its in-memory series. */
async function compareLooks(
  url: string,
  specs: readonly RunSpec[],
  start: number,
): Promise<{ same: number; looks: number; diffs: string[] }> {
  const client = createPrometheusClient({ baseUrl: url });
  const out = { same: 0, looks: 0, diffs: [] as string[] };
  for (const [i, spec] of specs.entries()) {
    const memory = traceSeries(spec, start);
    const t = await fetchTelemetry(
      client,
      anyRunSelector(spec.runName),
      { start: start - 600, end: start + MAX_MINUTES * 60, stepSeconds: SCRAPE_SECONDS },
      { timeScale: 1, scrapeSeconds: SCRAPE_SECONDS, quantities: QUANTITIES },
    );
    const fromProm = (t.byRun.get(spec.runName) ?? {}) as RunSeries;
    for (const minute of [15, 20, 30, 45, 60]) {
      const at = start + minute * 60;
      const cut: RunSeries = {};
      for (const [q, ss] of Object.entries(fromProm))
        cut[q] = (ss ?? []).map((x) => ({ ...x, points: x.points.filter((p) => p[0] <= at) }));
      const [a, b] = [verdictAt(spec, cut, at), verdictAt(spec, seriesAt(memory, minute), at)];
      out.looks++;
      if (a === b) out.same++;
      else out.diffs.push(`run ${i} @${minute}: Prometheus ${a} vs in memory ${b}`);
    }
  }
  return out;
}

export async function prometheusCheck(base: Topology, root: string, log: (s: string) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'topo-campaign-prom-'));
  let prom: ChildProcess | undefined;
  try {
    const specs = checkSpecs(base, root);
    const start = Math.floor(Date.now() / 1000 / 3600) * 3600 - 6 * 3600;
    const file = join(dir, 'runs.om');
    await writeFamily(specs, file, start);
    const data = join(dir, 'data');
    backfill(file, data);
    const started = await prometheusOn(dir, data);
    prom = started.prom;
    const { same, looks, diffs } = await compareLooks(started.url, specs, start);
    log(
      `Prometheus check: ${same} of ${looks} looks give the same verdict (state and projection) from a real Prometheus (backfilled, read by the monitor's queries) as from the in-memory series${diffs.length ? `; differ: ${diffs.slice(0, 3).join('; ')}` : ''}\n`,
    );
  } finally {
    if (prom?.pid) prom.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    rmSync(dir, { recursive: true, force: true });
  }
}
