// Prometheus HTTP API client: instant and range queries with a timeout, bounded retries, an error
// that quotes the body for any non-success answer, and strict parsing of what comes back.
// Values "NaN", "+Inf" and "-Inf" are kept as numbers and flagged; an empty result is an empty list.

export interface PromSeries {
  labels: Record<string, string>;
  /** [unix seconds, value]; value may be NaN or ±Infinity. */
  points: Array<[number, number]>;
}

export interface PromResult {
  resultType: 'vector' | 'matrix' | 'scalar' | 'string';
  series: PromSeries[];
  /** True when Prometheus answered success with no series. */
  empty: boolean;
  /** Points whose value was NaN or ±Inf. */
  nonFinite: number;
  warnings: string[];
}

export class PrometheusError extends Error {
  constructor(
    message: string,
    readonly details: { query?: string; status?: number; body?: string; retryable: boolean },
    cause?: unknown,
  ) {
    // the cause (DNS, TLS, refused…) lets a caller tell network failures apart
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'PrometheusError';
  }
}

export interface PrometheusClientOptions {
  baseUrl: string;
  timeoutMs?: number;
  /** Extra attempts after the first, for network errors, timeouts, 429 and 5xx. */
  retries?: number;
  retryDelayMs?: number;
  fetch?: typeof fetch;
  headers?: Record<string, string>;
  /** Called once per HTTP request (for counting and logs). */
  onRequest?: (kind: 'instant' | 'range', query: string) => void;
}

export interface PrometheusClient {
  readonly baseUrl: string;
  instant(query: string, time?: number): Promise<PromResult>;
  range(query: string, start: number, end: number, stepSeconds: number): Promise<PromResult>;
}

const BODY_QUOTE = 500;

function quote(body: string): string {
  const s = body.replace(/\s+/g, ' ').trim();
  return s.length > BODY_QUOTE ? `${s.slice(0, BODY_QUOTE)}…` : s;
}

/** Parses one sample value as Prometheus encodes it (a string; NaN and ±Inf spelled out). */
export function parseSampleValue(raw: unknown): number {
  if (typeof raw !== 'string') throw new Error(`sample value must be a string, got ${JSON.stringify(raw)}`);
  if (raw === 'NaN') return Number.NaN;
  if (raw === '+Inf' || raw === 'Inf') return Number.POSITIVE_INFINITY;
  if (raw === '-Inf') return Number.NEGATIVE_INFINITY;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw))
    throw new Error(`sample value is not a number: ${JSON.stringify(raw)}`);
  return Number(raw);
}

function parsePoint(p: unknown, where: string): [number, number] {
  if (!Array.isArray(p) || p.length !== 2 || typeof p[0] !== 'number' || !Number.isFinite(p[0]))
    throw new Error(
      `${where}: a sample must be [unix_seconds, "value"], got ${JSON.stringify(p)?.slice(0, 80)}`,
    );
  return [p[0], parseSampleValue(p[1])];
}

function parseLabels(m: unknown, where: string): Record<string, string> {
  if (m === undefined) return {};
  if (!m || typeof m !== 'object' || Array.isArray(m))
    throw new Error(`${where}: "metric" must be an object of labels`);
  for (const [k, v] of Object.entries(m))
    if (typeof v !== 'string') throw new Error(`${where}: label ${k} must be a string`);
  return m as Record<string, string>;
}

