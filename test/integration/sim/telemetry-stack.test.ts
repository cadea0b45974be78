// scripts/start-prometheus-grafana.sh for real: the system Prometheus on a free port (the local cluster owns
// its own) discovers a twin through file-SD, evaluates the time-scaled rules, and `stop` ends only what it started.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../bench/prometheus-blocks.js';
import { repoRoot, requireCluster } from '../../support/cluster.js';
import { promQuery, waitFor } from './support.js';

const script = join(repoRoot, 'scripts/start-prometheus-grafana.sh');

describe('start-prometheus-grafana.sh', () => {
  const dir = mkdtempSync(join(tmpdir(), 'topo-stack-'));
  const state = join(dir, 'state');
  const fileSd = join(dir, 'file-sd');
  let twin: ChildProcess | undefined;
  afterAll(() => {
    if (twin?.pid && twin.exitCode === null) process.kill(twin.pid, 'SIGTERM');
    execFileSync('bash', [script, 'stop', '--state-dir', state]);
  });

  it('starts Prometheus on file-SD with the rules, scrapes a twin, and stops only its own processes', async () => {
    const port = await freePort();
    const out = execFileSync(
      'bash',
      [
        script,
        fileSd,
        '--prometheus-port',
        String(port),
        '--grafana-port',
        String(await freePort()),
        '--time-scale',
        '60',
        '--scrape-interval',
        '1s',
        '--state-dir',
        state,
      ],
      { encoding: 'utf8' },
    );
    expect(out).toContain(`prometheus: http://127.0.0.1:${port}`);
    const url = `http://127.0.0.1:${port}`;
    // A second start on the same state folder is refused rather than doubling the processes.
    expect(() =>
      execFileSync('bash', [script, fileSd, '--prometheus-port', String(port), '--state-dir', state], {
        stdio: 'pipe',
      }),
    ).toThrow(/already running/);
    if (!existsSync(join(repoRoot, 'dist/topo.js')))
      throw new Error('dist/topo.js is missing: run `npm run build` first');
    twin = spawn(
      'node',
      [
        join(repoRoot, 'bin/topo.js'),
        'sim',
        'run',
        'deploy=twin-balanced',
        'topology=8gpu_no_replicas',
        'driver=vavam',
        'wizard.run_name=topo-stack-test-1',
      ],
      {
        env: { ...process.env, TOPO_TWIN_FILE_SD_DIR: fileSd, TOPO_TWIN_TIME_SCALE: '120' },
        stdio: 'ignore',
      },
    );
    const targets = await waitFor(
      'the twin discovered through file-SD',
      async () => {
        const r = await promQuery(url, 'up{run_name="topo-stack-test-1"} == 1');
        return r.length === 4 ? r : undefined;
      },
      60_000,
    );
    expect(new Set(targets.map((t) => t.metric.job))).toEqual(
      new Set(['alpasim-runtime-worker', 'alpasim-node', 'alpasim-process', 'alpasim-dcgm']),
    );
    // Outside Slurm slurm_job_id is empty, and Prometheus drops empty labels (as with real AlpaSim).
    for (const t of targets)
      expect(Object.keys(t.metric)).toEqual(expect.arrayContaining(['run_uuid', 'run_name', 'user', 'node']));
    const rule = await waitFor(
      'a recording rule',
      async () => {
        const r = await promQuery(url, 'alpasim:gpu_memory_total_gb:avg{run_name="topo-stack-test-1"}');
        return r.length ? r : undefined;
      },
      30_000,
    );
    expect(Number(rule[0]!.value[1])).toBe(80);
    // AlpaSim's per-process CPU rules (issue 14.6) evaluate on the twin's process exporter: the hottest process
    // of each group, with AlpaSim's groupname label.
    const hottest = await waitFor(
      'the max-by-group CPU rule',
      async () => {
        const r = await promQuery(
          url,
          'alpasim:process_cpu_utilization_percent:max_by_group:rate30s{run_name="topo-stack-test-1"}',
        );
        return r.length ? r : undefined;
      },
      30_000,
    );
    expect(new Set(hottest.map((s) => s.metric.groupname))).toContain('runtime');
    // SIGTERM (what scancel sends) removes the targets file.
    process.kill(twin.pid!, 'SIGTERM');
    await waitFor(
      'the targets file to go',
      async () => (readdirSync(fileSd).length === 0 ? true : undefined),
      10_000,
      200,
    );
    const pid = readFileSync(join(state, 'pids/prometheus.pid'), 'utf8').split(' ')[0]!;
    const clusterReady = `${requireCluster().prometheusUrl}/-/ready`;
    const clusterBefore = await fetch(clusterReady).then(
      (r) => r.ok,
      () => false,
    );
    const stop = execFileSync('bash', [script, 'stop', '--state-dir', state], { encoding: 'utf8' });
    expect(stop).toContain(`stopped prometheus (pid ${pid})`);
    await waitFor(
      'Prometheus to exit',
      async () => (existsSync(`/proc/${pid}`) ? undefined : true),
      10_000,
      200,
    );
    // The local cluster's Prometheus (not started by this script) is untouched.
    const clusterAfter = await fetch(clusterReady).then(
      (r) => r.ok,
      () => false,
    );
    expect(clusterBefore).toBe(true);
    expect(clusterAfter).toBe(true);
  });

  it('refuses bad arguments with a clear message', () => {
    const run = (...args: string[]) => {
      try {
        execFileSync('bash', [script, ...args, '--state-dir', join(dir, 'other-state')], { stdio: 'pipe' });
        return '';
      } catch (e) {
        return String((e as { stderr?: Buffer }).stderr);
      }
    };
    expect(run(fileSd, '--prometheus-port', 'abc')).toContain('expected a port number');
    expect(run('--prometheus-port', '19999')).toContain('missing the file-SD directory');
    expect(run(fileSd, '--time-scale', '7', '--prometheus-port', '19998')).toContain('no rule file');
    expect(run('bad host;rm:/x', '--prometheus-port', '19997')).toContain('bad host');
  });
});
