import { describe, expect, it } from 'vitest';
import { detect } from '../../../src/analysis/detector.js';
import { barChart, lineChart } from '../../../src/chart/mermaid.js';
import { parseObservationBlock } from '../../../src/report/observation-block.js';
import {
  type CandidateView,
  grafanaLink,
  renderJobSummary,
  renderMonitorComment,
} from '../../../src/report/pr-comment.js';
import { BALANCED_64, simulateTrace, truncate } from '../../fixtures/traces/synthetic.js';
import { mermaidBlocks, mermaidParse } from './mermaid-parser.js';

const trace = simulateTrace({ ...BALANCED_64, name: 'c', endMinutes: 100 });
const verdict = detect(truncate(trace, 90));

function view(over: Partial<CandidateView> = {}): CandidateView {
  return {
    experimentId: 'topology-opt-vam-local-20260101',
    candidate: 'more-renderers',
    runName: 'topo-topology-opt-vam-local-20260101-more-renderers-0123abcd',
    state: 'stable',
    jobId: '42',
    slurmState: 'RUNNING',
    timeline: [
      { label: 'submitted', at: '2026-01-01T10:00:00Z' },
      { label: 'started', at: '2026-01-01T10:01:00Z' },
      { label: 'ended', at: null },
    ],
    observation: {
      run_name: 'topo-topology-opt-vam-local-20260101-more-renderers-0123abcd',
      verdict,
      stable_metrics: {
        seconds_per_rollout_full_run: 3.4,
        seconds_per_rollout_5m: 3.0,
        completed_rollouts: 1700,
        failed_rollouts: 2,
        rpc_queue_depth_at_start_latest_by_service: { renderer: { worker_min: 40, worker_max: 50 } },
        resource_usage: {
          gpu_by_index: {
            '0': {
              topology_services: ['renderer', 'trafficsim'],
              utilization_percent: { min: 80, mean: 90, max: 99 },
              memory_used_gb: { min: 60, mean: 65, max: 70 },
              memory_total_gb: 80,
              memory_pressure_percent: { max: 88 },
              memory_headroom_gb_min: 10,
            },
          },
          host_memory: { available_gb_min: 100, total_gb: 1000 },
        },
        bottleneck: {
          kind: 'service',
          service: 'renderer',
          evidence: ['renderer holds the queue'],
          confidence: 'high',
        },
      },
      decision: {
        state: 'better',
        reference: { role: 'baseline', name: '8gpu_64rollouts', pr: null },
        relative_change: { value: -0.1, low: -0.14, high: -0.06 },
        figure: { value: 3.06, low: 2.924, high: 3.196, reference_value: 3.4 },
        min_improvement: 0.02,
        evidence: ['change vs the baseline `8gpu_64rollouts`: −10%'],
      },
    },
    chart: { fullRun: truncate(trace, 90).fullRun, rate5m: truncate(trace, 90).rate5m },
    queries: [
      {
        quantity: 'secondsPerRolloutAvg',
        query: 'alpasim:simulation_seconds_per_rollout:avg{run_name=~"topo-x-.*"}',
        source: 'rule',
      },
    ],
    grafanaUrl: 'http://127.0.0.1:3003',
    timeRange: { fromMs: 1767261660000, toMs: null },
    ...over,
  };
}

describe('Mermaid charts pass Mermaid’s own parser', () => {
  it('the line chart of seconds per rollout', async () => {
    const chart = lineChart(
      [
        { name: 'full-run', samples: trace.fullRun },
        { name: '5m', samples: trace.rate5m },
      ],
      {
        title: 'Seconds "per" rollout',
        xLabel: 'run minutes',
        yLabel: 's/rollout',
        yMax: 10,
        references: [{ name: 'projected', value: 3.1 }],
      },
    );
    const [block] = mermaidBlocks(chart);
    expect(block).toMatch(/^%%\{init: .*"plotColorPalette".*\}%%\nxychart-beta\n/);
    await expect(mermaidParse(block as string)).resolves.toMatchObject({ diagramType: 'xychart' });
    // every line has as many points as the x axis
    const xs = (/x-axis "[^"]*" \[([^\]]*)\]/.exec(block as string)?.[1] ?? '').split(', ');
    for (const line of (block as string).matchAll(/line \[([^\]]*)\]/g))
      expect((line[1] as string).split(', ')).toHaveLength(xs.length);
    // at most 12 labels (48 ran together on GitHub), distinct (a repeated category collapses the axis)
    expect(xs.length).toBeLessThanOrEqual(12);
    expect(new Set(xs).size).toBe(xs.length);
  });
  it('the bar chart', async () => {
    const [block] = mermaidBlocks(
      barChart(
        [
          { label: 'baseline', value: 3.5 },
          { label: 'cand "a"', value: 3.1 },
        ],
        { title: 'Projected', yLabel: 's/rollout' },
      ),
    );
    await expect(mermaidParse(block as string)).resolves.toMatchObject({ diagramType: 'xychart' });
  });
  it('no data → no chart', () => {
    expect(lineChart([{ name: 'x', samples: [] }], { title: 't', xLabel: 'x', yLabel: 'y' })).toBe('');
  });
  it('every chart in the rendered comment parses', async () => {
    const blocks = mermaidBlocks(renderMonitorComment(view()));
    expect(blocks.length).toBe(1);
    for (const b of blocks) await expect(mermaidParse(b)).resolves.toBeTruthy();
  });
});

