// The autopilot's reconcile step on runs built in memory: rounds, the stop rule, max_rounds, the
// budget, the dashboard's controls, people's pull requests, and that a repeated pass repeats nothing.
import { describe, expect, it } from 'vitest';
import {
  botBranch,
  budgetOf,
  candidateOfBranch,
  oncePerPull,
  type PilotAction,
  type PilotInput,
  type PilotRun,
  planStep,
} from '../../../src/autopilot/core.js';
import { BASELINE_RUN, botRun, POLICY, pilotInput } from '../../support/pilot.js';

const EXP = 'topology-opt-vavam-ord-20261202';
const COST = 10;
const baseline = BASELINE_RUN;
let pr = 10;
const bot = (name: string, round: number, more: Partial<PilotRun> = {}): PilotRun =>
  botRun(name, round, pr++, more);
const input = (runs: PilotRun[], more: Partial<PilotInput> = {}): PilotInput => pilotInput(EXP, runs, more);
const kinds = (i: PilotInput) => planStep(i).actions.map((a) => a.kind);
/** A round's winner as the next round finds it: merged (the bot merged it, or a writer) and recorded. */
const merged = { pull: 'merged' as const, recorded: true };

describe('bot branches', () => {
  it('key a candidate by experiment and name, and read back only their own experiment', () => {
    expect(botBranch(EXP, 'driver-up')).toBe(`topo/autopilot/${EXP}/driver-up`);
    expect(candidateOfBranch(EXP, `topo/autopilot/${EXP}/driver-up`)).toBe('driver-up');
    expect(candidateOfBranch(EXP, `topo/autopilot/${EXP}-b/driver-up`)).toBeNull();
    expect(candidateOfBranch(EXP, `topo/${EXP}/driver-up`)).toBeNull();
    expect(candidateOfBranch(EXP, `topo/autopilot/${EXP}/a/b`)).toBeNull();
  });
});

