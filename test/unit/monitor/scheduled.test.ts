// The monitor action's inputs and report, moved out of actions/monitor/main.ts unchanged: the input
// checks and defaults, the outputs, log line, warnings and failure of a watched pass, the watch's line.
import { describe, expect, it } from 'vitest';
import { DEFAULT_YIELD_TO } from '../../../src/github/workflow-runs.js';
import type { WatchReport } from '../../../src/monitor/loop.js';
import type { CandidateReport } from '../../../src/monitor/report.js';
import { scheduledInputs, scheduledReport, watchLine } from '../../../src/monitor/scheduled.js';

const inputs = (given: Record<string, string>) => scheduledInputs((name) => given[name] ?? '');

describe('the monitor action inputs', () => {
  it('default to one pass, a 60 s tick and look, and the default workflows to yield to', () => {
    expect(inputs({})).toEqual({
      tick: 60,
      watch: { minutes: 0, lookSeconds: 60 },
      yieldTo: [...DEFAULT_YIELD_TO],
    });
    expect(inputs({ 'watch-minutes': '12', 'tick-seconds': '2', 'yield-to': 'topo, record\nother' })).toEqual(
      {
        tick: 2,
        watch: { minutes: 12, lookSeconds: 60 },
        yieldTo: ['topo', 'record', 'other'],
      },
    );
  });

  it('refuse a value out of range, tick-seconds first', () => {
    expect(() => inputs({ 'tick-seconds': '0', 'watch-minutes': '61' })).toThrow(
      'input tick-seconds must be a positive number, got "0"',
    );
    expect(() => inputs({ 'watch-minutes': '61' })).toThrow(
      'input watch-minutes must be between 0 and 60, got "61"',
    );
    expect(() => inputs({ 'watch-look-seconds': 'x' })).toThrow(
      'input watch-look-seconds must be a positive number, got "x"',
    );
  });
});

const candidate = (runName: string, changed: boolean) =>
  ({ runName, changed, state: 'running', experimentId: 'exp', pr: 1 }) as unknown as CandidateReport;
const watched = (over: Partial<WatchReport> = {}): WatchReport => ({
  pass: {
    candidates: [candidate('a', true), candidate('b', false)],
    errors: ['pass error'],
    warnings: ['w'],
  },
  looks: [],
  ended: 'one pass',
  yieldedTo: [],
  errors: ['look error'],
  ...over,
});

describe('the monitor action report', () => {
  it('sets the outputs, the log line and the warnings, and fails on the errors of the pass and its looks', () => {
    const report = scheduledReport([], watched(), {
      repositoryUrl: 'https://github.com/o/r',
      api: { reads: 3, writes: 1 },
    });
    expect(report.outputs).toEqual({
      candidates: '2',
      changed: '1',
      states: '{"a":"running","b":"running"}',
    });
    expect(report.line).toBe('2 candidate(s), 1 pull request(s) updated; GitHub API: 3 read(s), 1 write(s)');
    expect(report.warnings).toEqual(['w']);
    // the watch's errors are the pass's then each look's: the failure is theirs
    expect(report.failure).toBe('look error');
    expect(report.summary).toContain('GitHub API this pass: 3 read(s)');
    expect(
      scheduledReport([], watched({ errors: [] }), { repositoryUrl: '', api: { reads: 0, writes: 0 } }),
    ).not.toHaveProperty('failure');
  });

  it("says the watch's looks, its stops and why it ended", () => {
    const looks = [
      { at: 1, stopped: ['a'], errors: [] },
      { at: 2, stopped: [], errors: [] },
    ];
    expect(watchLine(watched({ looks, ended: 'yielded', yieldedTo: ['topo #4'] }))).toBe(
      'watch: 2 look(s), 1 stopped (a); ended: yielded to topo #4',
    );
    expect(watchLine(watched({ ended: 'time' }))).toBe('watch: 0 look(s), 0 stopped; ended: time');
  });
});
