// The first 10 lines of every monitor comment answer: better or worse, by how much, how sure,
// what next (issue 15). Views for each outcome; old main headed a regression "✅ … — stable".
import { describe, expect, it } from 'vitest';
import { migrateObservation } from '../../../src/analysis/stored.js';
import { checkConclusion, monitorCheckRun, standingTitle } from '../../../src/report/check-conclusion.js';
import {
  type CandidateView,
  jobLine,
  monitorCheck,
  renderHeadline,
  renderMonitorComment,
  viewStanding,
} from '../../../src/report/pr-comment.js';
import { describeReference } from '../../../src/report/standing.js';
import type {
  CandidateObservation,
  Decision,
  DecisionReference,
} from '../../../src/types/generated/metrics.js';
import { mermaidBlocks, mermaidParse } from './mermaid-parser.js';

const value = { value: 3.2, low: 3.1, high: 3.3 };

function view(over: Partial<CandidateView> = {}): CandidateView {
  return {
    experimentId: 'exp-1',
    candidate: 'scale-driver-4',
    runName: 'topo-exp-1-scale-driver-4-0123abcd',
    state: 'stable',
    jobId: '42',
    slurmState: 'RUNNING',
    timeline: [],
    observation: {
      run_name: 'topo-exp-1-scale-driver-4-0123abcd',
      verdict: { state: 'stable', value, projected_full_run: value, evidence: ['e'] },
      stable_metrics: { seconds_per_rollout_full_run: 3.3 },
    },
    best: { name: 'scale-driver-2', secondsPerRollout: 2.2 },
    baseline: { name: 'baseline', secondsPerRollout: 4 },
    ...over,
  };
}

function decision(over: Partial<Decision>): Decision {
  return {
    state: 'measuring',
    reference: { role: 'current best', name: 'scale-driver-2', pr: null },
    min_improvement: 0.02,
    evidence: [],
    ...over,
  };
}

function withDecision(d: Partial<Decision>, over: Partial<CandidateView> = {}): CandidateView {
  const v = view(over);
  return { ...v, observation: { ...v.observation, decision: decision(d) } };
}

function atMinute(minutes: number, v: CandidateView): CandidateView {
  const verdict = { ...v.observation.verdict, minutes_of_data: minutes };
  return { ...v, observation: { ...v.observation, verdict } };
}

const cases: Record<
  string,
  { v: CandidateView; icon: string; words: RegExp; next: RegExp; check: string | undefined }
> = {
  regression: {
    v: withDecision({ state: 'worse', relative_change: { value: 0.444, low: 0.4, high: 0.49 } }),
    icon: '🔴',
    words: /worse than the current best `scale-driver-2` by 44\.4% \[95% interval 40%–49%\]/,
    next: /Close: slower than the current best `scale-driver-2`/,
    check: 'failure',
  },
  improvement: {
    v: withDecision({ state: 'better', relative_change: { value: -0.123, low: -0.16, high: -0.081 } }),
    icon: '🟢',
    words: /better than the current best `scale-driver-2` by 12\.3% \[95% interval 8\.1%–16%\]/,
    next: /Recommended: merge — best so far/,
    check: 'success',
  },
  equivalent: {
    v: withDecision({ state: 'equivalent', relative_change: { value: 0.004, low: -0.011, high: 0.018 } }),
    icon: '⚪',
    words:
      /within ±2% \(min_improvement\) of the current best `scale-driver-2` \(\+0\.4%, 95% interval −1\.1% to \+1\.8%\)/,
    next: /Close unless you prefer it/,
    check: 'neutral',
  },
  'not-better': {
    // the futility stop: it cannot win, though it is not settled as a tie or a regression
    v: withDecision({ state: 'not-better', relative_change: { value: 0.012, low: -0.009, high: 0.034 } }),
    icon: '🟠',
    words:
      /not 2% \(min_improvement\) faster than the current best `scale-driver-2`: it cannot win \(\+1\.2%, 95% interval −0\.9% to \+3\.4%\)/,
    next: /Close: it cannot be 2% faster than the current best `scale-driver-2`/,
    check: 'failure',
  },
  measuring: {
    // forecast at run-minute 64.2 with 40 run-minutes of data: about 25 to go
    v: atMinute(
      40,
      withDecision(
        {
          state: 'measuring',
          expected_minutes_to_decision: 64.2,
          relative_change: { value: -0.05, low: -0.12, high: 0.02 },
        },
        { state: 'stabilising' },
      ),
    ),
    icon: '⏳',
    words:
      /measuring — about 25 more run-minutes to a decision; so far −5% against the current best `scale-driver-2`/,
    next: /Nothing to do yet/,
    check: undefined,
  },
  failed: {
    v: view({
      state: 'failed',
      finalJobState: 'OUT_OF_MEMORY',
      observation: {
        ...view().observation,
        failure: {
          kind: 'gpu-oom',
          message: 'GPU 4 ran out of memory',
          likely_fix: 'move a driver off GPU 4',
        },
      },
    }),
    icon: '❌',
    words: /failed \(gpu-oom: GPU 4 ran out of memory\)/,
    next: /Fix and push again:\*\* move a driver off GPU 4/,
    check: 'failure',
  },
  baseline: {
    v: withDecision(
      { state: 'reference', reference: { role: 'baseline', name: 'baseline', pr: null } },
      { candidate: 'baseline', best: null },
    ),
    icon: '📏',
    words: /the reference the candidates are compared with/,
    next: /Keep: candidates are compared with this run/,
    check: 'success',
  },
};