/** Validates and parses a Prometheus query API body. Throws an Error naming what is wrong. */
export function parseQueryResponse(body: unknown): PromResult {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new Error('response is not a JSON object');
  const b = body as Record<string, unknown>;
  if (b.status !== 'success') {
    const err = typeof b.error === 'string' ? b.error : 'no error message';
    throw new Error(`status is ${JSON.stringify(b.status)} (${String(b.errorType ?? 'unknown')}: ${err})`);
  }
  const data = b.data as Record<string, unknown> | undefined;
  if (!data || typeof data !== 'object') throw new Error('"data" is missing');
  const type = data.resultType;
  const result = data.result;
  const warnings = Array.isArray(b.warnings) ? b.warnings.map(String) : [];
  const series: PromSeries[] = [];
  if (type === 'vector' || type === 'matrix') {
    if (!Array.isArray(result)) throw new Error(`"data.result" must be an array for a ${type}`);
    result.forEach((r, i) => {
      const where = `data.result[${i}]`;
      if (!r || typeof r !== 'object') throw new Error(`${where} is not an object`);
      const labels = parseLabels((r as Record<string, unknown>).metric, where);
      if (type === 'vector') {
        series.push({ labels, points: [parsePoint((r as Record<string, unknown>).value, `${where}.value`)] });
      } else {
        const values = (r as Record<string, unknown>).values;
        if (!Array.isArray(values)) throw new Error(`${where}.values must be an array`);
        series.push({ labels, points: values.map((p, j) => parsePoint(p, `${where}.values[${j}]`)) });
      }
    });
  } else if (type === 'scalar') {
    series.push({ labels: {}, points: [parsePoint(result, 'data.result')] });
  } else if (type === 'string') {
    // a string result has no numeric samples
  } else {
    throw new Error(`unknown resultType ${JSON.stringify(type)} (expected vector, matrix, scalar or string)`);
  }
  let nonFinite = 0;
  for (const s of series) for (const [, v] of s.points) if (!Number.isFinite(v)) nonFinite++;
  return { resultType: type, series, empty: series.length === 0, nonFinite, warnings };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createPrometheusClient(options: PrometheusClientOptions): PrometheusClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  if (!/^https?:\/\/[^\s]+$/.test(baseUrl))
    throw new Error(
      `Prometheus URL ${JSON.stringify(options.baseUrl)} is not an http(s) URL (e.g. http://127.0.0.1:9093)`,
    );
  const conn: Connection = {
    baseUrl,
    options,
    doFetch: options.fetch ?? fetch,
    timeoutMs: options.timeoutMs ?? 10_000,
    retries: options.retries ?? 2,
    retryDelayMs: options.retryDelayMs ?? 500,
  };
  return {
    baseUrl,
    instant(query, time) {
      const params = new URLSearchParams({ query });
      if (time !== undefined) params.set('time', String(time));
      return withRetries(conn, 'instant', '/api/v1/query', params, query);
    },
    async range(query, start, end, stepSeconds) {
      const pieces = rangePieces(query, start, end, stepSeconds);
      const results: PromResult[] = [];
      for (const piece of pieces)
        results.push(await withRetries(conn, 'range', '/api/v1/query_range', piece, query));
      return results.length === 1 ? (results[0] as PromResult) : mergeRanges(results);
    },
  };
}

/** Points Prometheus answers at most per series of one range query. */
export const MAX_RANGE_POINTS = 11_000;

/**
 * A range query's parameters, split into consecutive ranges of at most MAX_RANGE_POINTS points at
 * the same step on the same grid. The step is never widened: the judge reads the series at the step
 * it asked (a wider one read a twin run at 2 run-minutes a sample, which its 1-minute start cohorts
 * cannot fit); a wrong range throws before any request.
 */
function rangePieces(query: string, start: number, end: number, stepSeconds: number): URLSearchParams[] {
  if (!(end >= start))
    throw new PrometheusError(`range query end ${end} is before start ${start}`, {
      query,
      retryable: false,
    });
  if (!(stepSeconds > 0))
    throw new PrometheusError(`range query step must be > 0, got ${stepSeconds}`, {
      query,
      retryable: false,
    });
  const span = (MAX_RANGE_POINTS - 1) * stepSeconds;
  const pieces: URLSearchParams[] = [];
  for (let from = start; ; from += span + stepSeconds) {
    const to = Math.min(end, from + span);
    pieces.push(
      new URLSearchParams({ query, start: String(from), end: String(to), step: String(stepSeconds) }),
    );
    if (to >= end) return pieces;
  }
}

