// `topo sim --export-openmetrics`: a whole run's history that promtool turns into TSDB blocks, served by a real
// Prometheus (a temporary one on a free port: the local cluster owns its own).
import { type ChildProcess, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { prometheusOn } from '../../../bench/prometheus-blocks.js';
import { promQuery, waitFor } from './support.js';

const root = resolve(import.meta.dirname, '../../..');
const topo = join(root, 'bin/topo.js');

describe('OpenMetrics export', () => {
  let prom: ChildProcess | undefined;
  afterAll(() => {
    if (prom?.pid) process.kill(prom.pid, 'SIGTERM');
  });

  it('is accepted by promtool and answers queries from a Prometheus started on the blocks', async () => {
    if (!existsSync(join(root, 'dist/topo.js')))
      throw new Error('dist/topo.js is missing: run `npm run build` first');
    const dir = mkdtempSync(join(tmpdir(), 'topo-om-'));
    const file = join(dir, 'run.om');
    const start = Math.floor(Date.now() / 1000) - 4 * 3600;
    const out = execFileSync(
      'node',
      [
        topo,
        'sim',
        '--export-openmetrics',
        file,
        '--profile',
        'twin-renderer-bound',
        '--topology',
        '8gpu_no_replicas',
        '--minutes',
        '120',
        '--interval',
        '30',
        '--start',
        String(start),
        '--run-name',
        'topo-om-test-0000abcd',
        '--run-uuid',
        'om-uuid-1',
      ],
      { encoding: 'utf8' },
    );
    const summary = JSON.parse(out) as { timestamps: number; end_unix: number };
    expect(summary.timestamps).toBe(241);
    expect(readFileSync(file, 'utf8').trimEnd().endsWith('# EOF')).toBe(true);
    const data = join(dir, 'data');
    const blocks = execFileSync('promtool', ['tsdb', 'create-blocks-from', 'openmetrics', file, data], {
      encoding: 'utf8',
    });
    expect(blocks).toMatch(/NUM SAMPLES/);
    const started = await prometheusOn(dir, data);
    prom = started.prom;
    const url = started.url;
    // The objective, from raw metrics, at the end of the exported run.
    const q =
      'max by (run_uuid, run_name) (alpasim_simulation_elapsed_seconds{run_name="topo-om-test-0000abcd"}) / sum by (run_uuid, run_name) (alpasim_rollouts_total{run_name="topo-om-test-0000abcd"})';
    const res = await waitFor(
      'query result',
      async () => {
        const r = await promQuery(url, q, summary.end_unix);
        return r.length ? r : undefined;
      },
      30_000,
    );
    const value = Number(res[0]!.value[1]);
    const steady = JSON.parse(
      execFileSync(
        'node',
        [topo, 'sim', 'steady', '--profile', 'twin-renderer-bound', '--topology', '8gpu_no_replicas'],
        { encoding: 'utf8' },
      ),
    ) as { seconds_per_rollout: number };
    expect(res[0]!.metric.run_uuid).toBe('om-uuid-1');
    expect(Math.abs(value - steady.seconds_per_rollout) / steady.seconds_per_rollout).toBeLessThan(0.1);
    // Every target group is there, with its job label.
    const jobs = await promQuery(
      url,
      'count by (job) ({run_name="topo-om-test-0000abcd"})',
      summary.end_unix,
    );
    expect(jobs.map((j) => j.metric.job).sort()).toEqual([
      'alpasim-dcgm',
      'alpasim-node',
      'alpasim-process',
      'alpasim-runtime-worker',
    ]);
  });
});