describe('planStep', () => {
  it('waits for the baseline, then opens round 1 from it with `parallel` candidates', () => {
    const p0 = planStep(input([{ ...baseline, request: 'live', outcome: null, gpuHours: 2 }]));
    expect(p0.actions).toEqual([]);
    expect(p0.waiting).toMatch(/baseline/);
    expect(planStep(input([baseline])).actions).toEqual([
      { kind: 'open', round: 1, parent: 'baseline', count: 3 },
    ]);
  });

  it('a failed baseline starts round 1 too (suggest proposes from its failure)', () => {
    const failed = { ...baseline, outcome: 'failed' as const, seconds: undefined };
    expect(planStep(input([failed])).actions).toEqual([
      { kind: 'open', round: 1, parent: 'baseline', count: 3 },
    ]);
  });

  it("submits the round's bot pull requests once each: a Request made is never made again", () => {
    const opened = [
      baseline,
      bot('a', 1, { request: 'none', outcome: null, gpuHours: 0 }),
      bot('b', 1, { request: 'none', outcome: null, gpuHours: 0 }),
    ];
    const first = planStep(input(opened));
    expect(first.actions.map((a) => [a.kind, 'name' in a ? a.name : ''])).toEqual([
      ['submit', 'a'],
      ['submit', 'b'],
    ]);
    const after = opened.map((r) => (r.round === 1 ? { ...r, request: 'live' as const } : r));
    const second = planStep(input(after));
    expect(second.actions).toEqual([]);
    expect(second.waiting).toBe('round 1 is running');
  });

  it('under submit: approval waits for a writer instead of submitting', () => {
    const p = planStep(
      input([baseline, bot('a', 1, { request: 'none', outcome: null, gpuHours: 0 })], {
        policy: { ...POLICY, submit: 'approval' },
      }),
    );
    expect(p.actions).toEqual([]);
    expect(p.waiting).toMatch(/\/topo submit/);
  });

  it("closes a finished round's losers and opens the next round from its winner", () => {
    const runs = [
      baseline,
      bot('a', 1, { outcome: 'better', seconds: 80, ...merged }),
      bot('b', 1),
      bot('c', 1, { outcome: 'not-better', seconds: 99 }),
    ];
    const p = planStep(input(runs));
    expect(p.actions).toEqual([
      { kind: 'close', name: 'b', pr: runs[2]?.pr, why: 'rejected' },
      { kind: 'close', name: 'c', pr: runs[3]?.pr, why: 'rejected' },
      { kind: 'open', round: 2, parent: 'a', count: 3 },
    ]);
    expect(p.campaign.best).toEqual({ name: 'a', seconds: 80 });
  });

  it('closes an earlier winner left open that a later round beat as superseded by it', () => {
    const runs = [
      baseline,
      bot('a', 1, { outcome: 'better', seconds: 80 }),
      bot('d', 2, { outcome: 'better', seconds: 60, ...merged }),
    ];
    expect(planStep(input(runs)).actions).toEqual([
      { kind: 'close', name: 'a', pr: runs[1]?.pr, why: 'superseded', by: 'd' },
      { kind: 'open', round: 3, parent: 'd', count: 3 },
    ]);
  });

  it("a finished round's winner is merged before the next round opens from it (merge: auto), or left to a writer (merge: manual)", () => {
    const runs = [baseline, bot('a', 1, { outcome: 'better', seconds: 80 }), bot('b', 1)];
    const auto = { policy: { ...POLICY, merge: 'auto' as const, requiredChecks: ['topo/monitor'] } };
    expect(planStep(input(runs, auto)).actions).toEqual([
      { kind: 'close', name: 'b', pr: runs[2]?.pr, why: 'rejected' },
      { kind: 'label', name: 'a', pr: runs[1]?.pr },
      { kind: 'merge', name: 'a', pr: runs[1]?.pr, why: 'winner' },
    ]);
    const manual = planStep(input(runs));
    expect(manual.actions.map((a) => a.kind)).toEqual(['close', 'label']);
    expect(manual.stalls.map((x) => x.fix)).toEqual([
      `merge #${runs[1]?.pr} to record it as the current best; the next round opens from it`,
    ]);
    // merged, not yet recorded: the record workflow (or the pass that merged it) first
    const unrecorded = planStep(input([baseline, { ...runs[1]!, pull: 'merged' }, runs[2]!], auto));
    expect(unrecorded.actions.map((a) => a.kind)).toEqual(['close']);
    expect(unrecorded.waiting).toMatch(/waiting for the record of the winner/);
  });

  it('once concluded, the bot pull requests left open are closed in the step that labels and merges the winner', () => {
    const runs = [
      baseline,
      bot('a', 1, { outcome: 'better', seconds: 80 }),
      bot('b', 1, { request: 'live', outcome: null }),
    ];
    const p = planStep(
      input(runs, {
        policy: { ...POLICY, merge: 'auto' },
        concluded: { reason: 'max_rounds 1 reached', winner: 'a' },
      }),
    );
    expect(p.actions).toEqual([
      { kind: 'close', name: 'b', pr: runs[2]?.pr, why: 'concluded' },
      { kind: 'label', name: 'a', pr: runs[1]?.pr },
      { kind: 'merge', name: 'a', pr: runs[1]?.pr, why: 'winner' },
    ]);
  });

  it('concludes on the stop rule with the best as the winner', () => {
    const runs = [
      baseline,
      bot('a', 1, { outcome: 'better', seconds: 80, ...merged }),
      bot('b', 2),
      bot('c', 3),
    ];
    const p = planStep(input(runs));
    expect(p.actions.at(-1)).toEqual({
      kind: 'conclude',
      reason: expect.stringMatching(/no decided gain in the last 2/),
      winner: 'a',
    });
  });

  it('concludes at max_rounds, with no winner when nothing beat the baseline', () => {
    const runs = [baseline, bot('a', 1)];
    const p = planStep(input(runs, { policy: { ...POLICY, maxRounds: 1 } }));
    expect(p.actions.at(-1)).toEqual({ kind: 'conclude', reason: 'max_rounds 1 reached', winner: null });
  });

  it("budget: a run starts only when spent + live runs' expected + its own fit, and a round shrinks to fit", () => {
    // 10 spent; two submitted at 10 each fit in 35, the third would not.
    const runs = [
      baseline,
      ...['a', 'b', 'c'].map((n) => bot(n, 1, { request: 'none', outcome: null, gpuHours: 0 })),
    ];
    const p = planStep(input(runs, { policy: { ...POLICY, gpuHours: 35 } }));
    expect(p.actions.map((a) => a.kind)).toEqual(['submit', 'submit']);
    expect(p.waiting).toMatch(/budget/);
    // 10 + 2*8 spent = 26 of 45: one more run of 10 fits, two do not.
    const done = [baseline, bot('a', 1, { outcome: 'better', seconds: 80, ...merged }), bot('b', 1)];
    expect(planStep(input(done, { policy: { ...POLICY, gpuHours: 45 } })).actions.at(-1)).toEqual({
      kind: 'open',
      round: 2,
      parent: 'a',
      count: 1,
    });
    expect(planStep(input(done, { policy: { ...POLICY, gpuHours: 30 } })).actions.at(-1)).toMatchObject({
      kind: 'conclude',
      reason: expect.stringMatching(/^budget/),
      winner: 'a',
    });
  });

  it("budget spent: stops the bot's live runs and concludes", () => {
    const runs = [baseline, bot('a', 1, { request: 'live', outcome: null, gpuHours: 30 })];
    const p = planStep(input(runs, { policy: { ...POLICY, gpuHours: 40 } }));
    expect(p.actions).toEqual([
      { kind: 'stop', name: 'a', pr: runs[1]?.pr, reason: expect.stringMatching(/budget: 40 of 40/) },
      // none of the bot's pull requests is left open but the winner's
      { kind: 'close', name: 'a', pr: runs[1]?.pr, why: 'concluded' },
      { kind: 'conclude', reason: expect.stringMatching(/budget/), winner: null },
    ]);
  });

  it('budget arithmetic: live runs commit what they are still expected to take', () => {
    const runs = [
      baseline,
      bot('a', 1, { request: 'live', outcome: null, gpuHours: 4 }),
      bot('b', 1, { request: 'live', outcome: null, gpuHours: 12 }),
    ];
    expect(budgetOf(runs, 120, COST)).toEqual({ limit: 120, spent: 26, committed: 6, left: 88 });
  });

  it('pause holds everything new, --now stops live bot runs, resume goes on', () => {
    const runs = [
      baseline,
      bot('a', 1, { request: 'live', outcome: null, gpuHours: 1 }),
      bot('b', 1, { request: 'none', outcome: null, gpuHours: 0 }),
    ];
    const paused = planStep(input(runs, { controls: { paused: true, stopLive: false } }));
    expect(paused.actions).toEqual([]);
    expect(paused.waiting).toMatch(/paused/);
    expect(kinds(input(runs, { controls: { paused: true, stopLive: true } }))).toEqual(['stop']);
    expect(kinds(input(runs))).toEqual(['submit']);
    expect(planStep(input(runs, { policy: { ...POLICY, enabled: false } })).waiting).toMatch(
      /enabled is false/,
    );
  });

  // issue 42: the round's reference job (a run of the best beside the candidates) kept running and
  // charging the budget after a `pause --now` stopped the candidates
  it('pause --now and the ending stop the round’s reference job too, unless a person’s run is decided against it', () => {
    const runs = [baseline, bot('a', 1, { request: 'live', outcome: null, gpuHours: 1 })];
    const referenceJobs = [{ name: 'baseline', pr: runs[1]?.pr as number }];
    const now = planStep(input(runs, { controls: { paused: true, stopLive: true }, referenceJobs }));
    expect(now.actions).toEqual([
      { kind: 'stop', name: 'a', pr: runs[1]?.pr, reason: expect.stringMatching(/paused/) },
      {
        kind: 'stop',
        name: 'baseline',
        pr: runs[1]?.pr,
        reason: expect.stringMatching(/paused/),
        reference: true,
      },
    ]);
    // a plain pause lets the running candidates reach their decision: the reference goes on with them
    expect(
      planStep(input(runs, { controls: { paused: true, stopLive: false }, referenceJobs })).actions,
    ).toEqual([]);
    const spent = [baseline, bot('a', 1, { request: 'live', outcome: null, gpuHours: 500 })];
    const ending = planStep(input(spent, { referenceJobs })).actions.filter((a) => a.kind === 'stop');
    expect(ending.map((a) => [a.name, 'reference' in a])).toEqual([
      ['a', false],
      ['baseline', true],
    ]);
    // a person's live candidate (as in the test below) is decided against the reference
    const person: PilotRun = {
      ...bot('mine', 1, { request: 'live', outcome: null }),
      round: null,
      origin: 'person',
    };
    const withPerson = planStep(
      input([...runs, person], { controls: { paused: true, stopLive: true }, referenceJobs }),
    );
    expect(withPerson.actions.map((a) => a.kind === 'stop' && a.name)).toEqual(['a']);
  });

  it('/topo conclude concludes at once, the best so far the winner', () => {
    const runs = [baseline, bot('a', 1, { outcome: 'better', seconds: 80 })];
    const p = planStep(input(runs, { controls: { paused: false, stopLive: false, concludedBy: 'alice' } }));
    expect(p.actions.at(-1)).toEqual({
      kind: 'conclude',
      reason: 'concluded on the dashboard by @alice',
      winner: 'a',
    });
    expect(planStep(input(runs, { concluded: { reason: 'x' } })).actions).toEqual([]);
  });

  it('a bot pull request a person closed is withdrawn: it holds no round and is never closed again', () => {
    const runs = [
      baseline,
      bot('a', 1, { pull: 'closed', request: 'none', outcome: null, gpuHours: 0 }),
      bot('b', 1, { outcome: 'better', seconds: 90, ...merged }),
    ];
    expect(planStep(input(runs)).actions).toEqual([{ kind: 'open', round: 2, parent: 'b', count: 3 }]);
  });

  it("a person's push takes the branch over: never submitted, stopped or closed by the bot", () => {
    const runs = [baseline, bot('a', 1, { request: 'none', outcome: null, gpuHours: 0, takenOver: true })];
    // it leaves the round, which goes on without it: the next round opens, nothing touches `a`
    expect(planStep(input(runs)).actions.map((a) => a.kind)).toEqual(['open']);
    const paused = [baseline, bot('a', 1, { request: 'live', outcome: null, gpuHours: 0, takenOver: true })];
    expect(planStep(input(paused, { controls: { paused: true, stopLive: true } })).actions).toEqual([]);
  });

  it("a person's live candidate takes a slot of the next round, and the round waits for it", () => {
    const person: PilotRun = {
      name: 'mine',
      round: null,
      origin: 'person',
      pr: 99,
      pull: 'open',
      request: 'live',
      outcome: null,
      gpuHours: 1,
    };
    const runs = [baseline, bot('a', 1, { outcome: 'better', seconds: 80, ...merged }), person];
    expect(planStep(input(runs)).waiting).toMatch(/round 1 is running/);
    const done = { ...person, request: 'ended' as const, outcome: 'worse' as const, gpuHours: 8 };
    expect(planStep(input([...runs.slice(0, 2), done])).actions).toEqual([
      { kind: 'open', round: 2, parent: 'a', count: 3 },
    ]);
  });
});