/** Consecutive ranges of one query as one: each series' points in order, by its labels. */
function mergeRanges(results: readonly PromResult[]): PromResult {
  const byLabels = new Map<string, PromSeries>();
  for (const r of results)
    for (const s of r.series) {
      const key = JSON.stringify(Object.entries(s.labels).sort(([a], [b]) => (a < b ? -1 : 1)));
      const seen = byLabels.get(key);
      if (seen) seen.points.push(...s.points);
      else byLabels.set(key, { labels: s.labels, points: [...s.points] });
    }
  const series = [...byLabels.values()];
  return {
    resultType: results[0]?.resultType ?? 'matrix',
    series,
    empty: series.length === 0,
    nonFinite: results.reduce((a, r) => a + r.nonFinite, 0),
    warnings: [...new Set(results.flatMap((r) => r.warnings))],
  };
}

/** One Prometheus server as the client reaches it, with the options' defaults filled in. */
interface Connection {
  baseUrl: string;
  options: PrometheusClientOptions;
  doFetch: typeof fetch;
  timeoutMs: number;
  retries: number;
  retryDelayMs: number;
}

/** Retries what may pass on a second try (network errors, timeouts, 429, 5xx), backing off exponentially. */
async function withRetries(
  conn: Connection,
  kind: 'instant' | 'range',
  path: string,
  params: URLSearchParams,
  query: string,
): Promise<PromResult> {
  for (let attempt = 0; ; attempt++) {
    conn.options.onRequest?.(kind, query);
    try {
      return await once(conn, path, params, query);
    } catch (e) {
      if (!(e instanceof PrometheusError) || !e.details.retryable || attempt >= conn.retries) throw e;
      await sleep(conn.retryDelayMs * 2 ** attempt);
    }
  }
}

/** One request: its answer parsed, or a PrometheusError that says what went wrong and whether a retry may help. */
async function once(
  conn: Connection,
  path: string,
  params: URLSearchParams,
  query: string,
): Promise<PromResult> {
  const { res, text } = await post(conn, path, params, query);
  if (!res.ok) {
    throw new PrometheusError(`Prometheus answered HTTP ${res.status} for ${query}: ${quote(text)}`, {
      query,
      status: res.status,
      body: text,
      retryable: res.status === 429 || res.status >= 500,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new PrometheusError(
      `Prometheus answered HTTP ${res.status} with a body that is not JSON for ${query}: ${quote(text)}`,
      {
        query,
        status: res.status,
        body: text,
        retryable: false,
      },
    );
  }
  try {
    return parseQueryResponse(json);
  } catch (e) {
    throw new PrometheusError(
      `Prometheus answer for ${query} is not valid: ${(e as Error).message}; body: ${quote(text)}`,
      {
        query,
        status: res.status,
        body: text,
        retryable: false,
      },
    );
  }
}

/** POSTs the query with a timeout; an unreachable or silent server is a retryable PrometheusError. */
async function post(
  conn: Connection,
  path: string,
  params: URLSearchParams,
  query: string,
): Promise<{ res: Response; text: string }> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), conn.timeoutMs);
  try {
    const res = await conn.doFetch(`${conn.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...conn.options.headers },
      body: params.toString(),
      signal: ctrl.signal,
    });
    return { res, text: await res.text() };
  } catch (e) {
    const timedOut = ctrl.signal.aborted;
    throw new PrometheusError(
      timedOut
        ? `Prometheus at ${conn.baseUrl} did not answer within ${conn.timeoutMs} ms (query: ${query})`
        : `cannot reach Prometheus at ${conn.baseUrl}: ${(e as Error).message} (query: ${query})`,
      { query, retryable: true },
      e,
    );
  } finally {
    clearTimeout(timer);
  }
}
