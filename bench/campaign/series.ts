// A trace-family run as the series the monitor's queries return, in memory. Prometheus answers the
// same numbers: the fallback queries of src/telemetry/queries.ts evaluated on the scrape grid pick
// each series' latest sample (max/sum over workers of the samples the trace family writes), so
// observeRun sees here what `fetchTelemetry` hands it after a backfill (the verdict bench's path).
import type { RunSeries } from '../../src/analysis/observe.js';
import type { LabeledSeries } from '../../src/analysis/series.js';
import { type Completion, type Counters, completions, countUpTo, type RunSpec } from '../trace-family.js';

export interface TraceSeries {
  /** Every quantity over the whole run (points in unix seconds). */
  series: RunSeries;
  /** Unix seconds of run-minute 0. */
  startUnix: number;
  /** Run-minute of the last sample (a crash ends the data). */
  lastMinute: number;
  /** Full-run value (max elapsed ÷ rollouts) at each scrape, for the seed's 45-minute read and ASHA. */
  fullRun: Array<[number, number]>;
}

type Points = Array<[number, number]>;

/** The per-worker counters read so far (the trace family's), and the series sampled from them. */
interface Scrapes extends Counters {
  total: Points;
  failed: Points;
  el: Points;
  avg: Points;
  active: Points;
  sums: Points[];
  counts: Points[];
}

function emptyScrapes(workers: number): Scrapes {
  const zeros = () => new Array<number>(workers).fill(0);
  return {
    ok: zeros(),
    bad: zeros(),
    elapsed: zeros(),
    dSum: zeros(),
    total: [],
    failed: [],
    el: [],
    avg: [],
    active: [],
    sums: Array.from({ length: workers }, () => [] as Points),
    counts: Array.from({ length: workers }, () => [] as Points),
  };
}

/** One scrape at unix seconds `ts`: the totals over workers and each worker's sum and count. */
function scrape(s: Scrapes, ts: number, inFlight: number | null): void {
  let n = 0;
  let nBad = 0;
  let e = 0;
  for (let w = 0; w < s.ok.length; w++) {
    n += s.ok[w]! + s.bad[w]!;
    nBad += s.bad[w]!;
    e = Math.max(e, s.elapsed[w]!);
    s.sums[w]!.push([ts, s.dSum[w]!]);
    s.counts[w]!.push([ts, s.ok[w]! + s.bad[w]!]);
  }
  s.total.push([ts, n]);
  s.failed.push([ts, nBad]);
  if (e > 0) s.el.push([ts, e]);
  if (n > 0) s.avg.push([ts, e / n]);
  if (inFlight !== null) s.active.push([ts, inFlight]);
}

/** The series of one run (the quantities the decision reads), sampled every `spec.scrapeSeconds`. */
export function traceSeries(spec: RunSpec, startUnix: number, events?: Completion[]): TraceSeries {
  const shape = spec.shape;
  const all = events ?? completions(spec);
  const stop = Math.min(spec.endMinutes, shape.crashAtMinutes ?? Number.POSITIVE_INFINITY);
  const s = emptyScrapes(shape.workers);
  const step = spec.scrapeSeconds / 60;
  let i = 0;
  let last = 0;
  for (let k = 0; k * step <= stop + 1e-9; k++) {
    const t = k * step;
    i = countUpTo(all, i, t, s);
    scrape(s, startUnix + t * 60, shape.noActiveGauge ? null : shape.inFlight);
    last = t;
  }
  const labels = { run_name: spec.runName, run_uuid: `${spec.runName}-uuid` };
  const one = (points: Points): LabeledSeries[] => (points.length ? [{ labels, points }] : []);
  const perWorker = (xs: Points[]): LabeledSeries[] =>
    xs.map((points, w) => ({ labels: { ...labels, worker_id: String(w) }, points }));
  return {
    series: {
      secondsPerRolloutAvg: one(s.avg),
      rolloutsTotal: one(s.total),
      rolloutsFailed: one(s.failed),
      elapsed: one(s.el),
      rolloutDurationSum: perWorker(s.sums),
      rolloutDurationCount: perWorker(s.counts),
      activeRollouts: one(s.active),
    },
    startUnix,
    lastMinute: last,
    fullRun: s.avg,
  };
}

/** The series as a query at `minute` would see them (samples up to then). */
export function seriesAt(trace: TraceSeries, minute: number): RunSeries {
  const at = trace.startUnix + minute * 60 + 1e-6;
  const out: RunSeries = {};
  for (const [q, ss] of Object.entries(trace.series)) {
    out[q] = (ss ?? []).map((x) => {
      let hi = x.points.length;
      while (hi > 0 && (x.points[hi - 1] as [number, number])[0] > at) hi--;
      return { ...x, points: x.points.slice(0, hi) };
    });
  }
  return out;
}