describe('the monitor comment', () => {
  const body = renderMonitorComment(view());
  it('shows state, timeline, verdict, decision, metrics, GPUs, bottleneck, queries and the Grafana link', () => {
    expect(body).toMatch(
      /^### 🟢 `more-renderers`: better than the baseline `8gpu_64rollouts` by 10% \[95% interval 6%–14%\]/,
    );
    expect(body).toContain('**Timeline:** submitted 2026-01-01T10:00:00Z → started 2026-01-01T10:01:00Z');
    expect(body).toContain(
      `#### Detector verdict: \`${verdict.state}\` (the full-run value, start-up included)`,
    );
    expect(body).toMatch(
      /Projected full-run seconds per rollout at the end of the run \(the detector's, start-up included\): [\d.]+ \[[\d.]+, [\d.]+\]/,
    );
    expect(body).toContain('Decision (sequential): `better` against the baseline `8gpu_64rollouts`');
    expect(body).toContain('**3.06 s per rollout');
    expect(body).toContain('| renderer | 40 | 50 |');
    expect(body).toContain('| 0 | renderer, trafficsim | 80 / 90 / 99 | 60 / 65 / 70 | 80 | 88 | 10 |');
    expect(body).toContain('**Bottleneck:** service (renderer), confidence high');
    expect(body).toContain('alpasim:simulation_seconds_per_rollout:avg{run_name=~"topo-x-.*"}');
    expect(body).toContain(
      '[Open in Grafana](http://127.0.0.1:3003/dashboard/db/alpasim-runtime?var-run_name=topo-topology-opt-vam-local-20260101-more-renderers-0123abcd&from=1767261660000&to=now)',
    );
  });
  it('carries the observation block the record reads back', () => {
    const o = parseObservationBlock(body);
    expect(o?.run_name).toBe('topo-topology-opt-vam-local-20260101-more-renderers-0123abcd');
    expect(o?.verdict.state).toBe(verdict.state);
  });
  it('is deterministic (same inputs, same text: no write on an unchanged pull request)', () => {
    expect(renderMonitorComment(view())).toBe(body);
  });
  it('a failure shows its message, fix and evidence', () => {
    const failed = renderMonitorComment(
      view({
        state: 'failed',
        observation: {
          ...view().observation,
          failure: {
            kind: 'gpu-oom',
            message: 'GPU 4 ran out of memory',
            likely_fix: 'reduce driver on GPU 4',
            evidence: ['Slurm state OUT_OF_MEMORY'],
          },
        },
      }),
    );
    expect(failed).toContain('**Failure (gpu-oom):** GPU 4 ran out of memory');
    expect(failed).toContain('Likely fix: reduce driver on GPU 4');
    expect(failed).toContain('- Slurm state OUT_OF_MEMORY');
  });
  it('a table cell cannot be broken by a pipe in a service name', () => {
    const v = view();
    const gpu0 = v.observation.stable_metrics.resource_usage?.gpu_by_index?.['0'];
    if (gpu0) gpu0.topology_services = ['a|b'];
    expect(renderMonitorComment(v)).toContain('| a\\|b |');
  });
  it('the job summary has a table and every comment', () => {
    const s = renderJobSummary([view(), view({ candidate: 'other', state: 'warming' })]);
    expect(s).toContain('| topology-opt-vam-local-20260101 | more-renderers | stable |');
    expect(s).toMatch(/### (⏳|🟢) `other`/);
    expect(renderJobSummary([])).toContain('No live candidates');
  });
  it('grafana link without a range falls back to the last 6 hours', () => {
    expect(grafanaLink('http://g/', 'topo-a-b-0123abcd')).toBe(
      // Issue 14.8: by slug, so it resolves on AlpaSim's provisioned dashboard (no uid) and on ours.
      'http://g/dashboard/db/alpasim-runtime?var-run_name=topo-a-b-0123abcd&from=now-6h&to=now',
    );
  });
});