describe('people first', () => {
  it("a person's candidate decided better is the best the next round starts from", () => {
    const mine: PilotRun = {
      name: 'mine',
      round: null,
      origin: 'person',
      pr: 98,
      pull: 'open',
      request: 'ended',
      outcome: 'better',
      seconds: 70,
      gpuHours: 8,
    };
    expect(planStep(input([baseline, mine])).actions).toEqual([
      { kind: 'open', round: 1, parent: 'mine', count: 3 },
    ]);
  });

  it('a taken-over bot run leaves its round: the round goes on without it', () => {
    const runs = [
      baseline,
      bot('mine-now', 1, { takenOver: true, request: 'none', outcome: null }),
      bot('slow', 1, { outcome: 'worse' }),
    ];
    expect(kinds(input(runs))).toContain('open');
  });
});

describe('the baseline: the bot measures it first when no one has', () => {
  const botBase = (more: Partial<PilotRun>) =>
    bot('baseline', 0, { seconds: 100, outcome: 'equivalent', ...more });

  it('an experiment with no baseline run opens the baseline’s own pull request (round 0), once, within the budget', () => {
    expect(planStep(input([])).actions).toEqual([{ kind: 'open', round: 0, parent: '', count: 1 }]);
    const tight = planStep(input([], { policy: { ...POLICY, gpuHours: 5 } }));
    expect(tight.actions).toEqual([]);
    expect(tight.waiting).toMatch(/budget has no room for the baseline/);
    // a person's run without a recorded baseline: theirs to record first
    const mine = bot('mine', 0, { round: null, origin: 'person', request: 'live', outcome: null });
    expect(planStep(input([mine])).actions).toEqual([]);
  });

  it('submits the bot’s baseline, waits while it runs, then merges it measured (merge: auto) so the record holds the reference', () => {
    const opened = botBase({ request: 'none', outcome: null, gpuHours: 0 });
    expect(planStep(input([opened])).actions).toEqual([{ kind: 'submit', name: 'baseline', pr: opened.pr }]);
    const running = planStep(input([{ ...opened, request: 'live' }]));
    expect(running.actions).toEqual([]);
    expect(running.waiting).toBe('the baseline is running');
    const measured = botBase({});
    const auto = { policy: { ...POLICY, merge: 'auto' as const, requiredChecks: ['topo/monitor'] } };
    expect(planStep(input([measured], auto)).actions).toEqual([
      { kind: 'merge', name: 'baseline', pr: measured.pr, why: 'baseline' },
    ]);
  });

  it('under merge: manual the measured baseline is a person’s to merge, said on the dashboard; a failed one is closed and recorded', () => {
    const measured = botBase({});
    const p = planStep(input([measured]));
    expect(p.actions).toEqual([]);
    expect(p.stalls).toEqual([
      expect.objectContaining({ pr: measured.pr, fix: expect.stringMatching(/^merge #\d+ to record it/) }),
    ]);
    const failed = botBase({ outcome: 'failed', seconds: undefined });
    expect(planStep(input([failed])).actions).toEqual([
      { kind: 'close', name: 'baseline', pr: failed.pr, why: 'failed' },
    ]);
  });
});

describe('submit: approval', () => {
  it('a writer’s approving review of the head starts the run (within the budget); the others wait, named', () => {
    const runs = [
      baseline,
      bot('a', 1, { request: 'none', outcome: null, gpuHours: 0, approved: true }),
      bot('b', 1, { request: 'none', outcome: null, gpuHours: 0 }),
    ];
    const p = planStep(input(runs, { policy: { ...POLICY, submit: 'approval' } }));
    expect(p.actions).toEqual([{ kind: 'submit', name: 'a', pr: runs[1]?.pr }]);
    expect(p.waiting).toBe(`waiting for a writer's approving review or /topo submit on #${runs[2]?.pr}`);
  });
});

describe('the loop closes after the conclusion', () => {
  const winner = bot('a', 1, { outcome: 'better', seconds: 80 });
  const concluded = { reason: 'max_rounds 1 reached', winner: 'a' };
  const auto = { ...POLICY, merge: 'auto' as const, requiredChecks: ['topo/validate', 'topo/monitor'] };

  it('merge: auto labels the winner and merges it (the stage waits for its required checks), then reports', () => {
    expect(planStep(input([baseline, winner], { policy: auto, concluded })).actions).toEqual([
      { kind: 'label', name: 'a', pr: winner.pr },
      { kind: 'merge', name: 'a', pr: winner.pr, why: 'winner' },
    ]);
    const labelled = { ...winner, labelled: true };
    expect(planStep(input([baseline, labelled], { policy: auto, concluded })).actions).toEqual([
      { kind: 'merge', name: 'a', pr: winner.pr, why: 'winner' },
    ]);
    // merged by a person before the bot, and recorded: the report
    const merged = { ...winner, pull: 'merged' as const, recorded: true };
    expect(planStep(input([baseline, merged], { policy: auto, concluded })).actions).toEqual([
      { kind: 'report', winner: 'a' },
    ]);
    expect(
      planStep(input([baseline, merged], { concluded: { ...concluded, reported: true } })).actions,
    ).toEqual([]);
  });

  it('merge: manual labels the winner and leaves its merge to a person, on the dashboard; the report waits for the record', () => {
    const p = planStep(input([baseline, winner], { concluded }));
    expect(p.actions).toEqual([{ kind: 'label', name: 'a', pr: winner.pr }]);
    expect(p.stalls.map((s) => s.fix)).toEqual([
      expect.stringMatching(/^merge #\d+ to record it; the final report/),
    ]);
    const unrecorded = planStep(input([baseline, { ...winner, pull: 'merged' }], { concluded }));
    expect(unrecorded.actions).toEqual([]);
    expect(unrecorded.waiting).toMatch(/waiting for the record of the winner/);
  });

  it('no winner, or a winner closed without a merge: the report at once', () => {
    expect(planStep(input([baseline], { concluded: { reason: 'x', winner: null } })).actions).toEqual([
      { kind: 'report', winner: null },
    ]);
    const closed = { ...winner, pull: 'closed' as const };
    expect(planStep(input([baseline, closed], { concluded })).actions).toEqual([
      { kind: 'report', winner: null },
    ]);
  });
});

describe('nothing stalls silently', () => {
  it('a bot pull request someone else pushed to is on the dashboard with what they can do', () => {
    const taken = bot('a', 1, { takenOver: true, request: 'none', outcome: null });
    const p = planStep(input([baseline, taken]));
    expect(p.stalls).toEqual([
      {
        pr: taken.pr,
        what: expect.stringMatching(
          /its head is not the autopilot's commit \(an amended or force-pushed commit counts\)/,
        ),
        fix: expect.stringMatching(/`\/topo submit` on #\d+ to run it as your candidate, or close it/),
      },
    ]);
  });
});

describe('each bot pull request is closed once (issue 42)', () => {
  /** Every action of a kind on one pull request, more than once: none may be. */
  const twice = (actions: readonly PilotAction[]) => {
    const keys = actions.flatMap((a) =>
      'pr' in a ? [`${a.kind}:${a.pr}${a.kind === 'stop' && a.reference ? ':reference' : ''}`] : [],
    );
    return keys.filter((k, i) => keys.indexOf(k) !== i);
  };

  it("the stop rule's conclusion closes a finished round's loser once, not in the housekeeping and again in the conclusion", () => {
    const loser = bot('a', 1);
    const p = planStep(input([baseline, loser], { policy: { ...POLICY, maxRounds: 1 } }));
    expect(p.actions).toEqual([
      { kind: 'close', name: 'a', pr: loser.pr, why: 'rejected' },
      { kind: 'conclude', reason: 'max_rounds 1 reached', winner: null },
    ]);
  });

  it("suggest's stop advice (the campaign loop's planRound) closes the losers once, the winner left for its label", () => {
    const runs = [
      baseline,
      bot('a', 1, { outcome: 'better', seconds: 80, ...merged }),
      bot('b', 2, { outcome: 'worse', seconds: 90 }),
      bot('c', 2, { outcome: 'not-better', seconds: 85 }),
    ];
    const suggestion = { proposals: [], stop: { stop: true, reason: 'every move was tried' }, outlook: null };
    expect(planStep(input(runs, { suggestion })).actions).toEqual([
      { kind: 'close', name: 'b', pr: runs[2]?.pr, why: 'rejected' },
      { kind: 'close', name: 'c', pr: runs[3]?.pr, why: 'rejected' },
      { kind: 'conclude', reason: 'suggest: every move was tried', winner: 'a' },
    ]);
  });

  it('a budget or /topo conclude ending closes each loser once, a live run stopped and closed as concluded', () => {
    const runs = [
      baseline,
      bot('a', 1, { outcome: 'better', seconds: 80, ...merged }),
      bot('b', 1),
      bot('c', 2, { request: 'live', outcome: null, gpuHours: 4 }),
    ];
    const controls = { paused: false, stopLive: false, concludedBy: 'alice' };
    const reason = 'concluded on the dashboard by @alice';
    expect(planStep(input(runs, { controls })).actions).toEqual([
      { kind: 'stop', name: 'c', pr: runs[3]?.pr, reason },
      { kind: 'close', name: 'b', pr: runs[2]?.pr, why: 'rejected' },
      { kind: 'close', name: 'c', pr: runs[3]?.pr, why: 'concluded' },
      { kind: 'conclude', reason, winner: 'a' },
    ]);
  });

  it('no plan carries two actions of one kind for one pull request, whatever the runs hold', () => {
    // one candidate read twice (a rerun's earlier attempt beside its new one), one pull request under two names
    const b = bot('b', 1, { request: 'live', outcome: null, gpuHours: 2 });
    const again = { ...b, request: 'ended' as const, outcome: 'undecided' as const, attempt: 1 };
    const alias = { ...bot('d', 1), pr: b.pr };
    const runs = [baseline, bot('a', 1, { outcome: 'better', seconds: 80 }), b, again, alias];
    const auto = { ...POLICY, merge: 'auto' as const };
    const inputs: PilotInput[] = [
      input(runs),
      input(runs, { policy: { ...auto, gpuHours: 20 } }),
      input(runs, { controls: { paused: false, stopLive: false, concludedBy: 'alice' } }),
      input(runs, { controls: { paused: true, stopLive: true } }),
      input(runs, { policy: auto, concluded: { reason: 'max_rounds 1 reached', winner: 'a' } }),
      input(runs, { policy: { ...POLICY, maxRounds: 1 } }),
    ];
    for (const i of inputs) expect(twice(planStep(i).actions)).toEqual([]);
    // the concluded pass closes the pull request the two entries share once
    const closes = planStep(inputs[4]!).actions.filter((a) => a.kind === 'close');
    expect(closes).toEqual([{ kind: 'close', name: 'b', pr: b.pr, why: 'concluded' }]);
  });

  it("oncePerPull keeps the first of a kind per pull request; a run's stop and its pull request's reference stop are two jobs", () => {
    const actions: PilotAction[] = [
      { kind: 'stop', name: 'a', pr: 7, reason: 'r' },
      { kind: 'stop', name: 'best', pr: 7, reason: 'r', reference: true },
      { kind: 'close', name: 'a', pr: 7, why: 'rejected' },
      { kind: 'close', name: 'a', pr: 7, why: 'concluded' },
      { kind: 'conclude', reason: 'r', winner: null },
    ];
    expect(oncePerPull(actions)).toEqual([actions[0], actions[1], actions[2], actions[4]]);
  });
});
