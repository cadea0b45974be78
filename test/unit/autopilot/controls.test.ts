// The dashboard's controls, parsed apart from their execution, and the dashboard's text.
import { describe, expect, it } from 'vitest';
import { controlsOf, parseControl } from '../../../src/autopilot/controls.js';
import { type PilotRun, planStep } from '../../../src/autopilot/core.js';
import { dashboardMarker, renderDashboard } from '../../../src/autopilot/dashboard.js';
import { BASELINE_RUN, botRun, pilotInput } from '../../support/pilot.js';

describe('parseControl', () => {
  it('reads the four controls and nothing else', () => {
    expect(parseControl('/topo pause')).toEqual({ kind: 'control', control: 'pause' });
    expect(parseControl('/topo pause --now\nbecause the cluster is needed')).toEqual({
      kind: 'control',
      control: 'pause-now',
    });
    expect(parseControl('  /topo resume  ')).toEqual({ kind: 'control', control: 'resume' });
    expect(parseControl('/topo conclude')).toEqual({ kind: 'control', control: 'conclude' });
    expect(parseControl('looks good /topo pause')).toEqual({ kind: 'none' });
    expect(parseControl('/topology pause')).toEqual({ kind: 'none' });
  });

  it('refuses what it does not know with the controls it takes', () => {
    for (const body of ['/topo submit', '/topo pause later', '/topo', '/topo Pause', '/topo resume --now']) {
      const parsed = parseControl(body);
      expect(parsed.kind, body).toBe('invalid');
      if (parsed.kind === 'invalid') expect(parsed.reason).toContain('/topo resume');
    }
  });
});

describe('controlsOf', () => {
  const c = (body: string, allowed = true, login = 'alice') => ({ body, allowed, login });
  it('the latest permitted pause or resume wins; a comment without permission changes nothing', () => {
    expect(controlsOf([c('/topo pause')])).toEqual({ paused: true, stopLive: false });
    expect(controlsOf([c('/topo pause --now'), c('/topo resume')])).toEqual({
      paused: false,
      stopLive: false,
    });
    expect(controlsOf([c('/topo pause'), c('/topo resume', false, 'mallory')])).toEqual({
      paused: true,
      stopLive: false,
    });
    expect(controlsOf([c('/topo conclude', false, 'mallory')])).toEqual({ paused: false, stopLive: false });
  });
  it('conclude is final and names who concluded', () => {
    expect(controlsOf([c('/topo conclude', true, 'bob'), c('/topo resume'), c('/topo conclude')])).toEqual({
      paused: false,
      stopLive: false,
      concludedBy: 'bob',
    });
  });
});

describe('renderDashboard', () => {
  it('shows the rounds, the budget, the best against the baseline and what comes next', () => {
    const runs: PilotRun[] = [
      BASELINE_RUN,
      botRun('driver-up', 1, 12, { outcome: 'better', seconds: 80 }),
      botRun('cache', 1, 13, { seconds: 120, gpuHours: 6 }),
    ];
    const plan = planStep(pilotInput('e', runs));
    const text = renderDashboard('e', runs, plan);
    expect(text.startsWith(dashboardMarker('e'))).toBe(true);
    expect(text).toContain('**GPU-hours:** 24.0 spent, 0.0 committed to live runs, 96.0 left of 120.0.');
    expect(text).toContain("`driver-up`, 80.00 s/rollout against the baseline's 100.00 (20.0% faster)");
    expect(text).toContain('| 1 | `driver-up` | #12 | better | 80.00 | 8.0 |');
    expect(text).toContain('- close `cache` (#13): rejected by its decision');
    expect(text).toContain('- open round 2: up to 3 proposal(s) of `topo suggest` from `driver-up`');
  });
});
