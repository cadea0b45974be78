// Helpers of the twin's integration tests: free ports, bounded polling, Prometheus HTTP queries.
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

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

/**
 * A temporary Prometheus on TSDB blocks (promtool's backfill) on a free port, ready to query; the
 * caller stops it (`process.kill(prom.pid)`). `extra`: more flags.
 */
export async function prometheusOnBlocks(
  dir: string,
  data: string,
  extra: string[] = [],
): Promise<{ prom: ChildProcess; url: string }> {
  const port = await freePort();
  writeFileSync(join(dir, 'prometheus.yml'), 'global:\n  scrape_interval: 15s\n');
  const prom = spawn(
    'prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${data}`,
      '--storage.tsdb.retention.time=3650d',
      `--web.listen-address=127.0.0.1:${port}`,
      ...extra,
    ],
    { stdio: 'ignore' },
  );
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    'Prometheus ready',
    async () => ((await fetch(`${url}/-/ready`)).ok ? true : undefined),
    30_000,
  );
  return { prom, url };
}
