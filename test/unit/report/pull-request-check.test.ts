import { describe, expect, it } from 'vitest';
import { type MonitorCheckRun, pullRequestCheckRun } from '../../../src/report/check-conclusion.js';

const check = (conclusion: MonitorCheckRun['conclusion'], title: string): MonitorCheckRun => ({
  title,
  summary: `headline of ${title}`,
  ...(conclusion ? { conclusion } : {}),
});

describe('pullRequestCheckRun (one topo/monitor check over all candidates)', () => {
  it('is the candidate’s own check run when the pull request has one candidate', () => {
    const only = check('success', 'Better than the baseline by 5%');
    expect(pullRequestCheckRun([{ candidate: 'a', check: only }])).toBe(only);
  });

  it('fails when any candidate failed or is worse, whatever the others', () => {
    const run = pullRequestCheckRun([
      { candidate: 'a', check: check('success', 'Better') },
      { candidate: 'b', check: check(undefined, 'Measuring') },
      { candidate: 'c', check: check('failure', 'Worse than the baseline by 9%') },
    ]);
    expect(run.conclusion).toBe('failure');
    expect(run.title).toBe('3 candidates: c: Worse than the baseline by 9%; b: Measuring; a: Better');
    expect(run.summary.indexOf('### `c`: failure')).toBeLessThan(run.summary.indexOf('### `a`: success'));
    expect(run.summary).toContain('headline of Measuring');
  });

  it('stays in progress while any is measuring, neutral when any is equivalent, success only when all are', () => {
    const two = (x: MonitorCheckRun['conclusion'], y: MonitorCheckRun['conclusion']) =>
      pullRequestCheckRun([
        { candidate: 'a', check: check(x, 'x') },
        { candidate: 'b', check: check(y, 'y') },
      ]).conclusion;
    expect(two('success', undefined)).toBeUndefined();
    expect(two('neutral', undefined)).toBeUndefined();
    expect(two('success', 'neutral')).toBe('neutral');
    expect(two('success', 'success')).toBe('success');
  });

  it('keeps the title within a plain line of 200 characters', () => {
    const long = Array.from({ length: 12 }, (_, i) => ({
      candidate: `candidate-${i}`,
      check: check('neutral', 'Within ±2% of the current best scale-driver-2'),
    }));
    const run = pullRequestCheckRun(long);
    expect(run.title.length).toBeLessThanOrEqual(200);
    expect(run.title.endsWith('…')).toBe(true);
  });
});

describe('the decision states of issue 38 (the provisional winner and its honest closing)', () => {
  const decision = (state: 'better-at-equal-age' | 'faster-drift-not-ruled-out') => ({
    state,
    reference: { role: 'baseline' as const, name: 'b', pr: null },
    min_improvement: 0.02,
    relative_change: { value: -0.08, low: -0.11, high: -0.05 },
    evidence: [],
  });
  it('keeps a provisional winner in progress and closes a drift not ruled out as neutral, never success', async () => {
    const { monitorCheckRun, standingOf } = await import('../../../src/report/check-conclusion.js');
    const open = standingOf({
      state: 'stabilising',
      decision: decision('better-at-equal-age'),
      hasValue: false,
    });
    expect(open.outcome).toBe('better-at-equal-age');
    expect(monitorCheckRun(open, 'h').conclusion).toBeUndefined();
    expect(monitorCheckRun(open, 'h').title).toBe(
      'Better than the baseline b at equal run age by 8%; a drift over the full run not ruled out yet',
    );
    const closed = standingOf({
      state: 'stopped',
      decision: decision('faster-drift-not-ruled-out'),
      hasValue: false,
    });
    expect(monitorCheckRun(closed, 'h').conclusion).toBe('neutral');
    expect(monitorCheckRun(closed, 'h').title).toContain('drift not ruled out');
  });
});
