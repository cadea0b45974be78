// The monitor end to end on real parts: the twin submitted by a monitor pass to the local Slurm,
// scraped by the local Prometheus, read back through the query catalog, judged by the detector, and
// reported on a pull request of the local GitHub API (sticky comment, check run, label); stopped by
// stop_when_stable. Then a second pass at the same moment writes nothing.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { monitorPass } from '../../../src/monitor/pass.js';
import type { MonitorExperiment, MonitorPorts } from '../../../src/monitor/ports.js';
import { parseObservationBlock } from '../../../src/report/observation-block.js';
import { useActionTestbed } from '../../support/action-fixture.js';
import { repoRoot } from '../../support/cluster.js';
import { twinMonitorPorts } from '../../support/twin-monitor.js';
import { mermaidBlocks, mermaidParse } from '../../unit/report/mermaid-parser.js';

const t = useActionTestbed({
  tag: 'mon',
  pulls: { baseline: { files: { 'baseline.yaml': 'name: baseline\n' } } },
});
const experimentId = t.experimentId;
// a Request's run name: the label is the id written into the job (--comment=topo:0badc0de)
const runName = `topo-${experimentId}-baseline-0123abcd-0badc0de`;
const pull = () => t.pull('baseline');

function ports(): MonitorPorts {
  const pull = t.pull('baseline');
  const experiment: MonitorExperiment = {
    experiment: {
      experiment_id: experimentId,
      cluster: 'local',
      base_topology: '8gpu_64rollouts',
      max_parallel: 1,
      stop_when_stable: true,
      // a looser interval than the default keeps this test short; the unit tests cover the defaults
      stabilisation: { max_ci_relative: 0.05 },
      fixed_inputs: {
        deploy: 'twin-balanced',
        driver: 'vavam',
        scenes: 'public_2601',
        scene_count: 913,
        rollouts_per_scene: 4,
        slurm: { time: '04:00:00' },
      },
    },
    timeScale: t.cluster.timeScale,
    scrapeSeconds: 1,
    grafanaUrl: 'http://127.0.0.1:3003',
    candidates: [
      {
        candidate: 'baseline',
        runName,
        pr: pull.number,
        headSha: pull.head.sha,
        labels: [...pull.labels],
        requested: true,
      },
    ],
  };
  return twinMonitorPorts(
    t,
    () => experiment,
    () => [
      'deploy=twin-balanced',
      'topology=8gpu_64rollouts',
      'driver=vavam',
      'scenes.test_suite_id=public_2601',
      'runtime.simulation_config.n_rollouts=4',
    ],
  );
}

async function monitorComment(): Promise<string> {
  return t.gh.state.commentsOn(t.repo, pull().number).find((c) => c.user.login === t.gh.botLogin)?.body ?? '';
}

