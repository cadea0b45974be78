// A real Prometheus over backfilled blocks, for the benches that read generated runs through the
// product's read path: OpenMetrics files into TSDB blocks (promtool tsdb create-blocks-from
// openmetrics), then a temporary Prometheus on a free port. The integration tests that read backfilled
// runs (test/integration/sim/openmetrics, analysis/equal-age) start theirs here too: one start-up.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** One OpenMetrics file into the TSDB blocks under `data`. */
export function backfill(file: string, data: string): void {
  execFileSync('promtool', ['tsdb', 'create-blocks-from', 'openmetrics', file, data], { stdio: 'ignore' });
}

/** A Prometheus serving the blocks under `data` (its config in `dir`), once it is ready. */
export async function prometheusOn(
  dir: string,
  data: string,
  extra: readonly string[] = [],
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
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/-/ready`)).ok) return { prom, url };
    } catch {}
    if (i > 300) {
      prom.kill('SIGTERM');
      throw new Error('Prometheus did not become ready');
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