describe('the first 10 lines answer better or worse, by how much, how sure, what next', () => {
  for (const [name, c] of Object.entries(cases))
    it(name, () => {
      // The sticky comment adds one marker line above the body.
      const first = renderMonitorComment(c.v).split('\n').slice(0, 9).join('\n');
      expect(first.startsWith(`### ${c.icon} `)).toBe(true);
      expect(first).toMatch(c.words);
      expect(first).toMatch(c.next);
      if (c.v.observation.verdict.value) expect(first).toMatch(/s per rollout · [\d,]+ rollouts per hour/);
      if (name !== 'baseline' && name !== 'failed') expect(first).toMatch(/95% interval/);
      expect(checkConclusion(viewStanding(c.v))).toBe(c.check);
    });

  it('a regression never looks like a success (old main: "✅ scale-driver-4 — stable" and a green check)', () => {
    const body = renderMonitorComment(cases.regression!.v);
    expect(body.split('\n')[0]).not.toContain('✅');
    expect(monitorCheckRun(viewStanding(cases.regression!.v), '').conclusion).toBe('failure');
  });

  it('everything but the headline is collapsed', () => {
    const body = renderMonitorComment(cases.improvement!.v);
    const headEnd = body.indexOf('<details>');
    expect(body.slice(0, headEnd)).not.toContain('#### Metrics');
    expect(body.slice(headEnd)).toContain('#### Metrics');
  });
});

