// A Prometheus that answers from recorded series (each run's series by quantity, as src/judge
// read.ts reads them), through the real client (src/telemetry/prometheus.ts, its `fetch` option):
// a range query is answered with the points of its run(s) and quantity on its grid (start + k ×
// step), as Prometheus would, so a surface's window and step shape what it reads.
import type { LabeledSeries } from '../../src/analysis/series.js';
import { createPrometheusClient, type PrometheusClient } from '../../src/telemetry/prometheus.js';
import { QUANTITIES, type Quantity, queryCatalog } from '../../src/telemetry/queries.js';

/** Recorded series: run name → quantity → series (labels and [unix seconds, value] points). */
export type RecordedSeries = Record<string, Partial<Record<Quantity, LabeledSeries[]>>>;

const SEL = '__SELECTOR__';
const SELECTOR = /\{(run_name=~?"(?:[^"\\]|\\.)*")\}/;

/** Each catalog query with its selector taken out, for the time scale and a range of scrape steps. */
function templates(timeScale: number): Map<string, Quantity> {
  const out = new Map<string, Quantity>();
  for (const scrapeSeconds of [0.5, 1, 2, 5, 10, 15, 30, 60])
    for (const [q, entry] of Object.entries(queryCatalog(SEL, { timeScale, scrapeSeconds })))
      for (const text of [entry.rule, entry.fallback]) if (text) out.set(text, q as Quantity);
  return out;
}

/** The runs a selector matches. */
function runsOf(selector: string, runs: readonly string[]): string[] {
  const m = selector.match(/^run_name(=~?)"(.*)"$/);
  if (!m) return [];
  const value = (m[2] as string).replace(/\\(.)/g, '$1');
  return m[1] === '='
    ? runs.filter((r) => r === value)
    : runs.filter((r) => new RegExp(`^${value}$`).test(r));
}

function answer(recorded: RecordedSeries, known: Map<string, Quantity>, params: URLSearchParams): unknown {
  const query = params.get('query') ?? '';
  const selector = query.match(SELECTOR)?.[1];
  const quantity = selector ? known.get(query.split(selector).join(SEL)) : undefined;
  if (!selector || !quantity || !QUANTITIES.includes(quantity))
    return { status: 'success', data: { resultType: 'matrix', result: [] } };
  const [start, end, step] = ['start', 'end', 'step'].map((k) => Number(params.get(k))) as number[];
  const onGrid = (t: number) => {
    const k = (t - (start as number)) / (step as number);
    return t >= (start as number) && t <= (end as number) && Math.abs(k - Math.round(k)) < 1e-6;
  };
  const result = runsOf(selector, Object.keys(recorded)).flatMap((run) =>
    (recorded[run]?.[quantity] ?? []).flatMap((s) => {
      const values = s.points.filter(([t]) => onGrid(t)).map(([t, v]) => [t, String(v)]);
      return values.length ? [{ metric: s.labels, values }] : [];
    }),
  );
  return { status: 'success', data: { resultType: 'matrix', result } };
}

/** A Prometheus client whose server answers from `recorded`. */
export function replayPrometheus(recorded: RecordedSeries, timeScale: number): PrometheusClient {
  const known = templates(timeScale);
  const fake = async (_url: string | URL | Request, init?: RequestInit) => {
    const params = new URLSearchParams(String(init?.body ?? ''));
    return new Response(JSON.stringify(answer(recorded, known, params)), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  };
  return createPrometheusClient({ baseUrl: 'http://replay.test', fetch: fake as typeof fetch, retries: 0 });
}
