// How the bench's in-memory path relates to the Prometheus one: a few runs of a campaign are written
// as OpenMetrics exactly as the verdict bench writes its trace family, backfilled into a real
// Prometheus (promtool tsdb create-blocks-from openmetrics), read back with the monitor's queries
// (fetchTelemetry: the query catalog's rules or raw fallbacks), and judged by observeRun at several
// looks; the verdicts must equal those the bench computes from the in-memory series.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { observeRun, type RunSeries } from '../../src/analysis/observe.js';
import { loadProfile } from '../../src/sim/profile.js';
import { createPrometheusClient } from '../../src/telemetry/prometheus.js';
import { anyRunSelector, fetchTelemetry, type Quantity } from '../../src/telemetry/queries.js';
import type { Topology } from '../../src/types/generated/topology.js';
import { freePort } from '../prometheus-blocks.js';
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

export async function prometheusCheck(base: Topology, root: string, log: (s: string) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'topo-campaign-prom-'));
  let prom: ChildProcess | undefined;
  try {
    const world = new World(loadProfile('twin-balanced', root), 101);
    const topologies = [
      base,
      build(base, { renderer: 1, driver: 8, physics: 4, total: 96, workers: 16 }),
      build(base, { renderer: 0, driver: 4, physics: 2, total: 48, workers: 8 }),
    ];
    const start = Math.floor(Date.now() / 1000 / 3600) * 3600 - 6 * 3600;
    const specs: RunSpec[] = topologies.map((t, i) => {
      const r = world.run(t);
      return {
        shape: r.shape,
        seed: 7000 + i,
        factor: 1,
        runName: `campaign-check-${i}`,
        endMinutes: MAX_MINUTES,
        scrapeSeconds: SCRAPE_SECONDS,
      };
    });
    const file = join(dir, 'runs.om');
    await writeFamily(specs, file, start);
    const data = join(dir, 'data');
    execFileSync('promtool', ['tsdb', 'create-blocks-from', 'openmetrics', file, data], { stdio: 'ignore' });
    const port = await freePort();
    writeFileSync(join(dir, 'prometheus.yml'), 'global:\n  scrape_interval: 15s\n');
    prom = spawn(
      'prometheus',
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${data}`,
        '--storage.tsdb.retention.time=3650d',
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore' },
    );
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${url}/-/ready`)).ok) break;
      } catch {}
      if (i > 300) throw new Error('Prometheus did not become ready');
      await new Promise((r) => setTimeout(r, 200));
    }
    const client = createPrometheusClient({ baseUrl: url });
    let same = 0;
    let looks = 0;
    const diffs: string[] = [];
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
        const judge = (series: RunSeries) =>
          observeRun({
            runName: spec.runName,
            series,
            timeScale: 1,
            nowTs: at,
            stepSeconds: SCRAPE_SECONDS,
            inFlight: spec.shape.inFlight,
            ended: false,
          }).observation.verdict;
        const a = judge(cut);
        const b = judge(seriesAt(memory, minute));
        looks++;
        const key = (v: typeof a) => JSON.stringify([v.state, v.projected_full_run]);
        if (key(a) === key(b)) same++;
        else diffs.push(`run ${i} @${minute}: Prometheus ${key(a)} vs in memory ${key(b)}`);
      }
    }
    log(
      `Prometheus check: ${same} of ${looks} looks give the same verdict (state and projection) from a real Prometheus (backfilled, read by the monitor's queries) as from the in-memory series${diffs.length ? `; differ: ${diffs.slice(0, 3).join('; ')}` : ''}\n`,
    );
  } finally {
    if (prom?.pid) prom.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    rmSync(dir, { recursive: true, force: true });
  }
}