describe('wording and Slurm state', () => {
  it('names a reference called "baseline" once', () => {
    const ref = (role: DecisionReference['role'], name: string, pr: number | null = null) => ({
      role,
      name,
      pr,
    });
    expect(describeReference(ref('baseline', 'baseline'))).toBe('the baseline');
    expect(describeReference(ref('current best', 'baseline'))).toBe('the baseline (the current best)');
    expect(describeReference(ref('baseline', '8gpu'))).toBe('the baseline `8gpu`');
    expect(describeReference(ref('leading candidate', 'a', 12))).toBe('the leading candidate `a` (#12)');
    expect(describeReference(ref('leading candidate', 'a'))).toBe('the leading candidate `a`');
    // a name is a name: "a (#12)" is not parsed into a pull request
    expect(describeReference(ref('baseline', 'a (#12)'))).toBe('the baseline `a (#12)`');
    const body = renderMonitorComment(
      withDecision({
        state: 'worse',
        reference: ref('baseline', 'baseline'),
        relative_change: { value: 0.4, low: 0.3, high: 0.5 },
      }),
    );
    expect(body).not.toMatch(/baseline baseline|best baseline/);
    expect(body).toContain('worse than the baseline by 40%');
  });

  it('a user-controlled name cannot break out of its code span', () => {
    expect(describeReference({ role: 'baseline', name: 'a`](x)', pr: null })).toBe(
      'the baseline `` a`](x) ``',
    );
  });

  it('final comments show the final Slurm state, never a stale RUNNING', () => {
    expect(
      jobLine(
        view({ state: 'stopped', slurmState: 'RUNNING', finalJobState: 'CANCELLED', stoppedBy: 'user' }),
      ),
    ).toBe('Slurm job 42: CANCELLED by `/topo stop`');
    expect(
      jobLine(
        withDecision(
          { state: 'worse', gpu_minutes_saved: 840, gpu_minutes_saved_vs_seed: 200 },
          { state: 'stopped', slurmState: 'RUNNING', stoppedBy: 'decision' },
        ),
      ),
    ).toBe(
      "Slurm job 42: CANCELLED by the decision (200 GPU-minutes saved against the seed's 45-minute read (840 against the job's wall time))",
    );
    expect(jobLine(view({ state: 'finished', slurmState: 'RUNNING' }))).toBe('Slurm job 42: ended');
    expect(jobLine(view({ state: 'finished', slurmState: 'COMPLETED' }))).toBe('Slurm job 42: COMPLETED');
    expect(jobLine(view({ state: 'failed', finalJobState: 'FAILED' }))).toBe('Slurm job 42: FAILED');
    const body = renderMonitorComment(view({ state: 'stopped', slurmState: 'RUNNING', stoppedBy: 'user' }));
    expect(body).not.toContain('RUNNING');
  });

  it('`/topo stop` is the next step only when the monitor will not stop a decided, running job itself', () => {
    const decided = { state: 'worse' as const, relative_change: { value: 0.2, low: 0.1, high: 0.3 } };
    expect(renderHeadline(withDecision(decided, { stopWhenDecided: false })).join('\n')).toContain(
      '`/topo stop` frees the node now',
    );
    expect(renderHeadline(withDecision(decided, { stopWhenDecided: true })).join('\n')).not.toContain(
      '/topo stop',
    );
    expect(
      renderHeadline(withDecision(decided, { state: 'stopped', stopWhenDecided: false })).join('\n'),
    ).not.toContain('/topo stop');
  });

  it('an older comment with only a fixed-sample comparison reads as its decision, with min_improvement', () => {
    const cmp = (low: number, high: number) =>
      view({
        observation: migrateObservation({
          ...view().observation,
          comparison: {
            against: 'current best b',
            outcome: 'better',
            ratio: { value: (low + high) / 2, low, high },
          },
        }) as CandidateObservation,
      });
    expect(viewStanding(cmp(0.9, 0.97)).outcome).toBe('better');
    expect(viewStanding(cmp(0.95, 0.99)).outcome).toBe('measuring'); // faster, but maybe not by 2%
    expect(viewStanding(cmp(0.99, 1.01)).outcome).toBe('equivalent');
    expect(viewStanding(cmp(1.01, 1.1)).outcome).toBe('worse');
    expect(viewStanding({ ...cmp(0.95, 0.99), state: 'finished' }).outcome).toBe('undecided');
    expect(viewStanding(view()).outcome).toBe('reference');
    expect(
      viewStanding(
        view({
          state: 'warming',
          observation: { ...view().observation, verdict: { state: 'warming', evidence: [] } },
        }),
      ).outcome,
    ).toBe('measuring');
  });

  it('a "better" decision smaller than min_improvement is not a success', () => {
    const v = withDecision({ state: 'better', relative_change: { value: -0.01, low: -0.015, high: -0.005 } });
    expect(checkConclusion(viewStanding(v))).toBe('neutral');
  });

  it('the monitor check carries the decision and the headline', () => {
    expect(monitorCheck(cases.regression!.v)).toMatchObject({
      conclusion: 'failure',
      title: 'Worse than the current best scale-driver-2 by 44.4%',
      summary: expect.stringMatching(/^### 🔴 `scale-driver-4`: worse than/),
    });
    expect(monitorCheck(cases.measuring!.v).conclusion).toBeUndefined();
    expect(
      renderMonitorComment(view({ recordChartUrl: 'https://github.com/a/b/blob/main/experiments/e 1.svg' })),
    ).toContain('(https://github.com/a/b/blob/main/experiments/e%201.svg)');
  });

  it('check titles are plain text', () => {
    const t = standingTitle(viewStanding(cases.regression!.v));
    expect(t).toBe('Worse than the current best scale-driver-2 by 44.4%');
  });

  it('every chart in every case parses, with baseline and best as reference lines and a legend', async () => {
    const v = view({
      chart: {
        fullRun: Array.from({ length: 90 }, (_, i) => ({ t: i, v: 3 + 10 / (i + 1) })),
        rate5m: Array.from({ length: 90 }, (_, i) => ({ t: i, v: 3 + Math.sin(i) / 5 })),
      },
    });
    const body = renderMonitorComment(v);
    const [block] = mermaidBlocks(body);
    await expect(mermaidParse(block as string)).resolves.toMatchObject({ diagramType: 'xychart' });
    expect((block as string).match(/^ {2}line /gm)).toHaveLength(5);
    expect(body).toContain(
      "🟦 full-run s/rollout so far (start-up included) · 🟧 5-min s/rollout · 🟩 scale-driver-4 (the detector's projected full run) · 🟥 the baseline · 🟪 the current best `scale-driver-2`",
    );
  });
});
