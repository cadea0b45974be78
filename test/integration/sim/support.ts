// Helpers of the twin's integration tests: bounded polling, Prometheus HTTP queries. A free port and
// a Prometheus on backfilled blocks are the benches' (bench/prometheus-blocks.ts), one start-up for both.

/** Polls `check` every `everyMs` until it returns a value or `timeoutMs` passes (then throws `what`). */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  everyMs = 500,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

export interface PromSample {
  metric: Record<string, string>;
  value: [number, string];
}

export async function promQuery(baseUrl: string, query: string, time?: number): Promise<PromSample[]> {
  const url = new URL('/api/v1/query', baseUrl);
  url.searchParams.set('query', query);
  if (time !== undefined) url.searchParams.set('time', String(time));
  const res = await fetch(url);
  const body = (await res.json()) as { status: string; error?: string; data: { result: PromSample[] } };
  if (body.status !== 'success') throw new Error(`query ${query}: ${body.error}`);
  return body.data.result;
}
