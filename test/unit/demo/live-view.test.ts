import { describe, expect, it } from 'vitest';
import { type CandidateRow, changeLines, LiveView, renderTable } from '../../../src/demo/live-view.js';

const row = (over: Partial<CandidateRow> = {}): CandidateRow => ({
  name: 'baseline',
  state: 'warming',
  simulatedMinutes: 3.2,
  secondsPerRollout: 41.234,
  verdict: null,
  ...over,
});

describe('renderTable', () => {
  it('aligns columns and shows dashes for unknown values', () => {
    const lines = renderTable('round 1', [
      row(),
      row({ name: 'more-drivers', state: 'submitted', simulatedMinutes: null, secondsPerRollout: null }),
    ]);
    expect(lines[0]).toBe('round 1');
    expect(lines[1]).toMatch(/^candidate\s+state\s+sim min\s+s\/rollout\s+verdict$/);
    expect(lines[3]).toMatch(/^baseline\s+warming\s+3\.2\s+41\.23\s+-$/);
    expect(lines[4]).toMatch(/^more-drivers\s+submitted\s+-\s+-\s+-$/);
    const stateColumn = (lines[1] ?? '').indexOf('state');
    expect((lines[4] ?? '').indexOf('submitted')).toBe(stateColumn);
  });
});

describe('changeLines', () => {
  it('logs new rows, state and verdict changes, and every fifth simulated minute only', () => {
    expect(changeLines([], [row()])).toEqual(['baseline: warming, 3.2 sim min, 41.23 s/rollout']);
    expect(changeLines([row()], [row({ simulatedMinutes: 4.1 })])).toEqual([]);
    expect(changeLines([row()], [row({ simulatedMinutes: 5.0 })])).toHaveLength(1);
    expect(changeLines([row()], [row({ state: 'stable', verdict: 'stable' })])).toEqual([
      'baseline: stable, 3.2 sim min, 41.23 s/rollout, verdict: stable',
    ]);
  });
});

describe('LiveView', () => {
  it('redraws in place on a terminal', () => {
    let out = '';
    const view = new LiveView((t) => {
      out += t;
    }, true);
    view.update('baseline', [row()]);
    expect(out).not.toContain('\u001b[1A');
    view.update('baseline', [row({ state: 'stable' })]);
    // The second draw first erases the four lines of the first (title, header, rule, row).
    expect(out.split('\u001b[1A\u001b[2K').length - 1).toBe(4);
    expect(out).toContain('stable');
  });

  it('writes plain lines without escape codes when not a terminal', () => {
    let out = '';
    const view = new LiveView((t) => {
      out += t;
    }, false);
    view.log('submitted baseline');
    view.update('baseline', [row()]);
    view.update('baseline', [row()]);
    view.update('baseline', [row({ state: 'stable', verdict: 'accepted (40.10 s)' })]);
    expect(out).not.toContain('\u001b');
    expect(out.trim().split('\n')).toEqual([
      'submitted baseline',
      'baseline: warming, 3.2 sim min, 41.23 s/rollout',
      'baseline: stable, 3.2 sim min, 41.23 s/rollout, verdict: accepted (40.10 s)',
    ]);
  });
});