describe('monitor pass on the local cluster', () => {
  it('submits, follows the run to a stable verdict, stops it, and reports it on the pull request', async () => {
    const seen: string[] = [];
    const deadline = Date.now() + 200_000;
    let last: Awaited<ReturnType<typeof monitorPass>> | undefined;
    while (Date.now() < deadline) {
      last = await monitorPass(ports(), { tickSeconds: 1, lagSeconds: 2 });
      expect(last.errors).toEqual([]);
      const state = last.candidates[0]?.state;
      if (state && seen.at(-1) !== state)
        seen.push(`${state}@${last.candidates[0]?.view.observation.verdict.minutes_of_data ?? 0}`);
      // ended: pass until the comment is final (the data settles a few scrapes after the end)
      if (
        (state === 'stopped' || state === 'finished' || state === 'failed') &&
        (await monitorComment()).includes('final-job:')
      )
        break;
      await new Promise((r) => setTimeout(r, 2000));
    }
    const outcome = last?.candidates[0];
    expect(outcome?.state, `states seen: ${seen.join(' → ')}`).toBe('stopped');
    console.log(`states seen: ${seen.join(' → ')}`);
    expect(seen[0]).toMatch(/^(submitted|starting)/);
    expect(seen.some((x) => x.startsWith('stable@'))).toBe(true);
    const v = outcome?.view.observation.verdict;
    expect(['stable', 'cyclic']).toContain(v?.state);
    // the projection agrees with the twin's own steady state within 10%
    expect(v?.projected_full_run?.value).toBeGreaterThan(2);
    expect(v?.projected_full_run?.value).toBeLessThan(3.2);

    const comments = t.gh.state
      .commentsOn(t.repo, pull().number)
      .filter((c) => c.user.login === t.gh.botLogin);
    expect(comments).toHaveLength(1);
    const body = await monitorComment();
    expect(body).toContain('<!-- topo:sticky:monitor-baseline -->');
    expect(body).toMatch(/### 📏 `baseline`: the reference/);
    expect(body).toContain('⏹️ stopped');
    expect(body).not.toMatch(/Slurm job \d+: RUNNING/);
    expect(body).toContain('Projected full-run seconds per rollout at the end of the run');
    expect(body).toMatch(/\| sensorsim|\| renderer/);
    expect(body).toContain('var-run_name=');
    const blocks = mermaidBlocks(body);
    expect(blocks).toHaveLength(1);
    await expect(mermaidParse(blocks[0] as string)).resolves.toBeTruthy();
    const observation = parseObservationBlock(body);
    expect(observation?.run_name).toBe(runName);
    expect(observation?.stable_metrics.completed_rollouts).toBeGreaterThan(100);
    expect(pull().labels).toEqual(['topology:stable']);
    const checks = t.gh.state.checkRuns.filter(
      (c) => c.repo === t.repo && c.headSha === pull().head.sha && c.name === 'topo/monitor',
    );
    expect(checks.at(-1)?.conclusion).toBe('success');
    expect(t.gh.violations()).toEqual([]);

    // the CLI reads the same run from the same Prometheus
    const out: string[] = [];
    const err: string[] = [];
    const io = {
      stdout: (t: string) => out.push(t),
      stderr: (t: string) => err.push(t),
      cwd: repoRoot,
      env: process.env,
      isTTY: false,
    };
    const code = await main(
      [
        'analyze',
        runName,
        '--json',
        '--prometheus',
        t.cluster.prometheusUrl,
        '--time-scale',
        String(t.cluster.timeScale),
        '--step',
        '1',
        '--minutes',
        '10',
      ],
      io,
    );
    expect(code, err.join('')).toBe(0);
    // the run's experiment is not in this checkout: analyze says it judges it with the default settings
    expect(err.join('')).toContain(`note: experiment ${experimentId} is not in this checkout`);
    const analyzed = JSON.parse(out.join('')) as {
      observation: { run_name: string; stable_metrics: { completed_rollouts: number } };
    };
    expect(analyzed.observation.run_name).toBe(runName);
    expect(analyzed.observation.stable_metrics.completed_rollouts).toBe(
      observation?.stable_metrics.completed_rollouts,
    );
    const topologies = mkdtempSync(join(tmpdir(), 'topo-status-'));
    mkdirSync(join(topologies, experimentId));
    writeFileSync(
      join(topologies, experimentId, 'experiment.yaml'),
      `experiment_id: ${experimentId}\ncluster: local\nbase_topology: 8gpu_64rollouts\nstop_when_stable: true\nfixed_inputs: { deploy: twin-balanced, driver: vavam }\n`,
    );
    out.length = 0;
    expect(
      await main(
        ['status', experimentId, '--topologies', topologies, '--clusters', t.cluster.clustersFile],
        io,
      ),
      out.join(''),
    ).toBe(0);
    // the candidate by its name (the run name parsed), not the name less the prefix
    expect(out.join('')).toMatch(/^baseline\s+\d+\s+CANCELLED\s+stopped/m);

    // a second pass: nothing changed, no write call
    t.gh.resetCalls();
    const again = await monitorPass(ports(), { tickSeconds: 1, lagSeconds: 2 });
    expect(again.candidates[0]?.changed).toBe(false);
    expect(t.gh.calls().filter((c) => c.method !== 'GET')).toEqual([]);
  });
});
