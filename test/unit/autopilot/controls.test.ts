// The dashboard's controls (the registry's dashboard commands, parsed by the one parser) folded into
// the bot's state, each answered, one commenter's replies limited per pass; and the dashboard's text.
import { describe, expect, it } from 'vitest';
import { type PilotRun, planStep } from '../../../src/autopilot/core.js';
import { dashboardMarker, renderDashboard } from '../../../src/autopilot/dashboard.js';
import {
  controlsOfState,
  EMPTY_PILOT_STATE,
  PilotStateError,
  parsePilotState,
  renderPilotState,
} from '../../../src/autopilot/state.js';
import { applyCommands, REPLIES_PER_COMMENTER } from '../../../src/commands/dashboard.js';
import { dashboardHelp } from '../../../src/commands/help.js';
import { COMMANDS } from '../../../src/commands/registry.js';
import { BASELINE_RUN, botRun, pilotInput } from '../../support/pilot.js';

describe('applyCommands (the bot’s state from the dashboard’s commands)', () => {
  let id = 0;
  const c = (body: string, allowed = true, login = 'alice') => ({ id: ++id, body, allowed, login });

  it('the latest permitted pause or resume wins; a comment without permission changes nothing', () => {
    const paused = applyCommands(EMPTY_PILOT_STATE, [c('/topo pause')]).state;
    expect(controlsOfState(paused)).toEqual({ paused: true, stopLive: false });
    const resumed = applyCommands(EMPTY_PILOT_STATE, [c('/topo pause --now'), c('/topo resume')]).state;
    expect(controlsOfState(resumed)).toEqual({ paused: false, stopLive: false });
    const held = applyCommands(EMPTY_PILOT_STATE, [
      c('/topo pause'),
      c('/topo resume', false, 'mallory'),
    ]).state;
    expect(controlsOfState(held)).toEqual({ paused: true, stopLive: false });
    const none = applyCommands(EMPTY_PILOT_STATE, [c('/topo conclude', false, 'mallory')]).state;
    expect(controlsOfState(none)).toEqual({ paused: false, stopLive: false });
  });

  it('conclude is final and names who concluded', () => {
    const s = applyCommands(EMPTY_PILOT_STATE, [
      c('/topo conclude', true, 'bob'),
      c('/topo resume'),
      c('/topo conclude'),
    ]);
    expect(controlsOfState(s.state)).toEqual({ paused: false, stopLive: false, concludedBy: 'bob' });
    expect(s.replies.map((r) => r.text.split(':')[0])).toEqual(['@bob', '@alice', '@alice']);
    expect(s.replies[1]?.text).toContain('a conclusion is final');
  });

  it('answers every /topo comment once (applied, refused, mistyped) and nothing else', () => {
    const comments = [c('/topo pause'), c('/topo resume', false, 'rita'), c('/topo pasue'), c('thanks!')];
    const first = applyCommands(EMPTY_PILOT_STATE, comments);
    expect(first.replies.map((r) => r.id)).toEqual(comments.slice(0, 3).map((x) => x.id));
    expect(first.replies[0]?.text).toMatch(/^@alice: paused/);
    expect(first.replies[1]?.text).toMatch(/^@rita: refused: dashboard commands need write access/);
    expect(first.replies[2]?.text).toMatch(
      /^@alice: not done: unknown command `pasue`; the dashboard takes: `\/topo pause \[--now\]`/,
    );
    expect(first.state.lastComment).toBe(comments[3]?.id);
    // a second pass over the same comments (or one that wrote in between) answers none again
    expect(applyCommands(first.state, comments)).toEqual({ state: first.state, replies: [] });
  });

  it('answers one commenter’s flood in a few replies and one that sums up the rest (not one each)', () => {
    const flood = Array.from({ length: 300 }, (_, i) =>
      c(i % 2 ? '/topo conclude' : '/topo resume', false, 'mallory'),
    );
    const mine = [c('/topo pause'), c('/topo resume')];
    const { state, replies } = applyCommands(EMPTY_PILOT_STATE, [...flood, ...mine]);
    expect(controlsOfState(state)).toEqual({ paused: false, stopLive: false });
    const theirs = replies.filter((r) => r.text.startsWith('@mallory'));
    expect(theirs).toHaveLength(REPLIES_PER_COMMENTER + 1);
    expect(theirs.at(-1)).toEqual({
      id: flood.at(-1)?.id,
      text: `@mallory: ${300 - REPLIES_PER_COMMENTER} more \`/topo\` comments in this pass, answered together to keep within GitHub's limits: ${300 - REPLIES_PER_COMMENTER} refused (dashboard commands need write access; nothing changed).`,
    });
    // the writer's own commands are still answered one by one
    expect(replies.filter((r) => r.text.startsWith('@alice')).map((r) => r.id)).toEqual(
      mine.map((m) => m.id),
    );
    expect(replies.length).toBe(REPLIES_PER_COMMENTER + 3);
  });

  it('round-trips its stored text and refuses a state that does not parse (never an empty one)', () => {
    const s = {
      ...EMPTY_PILOT_STATE,
      paused: { by: 'alice', now: true },
      rounds: { p1: 2 },
      stopped: ['p1'],
      dashboards: [4, 9],
    };
    expect(parsePilotState(renderPilotState(s))).toEqual(s);
    // a state written before the former dashboards were kept reads as none kept
    const { dashboards: _, ...older } = s;
    expect(parsePilotState(JSON.stringify(older)).dashboards).toEqual([]);
    for (const text of [
      '',
      '{"version":1}',
      renderPilotState(s).replace('"p1": 2', '"p1": "two"'),
      JSON.stringify({ ...s, dashboards: ['#4'] }),
    ])
      expect(() => parsePilotState(text)).toThrow(PilotStateError);
  });
});

describe('renderDashboard', () => {
  it('shows the rounds, the budget, the best against the baseline and what comes next', () => {
    const runs: PilotRun[] = [
      BASELINE_RUN,
      botRun('driver-up', 1, 12, { outcome: 'better', seconds: 80, pull: 'merged', recorded: true }),
      botRun('cache', 1, 13, { seconds: 120, gpuHours: 6 }),
    ];
    const plan = planStep(pilotInput('e', runs));
    const text = renderDashboard('e', runs, plan, dashboardHelp(COMMANDS));
    expect(text.startsWith(dashboardMarker('e'))).toBe(true);
    expect(text).toContain('**GPU-hours:** 24.0 spent, 0.0 committed to live runs, 96.0 left of 120.0.');
    expect(text).toContain("`driver-up`, 80.00 s/rollout against the baseline's 100.00 (20.0% faster)");
    expect(text).toContain('| 1 | `driver-up` | #12 | better | 80.00 | 8.0 |');
    expect(text).toContain('- close `cache` (#13): rejected by its decision');
    expect(text).toContain('- open round 2: up to 3 proposal(s) of `topo suggest` from `driver-up`');
  });
});
