import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPrometheusClient,
  PrometheusError,
  parseQueryResponse,
} from '../../../src/telemetry/prometheus.js';

const fixtures = join(import.meta.dirname, '../../fixtures/prometheus');
const expected = JSON.parse(readFileSync(join(fixtures, 'bad/expected.json'), 'utf8')) as Record<
  string,
  string
>;

describe('parseQueryResponse: bad-response corpus', () => {
  const files = readdirSync(join(fixtures, 'bad')).filter((f) => f !== 'expected.json');
  it('every corpus file has an expected message', () => {
    expect(files.sort()).toEqual(Object.keys(expected).sort());
  });
  for (const file of files) {
    it(`${file} is refused with a message naming the problem`, () => {
      const body = JSON.parse(readFileSync(join(fixtures, 'bad', file), 'utf8'));
      expect(() => parseQueryResponse(body)).toThrow(expected[file]);
    });
  }
});

describe('parseQueryResponse: good responses', () => {
  const read = (f: string) => JSON.parse(readFileSync(join(fixtures, 'good', f), 'utf8'));
  it('an empty vector is an explicit empty result', () => {
    const r = parseQueryResponse(read('empty-vector.json'));
    expect(r.empty).toBe(true);
    expect(r.series).toEqual([]);
  });
  it('NaN and ±Inf are parsed as numbers and counted', () => {
    const r = parseQueryResponse(read('matrix-nonfinite.json'));
    const values = r.series[0]?.points.map((p) => p[1]);
    expect(values?.slice(0, 3).every((v) => !Number.isFinite(v))).toBe(true);
    expect(values?.slice(3)).toEqual([3.25, 1000]);
    expect(r.nonFinite).toBe(3);
    expect(r.warnings).toEqual(['partial']);
  });
  it('a scalar becomes one unlabeled series', () => {
    expect(parseQueryResponse(read('scalar.json')).series).toEqual([
      { labels: {}, points: [[1700000000, 42]] },
    ]);
  });
});

describe('createPrometheusClient against a local HTTP server', () => {
  let server: Server;
  let url: string;
  const plan: Array<(req: IncomingMessage, res: ServerResponse) => void> = [];
  const seen: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        seen.push(`${req.url} ${body}`);
        const next = plan.shift();
        if (next) next(req, res);
        else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"status":"success","data":{"resultType":"vector","result":[]}}');
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const json = (status: number, body: string) => (_: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body);
  };

  it('sends instant and range queries to the API paths', async () => {
    seen.length = 0;
    const c = createPrometheusClient({ baseUrl: `${url}/`, retries: 0 });
    await c.instant('up', 1700000000);
    await c.range('up', 1700000000, 1700000600, 5);
    expect(seen[0]).toMatch(/^\/api\/v1\/query query=up&time=1700000000$/);
    expect(seen[1]).toMatch(/^\/api\/v1\/query_range query=up&start=1700000000&end=1700000600&step=5$/);
  });

  it('retries a 503 and then succeeds', async () => {
    plan.push(json(503, 'overloaded'));
    const calls: string[] = [];
    const c = createPrometheusClient({
      baseUrl: url,
      retries: 2,
      retryDelayMs: 1,
      onRequest: (k) => calls.push(k),
    });
    const r = await c.instant('up');
    expect(r.empty).toBe(true);
    expect(calls).toEqual(['instant', 'instant']);
  });

  it('does not retry a 400 and quotes the body in the error', async () => {
    plan.push(
      json(400, '{"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected <EOF>"}'),
    );
    const calls: string[] = [];
    const c = createPrometheusClient({
      baseUrl: url,
      retries: 3,
      retryDelayMs: 1,
      onRequest: (k) => calls.push(k),
    });
    const err = await c.instant('sum(').catch((e) => e);
    expect(err).toBeInstanceOf(PrometheusError);
    expect(err.message).toMatch(/HTTP 400 for sum\(: .*parse error: unexpected <EOF>/);
    expect(calls).toHaveLength(1);
  });

  it('gives up after the retries with the last error', async () => {
    plan.push(json(502, 'bad gateway'), json(502, 'bad gateway'));
    const c = createPrometheusClient({ baseUrl: url, retries: 1, retryDelayMs: 1 });
    await expect(c.instant('up')).rejects.toThrow(/HTTP 502 for up: bad gateway/);
  });

  it('refuses a 200 whose body is not JSON, quoting it', async () => {
    plan.push(json(200, '<html>login page</html>'));
    const c = createPrometheusClient({ baseUrl: url, retries: 0 });
    await expect(c.instant('up')).rejects.toThrow(/not JSON .*<html>login page<\/html>/);
  });

  it('refuses a 200 with status error', async () => {
    plan.push(json(200, '{"status":"error","errorType":"timeout","error":"query timed out"}'));
    const c = createPrometheusClient({ baseUrl: url, retries: 0 });
    await expect(c.instant('up')).rejects.toThrow(/timeout: query timed out/);
  });

  it('times out a server that does not answer', async () => {
    plan.push(() => {
      /* never answers */
    });
    const c = createPrometheusClient({ baseUrl: url, retries: 0, timeoutMs: 100 });
    await expect(c.instant('up')).rejects.toThrow(/did not answer within 100 ms/);
  });

  it('names an unreachable Prometheus', async () => {
    const c = createPrometheusClient({ baseUrl: 'http://127.0.0.1:9', retries: 0 });
    await expect(c.instant('up')).rejects.toThrow(/cannot reach Prometheus at http:\/\/127.0.0.1:9/);
  });

  it('refuses a URL that is not http(s)', () => {
    expect(() => createPrometheusClient({ baseUrl: 'file:///etc/passwd' })).toThrow(/not an http\(s\) URL/);
  });

  it('splits a range over 11,000 points into consecutive ranges at the step asked, never a wider one', async () => {
    // a wider step read a twin run (60x) at 2 run-minutes a sample: `topo analyze`'s 360-minute
    // look-back at step 1 then judged it on a coarser grid than `topo status` did
    seen.length = 0;
    const answer = (req: IncomingMessage, res: ServerResponse) => {
      // the parameters are the request's body (the last one seen)
      const q = new URLSearchParams(seen.at(-1)?.split(' ')[1]);
      const [from, to, step] = ['start', 'end', 'step'].map((k) => Number(q.get(k)));
      const values = [from as number, to as number].map((t) => [t, String((t as number) * (step as number))]);
      json(
        200,
        JSON.stringify({
          status: 'success',
          data: { resultType: 'matrix', result: [{ metric: { job: 'a' }, values }] },
        }),
      )(req, res);
    };
    plan.push(answer, answer, answer);
    const c = createPrometheusClient({ baseUrl: url, retries: 0 });
    const r = await c.range('up', 1000, 1000 + 25_000, 1);
    const ranges = seen.map((l) =>
      l
        .match(/start=(\d+)&end=(\d+)&step=(\d+)/)
        ?.slice(1)
        .map(Number),
    );
    expect(ranges).toEqual([
      [1000, 11_999, 1],
      [12_000, 22_999, 1],
      [23_000, 26_000, 1],
    ]);
    expect(r.series).toEqual([
      {
        labels: { job: 'a' },
        points: [1000, 11_999, 12_000, 22_999, 23_000, 26_000].map((t) => [t, t]),
      },
    ]);
  });
});
