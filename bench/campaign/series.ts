// A trace-family run as the series the monitor's queries return, in memory. Prometheus answers the
// same numbers: the fallback queries of src/telemetry/queries.ts evaluated on the scrape grid pick
// each series' latest sample (max/sum over workers of the samples the trace family writes), so
// observeRun sees here what `fetchTelemetry` hands it after a backfill (the verdict bench's path).
import type { RunSeries } from '../../src/analysis/observe.js';
import type { LabeledSeries } from '../../src/analysis/series.js';
import { type Completion, completions, type RunSpec } from '../trace-family.js';

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

/** The series of one run (the quantities the decision reads), sampled every `spec.scrapeSeconds`. */
export function traceSeries(spec: RunSpec, startUnix: number, events?: Completion[]): TraceSeries {
  const s = spec.shape;
  const all = events ?? completions(spec);
  const stop = Math.min(spec.endMinutes, s.crashAtMinutes ?? Number.POSITIVE_INFINITY);
  const W = s.workers;
  const ok = new Array<number>(W).fill(0);
  const bad = new Array<number>(W).fill(0);
  const elapsed = new Array<number>(W).fill(0);
  const dSum = new Array<number>(W).fill(0);
  const total: Array<[number, number]> = [];
  const failed: Array<[number, number]> = [];
  const el: Array<[number, number]> = [];
  const avg: Array<[number, number]> = [];
  const active: Array<[number, number]> = [];
  const sums = Array.from({ length: W }, () => [] as Array<[number, number]>);
  const counts = Array.from({ length: W }, () => [] as Array<[number, number]>);
  const step = spec.scrapeSeconds / 60;
  let i = 0;
  let last = 0;
  for (let k = 0; k * step <= stop + 1e-9; k++) {
    const t = k * step;
    while (i < all.length && (all[i] as Completion).t <= t) {
      const e = all[i] as Completion;
      if (e.failed) bad[e.worker]!++;
      else ok[e.worker]!++;
      elapsed[e.worker] = 60 * e.t;
      dSum[e.worker]! += 60 * e.d;
      i++;
    }
    const ts = startUnix + t * 60;
    let n = 0;
    let nBad = 0;
    let e = 0;
    for (let w = 0; w < W; w++) {
      n += ok[w]! + bad[w]!;
      nBad += bad[w]!;
      e = Math.max(e, elapsed[w]!);
      sums[w]!.push([ts, dSum[w]!]);
      counts[w]!.push([ts, ok[w]! + bad[w]!]);
    }
    total.push([ts, n]);
    failed.push([ts, nBad]);
    if (e > 0) el.push([ts, e]);
    if (n > 0) avg.push([ts, e / n]);
    if (!s.noActiveGauge) active.push([ts, s.inFlight]);
    last = t;
  }
  const labels = { run_name: spec.runName, run_uuid: `${spec.runName}-uuid` };
  const one = (points: Array<[number, number]>): LabeledSeries[] =>
    points.length ? [{ labels, points }] : [];
  const perWorker = (xs: Array<Array<[number, number]>>): LabeledSeries[] =>
    xs.map((points, w) => ({ labels: { ...labels, worker_id: String(w) }, points }));
  return {
    series: {
      secondsPerRolloutAvg: one(avg),
      rolloutsTotal: one(total),
      rolloutsFailed: one(failed),
      elapsed: one(el),
      rolloutDurationSum: perWorker(sums),
      rolloutDurationCount: perWorker(counts),
      activeRollouts: one(active),
    },
    startUnix,
    lastMinute: last,
    fullRun: avg,
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
