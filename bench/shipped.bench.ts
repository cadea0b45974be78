// The shipped path's bench (issue 38 item 8; printed, not asserted): a subset of the decision family
// (bench/decision-family.ts) backfilled into a REAL Prometheus and read by analyzeRun, the read
// service of `topo analyze --at` and of the monitor's observation (its queries, the histogram's
// reconstruction, the start cohorts), then decided look by look by the one decision path (decideLook)
// with the reference running beside its candidates. The same runs decided in process (the family's
// own reading) print the same line beside it: the two must agree within their noise, so the speed
// the verdict bench reports is the speed a team gets. Looks every run-minute to 45, then every 5
// (a reading between looks is the last one). Run: npm run bench -- shipped (TOPO_BENCH_SEEDS=2,3:
// the seeds, default 2; TOPO_BENCH_SHAPES=plain,drain: the shapes).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decisionOptions, type VerdictLike } from '../src/analysis/decision.js';
import { createPrometheusClient } from '../src/telemetry/prometheus.js';
import { EXPERIMENT_DEFAULTS } from '../src/topology/settings.js';
import { analyzeRun } from '../src/usecases/analyze-run.js';
import {
  DECISION_SHAPES,
  experimentRows,
  experimentRuns,
  type FamilyRow,
  type FamilyShape,
  figures,
  productReader,
  type ReaderOf,
} from './decision-family.js';
import { backfill, prometheusOn } from './prometheus-blocks.js';
import { writeFamily } from './trace-family.js';

const list = (x: string | undefined) => (x ?? '').split(',').filter(Boolean);
const SEEDS = list(process.env.TOPO_BENCH_SEEDS).map(Number);
const SHAPE_NAMES = list(process.env.TOPO_BENCH_SHAPES);
const SHAPES: FamilyShape[] = DECISION_SHAPES.filter((x) =>
  (SHAPE_NAMES.length
    ? SHAPE_NAMES
    : ['plain', 'per-scene', 'candidate-drift-5%/h', 'candidate-drift-10%/h', 'drain']
  ).includes(x.shape.name),
);
const seeds = SEEDS.length ? SEEDS : [2];
const options = decisionOptions({ min_improvement: 0.02 });
const HORIZON = options.maxDecisionMinutes ?? EXPERIMENT_DEFAULTS.maxDecisionMinutes;
const SCRAPE = 15;
const LOOKS = [
  ...Array.from({ length: 40 }, (_, i) => 6 + i),
  ...Array.from({ length: 15 }, (_, i) => 50 + 5 * i),
].filter((m) => m <= HORIZON);

/** One run's verdicts at every look, through analyzeRun on Prometheus. */
async function readThroughPrometheus(
  client: ReturnType<typeof createPrometheusClient>,
  fs: FamilyShape,
  runName: string,
  startUnix: number,
): Promise<Map<number, VerdictLike>> {
  const at = new Map<number, VerdictLike>();
  const judgeAt = async (x: number) => {
    const ts = startUnix + x * 60;
    const res = await analyzeRun({
      prometheus: client,
      runName,
      timeScale: 1,
      stepSeconds: SCRAPE,
      nowTs: ts,
      atTs: ts,
      minutes: x + 10,
      inFlight: fs.shape.inFlight,
    });
    at.set(x, res.judgement.observation.verdict);
  };
  for (let i = 0; i < LOOKS.length; i += 4) await Promise.all(LOOKS.slice(i, i + 4).map(judgeAt));
  return at;
}

/** The last look at or before `minute`. */
function lookAt(at: Map<number, VerdictLike>, minute: number): VerdictLike {
  const m = LOOKS.filter((x) => x <= minute).at(-1) ?? (LOOKS[0] as number);
  return at.get(m) as VerdictLike;
}

async function shippedRows(client: ReturnType<typeof createPrometheusClient>, startUnix: number) {
  const rows: FamilyRow[] = [];
  let calls = 0;
  for (const fs of SHAPES)
    for (const seed of seeds) {
      const { base, cands } = experimentRuns(fs, seed);
      const seen = new Map<string, Map<number, VerdictLike>>();
      for (const r of [base, ...cands]) {
        seen.set(r.name, await readThroughPrometheus(client, fs, r.spec.runName, startUnix));
        calls += LOOKS.length;
      }
      const reader: ReaderOf = (r) => ({
        at: (m) => lookAt(seen.get(r.name) as Map<number, VerdictLike>, m),
      });
      rows.push(...experimentRows(fs, seed, options, reader, ['concurrent']));
    }
  return { rows, calls };
}

function line(label: string, rs: readonly FamilyRow[]): void {
  const f = figures(rs, HORIZON);
  console.log(
    `${label}: decision median ${f.median} run-min (worst ${f.worst}), GPU-min per decided ${Math.round(f.gpuPerDecided)}, wrong ${f.wrong} of ${f.n} (better-when-not ${f.betterWhenNot}), coverage ${(100 * f.coverage).toFixed(1)}%, undecided at horizon ${f.undecided}`,
  );
}

/** Per candidate, where the two paths' first claims differ. */
function differences(shipped: readonly FamilyRow[], inProcess: readonly FamilyRow[]): string[] {
  return shipped.flatMap((r, i) => {
    const o = inProcess[i] as FamilyRow;
    const a = `${r.claims[0]?.state ?? 'none'}@${r.decidedAt ?? '—'}`;
    const b = `${o.claims[0]?.state ?? 'none'}@${o.decidedAt ?? '—'}`;
    return r.claims[0]?.state === o.claims[0]?.state
      ? []
      : [`${r.shape}/s${r.seed}/×${r.factor} ${a} vs ${b}`];
  });
}

const dir = mkdtempSync(join(tmpdir(), 'topo-shipped-bench-'));
const data = join(dir, 'data');
const startUnix = Math.floor(Date.now() / 1000 / 3600) * 3600 - 6 * 3600;
let prom: Awaited<ReturnType<typeof prometheusOn>>['prom'] | undefined;
try {
  const t0 = Date.now();
  for (const [i, fs] of SHAPES.entries())
    for (const seed of seeds) {
      const { base, cands } = experimentRuns(fs, seed);
      const file = join(dir, `shipped-${i}-${seed}.om`);
      await writeFamily([base.spec, ...cands.map((c) => c.spec)], file, startUnix);
      backfill(file, data);
      rmSync(file);
    }
  const t1 = Date.now();
  const started = await prometheusOn(dir, data);
  prom = started.prom;
  const { rows, calls } = await shippedRows(createPrometheusClient({ baseUrl: started.url }), startUnix);
  const t2 = Date.now();
  const inProcess = SHAPES.flatMap((fs) =>
    seeds.flatMap((seed) => experimentRows(fs, seed, options, productReader, ['concurrent'])),
  );
  console.log(
    `\n## The shipped path (${SHAPES.map((x) => x.shape.name).join(', ')}; seeds ${seeds.join(', ')}; the reference beside its candidates; ${rows.length} candidates)\n`,
  );
  line('through Prometheus and analyzeRun', rows);
  line('in process (the same runs)', inProcess);
  const diff = differences(rows, inProcess);
  console.log(
    `first claims that differ (shipped vs in process): ${diff.length ? diff.join('; ') : 'none'}\n${SHAPES.length * seeds.length * 8} runs backfilled in ${((t1 - t0) / 1000).toFixed(0)} s; ${calls} analyzeRun calls in ${((t2 - t1) / 1000).toFixed(0)} s`,
  );
} finally {
  if (prom?.pid) prom.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 300));
  rmSync(dir, { recursive: true, force: true });
}
