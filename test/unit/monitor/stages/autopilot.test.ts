// Stage `autopilot` over a pass state built in memory and an AutopilotPort that keeps its pull
// requests in a list: what it opens, requests, closes and stops, and that a second pass over what
// the first left repeats nothing. The GitHub adapter of the port is tested on the local GitHub API
// (test/integration/github/autopilot-github.test.ts).
import { describe, expect, it } from 'vitest';
import type { PilotRun } from '../../../../src/autopilot/core.js';
import { type AutopilotPolicy, policyOf } from '../../../../src/autopilot/policy.js';
import type { BotPull } from '../../../../src/autopilot/pulls.js';
import { botPullBody, readBotMarker } from '../../../../src/autopilot/pulls.js';
import { EMPTY_PILOT_STATE, type PilotState } from '../../../../src/autopilot/state.js';
import { runJob } from '../../../../src/judge/job.js';
import { autopilot } from '../../../../src/monitor/autopilot.js';
import { runStages, stagesNamed, withStage } from '../../../../src/monitor/pass.js';
import type {
  AutopilotPort,
  MonitorCandidate,
  MonitorExperiment,
  Proposed,
} from '../../../../src/monitor/ports.js';
import {
  actPlan,
  type CandidatePass,
  type ExperimentPass,
  type PassState,
} from '../../../../src/monitor/state.js';
import { parseSqueue } from '../../../../src/slurm/parse.js';
import type { Experiment } from '../../../../src/types/generated/experiment.js';
import type { AutopilotContext } from '../../../../src/usecases/autopilot.js';
import {
  analysisOf,
  callLog,
  EXPERIMENT_ID,
  experimentOf,
  NOW,
  observeWith,
  readState,
  recordingPorts,
  requestedCandidate,
  runningJob,
} from '../../../support/monitor-state.js';
import { BASELINE_RUN, botRun } from '../../../support/pilot.js';

/** The login the bot's own Requests carry (actions/monitor/autopilot.ts requestRun). */
const BOT = 'topo-bot[bot]';
const BLOCK = { enabled: true, gpu_hours: 120, parallel: 2, max_rounds: 4 };
const baseline = BASELINE_RUN;

function context(exp: MonitorExperiment, policy: Partial<AutopilotPolicy> = {}, recorded = [baseline]) {
  const base = policyOf(exp.experiment) as AutopilotPolicy;
  return {
    experiment: exp.experiment,
    policy: { ...base, ...policy },
    runGpuHours: 10,
    recorded,
    refused: [],
  };
}

/** A commit id of the port's world: 40 hex digits from a name. */
const shaOf = (name: string) => Buffer.from(name).toString('hex').padEnd(40, '0').slice(0, 40);

/** The port's world: its pull requests, the bot's state, the Requests it made, the dashboard, every call. */
function world(ctx: () => AutopilotContext, state: Partial<PilotState> = {}) {
  const pulls: BotPull[] = [];
  const calls: string[] = [];
  const dashboard: { body?: string; closed?: boolean } = {};
  const pilot = { state: { ...EMPTY_PILOT_STATE, ...state } };
  const commits = new Map<string, { candidate: string; round: number; body: string }>();
  const checks: Record<string, string | null> = {};
  const refuse = new Map<string, { why: string; fix: string }>();
  let next = 100;
  // suggest's answer beyond its proposals: its stop advice and the model's outlook
  const advice = {
    names: ['p1', 'p2', 'p3', 'p4'],
    stop: { stop: false, reason: '' },
    outlook: null as Proposed['outlook'],
  };
  const port: AutopilotPort = {
    read: async () => ({
      context: ctx(),
      pulls: pulls.map((p) => ({ ...p })),
      state: pilot.state,
      others: [],
      botLogin: BOT,
    }),
    save: async (_e, change) => {
      pilot.state = change(pilot.state);
      return pilot.state;
    },
    propose: async (_e, count, exclude, round) => {
      calls.push(`propose ${count} excluding ${[...exclude].sort().join(',')}`);
      const proposals = (round === 0 ? ['baseline'] : advice.names)
        .filter((n) => !exclude.includes(n))
        .slice(0, count)
        .map((n) => ({
          candidate: n,
          path: `topologies/${EXPERIMENT_ID}/${n}.yaml`,
          text: 'x',
          reasoning: `why ${n}`,
          change: `change ${n}`,
        }));
      return { proposals, stop: advice.stop, outlook: advice.outlook };
    },
    commit: async (_e, p) => {
      const sha = shaOf(p.candidate);
      commits.set(sha, { candidate: p.candidate, round: p.round, body: p.body });
      return sha;
    },
    open: async (_e, candidate, sha) => {
      if (pulls.some((b) => b.candidate === candidate)) return null; // the branch is the lock
      const marker = readBotMarker(commits.get(sha)?.body, EXPERIMENT_ID);
      pulls.push({
        pr: next,
        candidate,
        round: marker?.round ?? -1,
        state: 'open',
        headSha: sha,
        takenOver: false,
      });
      calls.push(`open ${candidate} round ${marker?.round} #${next}`);
      return { pr: next++, created: true };
    },
    validate: async (_e, pr) => void calls.push(`validate #${pr}`),
    request: async (_e, b) => {
      calls.push(`request ${b.candidate} #${b.pr}`);
      return refuse.get(b.candidate) ?? null;
    },
    close: async (_e, pr, comment) => void calls.push(`close #${pr}: ${comment.split('\n')[0]}`),
    label: async (_e, pr, name) => void calls.push(`label #${pr} ${name}`),
    checks: async () => ({ ...checks }),
    merge: async (_e, pr) => void calls.push(`merge #${pr}`),
    report: async () => void calls.push('report'),
    dashboard: async (_e, body, closed) => void Object.assign(dashboard, { body, closed }),
  };
  return { port, pulls, calls, dashboard, pilot, checks, refuse, advice };
}

/** A bot pull request's body, with its marker, as the stage writes it (round 1). */
const botMarkerBody = (candidate: string) => botPullBody(EXPERIMENT_ID, candidate, 1, 'why');

/** The calls that write something GitHub keeps, without the validate checks each opened pull request gets. */
const writes = (calls: readonly string[]) => calls.filter((c) => !c.startsWith('validate'));

const withAutopilot = (exp: Partial<Experiment> = {}, candidates: MonitorCandidate[] = []) =>
  experimentOf(candidates, { autopilot: BLOCK, ...exp } as Partial<Experiment>);

describe('stage autopilot', () => {
  it('opens round 1 once the baseline is decided, requests each bot pull once, and a second pass repeats nothing', async () => {
    const exp = withAutopilot();
    const w = world(() => context(exp));
    const ports = { ...recordingPorts(), autopilot: w.port };
    await autopilot(readState([{ exp }]), ports);
    expect(writes(w.calls)).toEqual([
      'propose 2 excluding baseline',
      'open p1 round 1 #100',
      'open p2 round 1 #101',
    ]);
    expect(w.calls.filter((c) => c.startsWith('validate'))).toEqual(['validate #100', 'validate #101']);
    expect(w.pulls.map((p) => p.round)).toEqual([1, 1]);
    expect(w.dashboard.body).toContain('open round 1: up to 2 proposal(s)');
    w.calls.length = 0;
    await autopilot(readState([{ exp }]), ports);
    expect(w.calls).toEqual(['request p1 #100', 'request p2 #101']);
  });

  it('a due round is planned over suggest’s answer (the campaign loop’s planRound): a gain the model predicts with confidence opens round 4 after two dry rounds, its predicted best kept in the bot’s state; without it the stop rule concludes', async () => {
    const exp = withAutopilot();
    const ended = { pull: 'closed' as const, recorded: true };
    const recorded = [
      baseline,
      botRun('a', 1, 11, { outcome: 'better', seconds: 80, pull: 'merged', recorded: true }),
      botRun('b', 2, 12, ended),
      botRun('c', 3, 13, ended),
    ];
    const rounds = { a: 1, b: 2, c: 3 };
    const w = world(() => context(exp, {}, recorded), { rounds });
    w.advice.outlook = { change: 'change p2', gainLow: 0.05 };
    await autopilot(readState([{ exp }]), { ...recordingPorts(), autopilot: w.port });
    expect(writes(w.calls)).toEqual([
      'propose 2 excluding a,b,baseline,c',
      'open p1 round 4 #100',
      'open p2 round 4 #101',
    ]);
    expect(w.pilot.state.predicted).toEqual({ '4': 'p2' });
    expect(w.pilot.state.concluded).toBeNull();
    const v = world(() => context(exp, {}, recorded), { rounds });
    await autopilot(readState([{ exp }]), { ...recordingPorts(), autopilot: v.port });
    expect(writes(v.calls)).toEqual(['propose 2 excluding a,b,baseline,c']);
    expect(v.pilot.state.concluded?.reason).toMatch(/no decided gain in the last 2 round/);
  });

  it('under submit: approval it waits for a writer and says so on the dashboard', async () => {
    const exp = withAutopilot();
    const w = world(() => context(exp, { submit: 'approval' }));
    w.pulls.push({ pr: 7, candidate: 'p1', round: 1, state: 'open', headSha: 'h', takenOver: false });
    await autopilot(readState([{ exp }]), { ...recordingPorts(), autopilot: w.port });
    expect(w.calls).toEqual([]);
    expect(w.dashboard.body).toContain("waiting for a writer's approving review or /topo submit on #7");
  });

  it('a bot pull a person closed is withdrawn: never proposed again, and its round goes on', async () => {
    const exp = withAutopilot();
    const w = world(() => context(exp));
    w.pulls.push({ pr: 7, candidate: 'p1', round: 1, state: 'closed', headSha: 'h', takenOver: false });
    await autopilot(readState([{ exp }]), { ...recordingPorts(), autopilot: w.port });
    expect(w.calls[0]).toBe('propose 2 excluding baseline,p1');
    expect(writes(w.calls).slice(1)).toEqual(['open p2 round 2 #100', 'open p3 round 2 #101']);
  });

  it('a person’s push takes a bot pull over: no Request is made for it', async () => {
    const exp = withAutopilot();
    const w = world(() => context(exp));
    w.pulls.push({ pr: 7, candidate: 'p1', round: 1, state: 'open', headSha: 'h', takenOver: true });
    w.pulls.push({ pr: 8, candidate: 'p2', round: 1, state: 'open', headSha: 'h', takenOver: false });
    await autopilot(readState([{ exp }]), { ...recordingPorts(), autopilot: w.port });
    expect(w.calls).toEqual(['request p2 #8']);
  });

  it('pause holds the next round; the budget spent stops the bot’s live run through act and concludes', async () => {
    const exp0 = withAutopilot();
    const paused = world(() => context(exp0), { paused: { by: 'alice', now: false } });
    await autopilot(readState([{ exp: exp0 }]), { ...recordingPorts(), autopilot: paused.port });
    expect(paused.calls).toEqual([]);
    expect(paused.dashboard.body).toContain('paused on the dashboard');

    const a = requestedCandidate('p1', 7);
    const exp = withAutopilot({}, [a]);
    const spent: PilotRun = { ...baseline, gpuHours: 200 };
    const w = world(() => context(exp, {}, [spent]));
    w.pulls.push({ pr: 7, candidate: 'p1', round: 1, state: 'open', headSha: 'h', takenOver: false });
    const state = readState([{ exp, jobs: [runningJob(a.runName, '42', 600)] }]);
    const ports = { ...recordingPorts(), autopilot: w.port };
    observeWith(state.experiments[0] as never, { p1: analysisOf(a.runName, { state: 'warming' }, 10) });
    const stages = withStage(
      stagesNamed('decide', 'act'),
      { name: 'autopilot', run: autopilot },
      { after: 'decide' },
    );
    await runStages(state, ports, stages);
    expect(ports.calls.map((c) => `${c.port} ${c.args[0]}`)).toContain('slurm.cancel 42');
    // 200 recorded + the live job's allocation: 8 GPUs for 600 s at ×60, 10 run-hours = 80 GPU-hours
    expect(w.dashboard.body).toMatch(/\*\*Concluded:\*\* budget: 280 of 120 GPU-hours spent/);
  });

  describe('controls that hold (the bot’s own state, queued Requests included)', () => {
    const stages = withStage(
      stagesNamed('decide', 'act'),
      { name: 'autopilot', run: autopilot },
      { after: 'decide' },
    );
    const botPull = (candidate: string, pr: number): BotPull => ({
      pr,
      candidate,
      round: 1,
      state: 'open',
      headSha: 'h',
      takenOver: false,
    });
    /** The bot's own Request for its pull request (made by the autopilot, under the bot's login). */
    const botRequest = (name: string, pr: number) => {
      const c = requestedCandidate(name, pr);
      return { ...c, request: { ...(c.request as NonNullable<typeof c.request>), login: BOT } };
    };
    /**
     * Round 1's two bot Requests (p1 #7, p2 #8) and a person's (h1 #9), all queued: the pass after the
     * one that made them; `more` queued beside them, each with its bot pull request when it is on one.
     */
    function queued(
      state: Partial<PilotState>,
      recorded = [baseline],
      more: Array<{ c: MonitorCandidate; pull?: BotPull }> = [],
      person = true,
    ) {
      const exp = withAutopilot({}, [
        botRequest('p1', 7),
        botRequest('p2', 8),
        ...(person ? [requestedCandidate('h1', 9)] : []),
        ...more.map((m) => m.c),
      ]);
      const w = world(() => context(exp, {}, recorded), state);
      w.pulls.push(botPull('p1', 7), botPull('p2', 8), ...more.flatMap((m) => (m.pull ? [m.pull] : [])));
      let job = 0;
      const ports = {
        ...recordingPorts({ submit: async () => ({ jobId: String(++job) }) }),
        autopilot: w.port,
      };
      return { exp, w, ports, submitted: () => callLog(ports.calls).filter((c) => c.startsWith('submit')) };
    }

    it('a pause that lands after the pass that made the Requests holds every queued one: act submits none', async () => {
      const t = queued({ paused: { by: 'alice', now: false } });
      await runStages(readState([{ exp: t.exp }]), t.ports, stages);
      expect(t.submitted()).toEqual([]);
      expect(t.w.dashboard.body).toContain('paused on the dashboard');
    });

    it('a concluded experiment, or one a writer concluded, submits none of the bot’s queued Requests (a person’s runs)', async () => {
      for (const state of [{ concluded: { reason: 'max_rounds', winner: null } }, { concludeBy: 'alice' }]) {
        const t = queued(state);
        await runStages(readState([{ exp: t.exp }]), t.ports, stages);
        expect(t.submitted()).toEqual(['submit h1']);
      }
    });

    /** The round's reference Request (a run of the best, `baseline`), made by the bot on #7, queued: no job yet. */
    const queuedReference = (): MonitorCandidate => {
      const c = botRequest('baseline', 7);
      const runName = `topo-${EXPERIMENT_ID}-baseline-0123abcd-ffff0007`;
      const request = { ...(c.request as NonNullable<typeof c.request>), id: 'ffff0007', runName };
      return { ...c, runName, role: 'reference', request: { ...request, role: 'reference' } };
    };

    it('a queued reference Request is held with the bot’s: no reference job starts once it concluded, is concluding or paused (issue 42)', async () => {
      for (const [state, recorded] of [
        [{ concluded: { reason: 'max_rounds', winner: null } }, [baseline]],
        [{ concludeBy: 'alice' }, [baseline]],
        [{ paused: { by: 'alice', now: false } }, [baseline]],
        [{}, [{ ...baseline, gpuHours: 200 }]], // the budget's stop: concluding in this pass
      ] as Array<[Partial<PilotState>, PilotRun[]]>) {
        const t = queued(state, recorded, [{ c: queuedReference() }], false);
        await runStages(readState([{ exp: t.exp }]), t.ports, stages);
        expect(t.submitted(), JSON.stringify(state)).toEqual([]);
      }
      // a person's run still goes on after the conclusion: it is decided against the reference, which runs
      const t = queued(
        { concluded: { reason: 'max_rounds', winner: null } },
        [baseline],
        [{ c: queuedReference() }],
      );
      await runStages(readState([{ exp: t.exp }]), t.ports, stages);
      expect(t.submitted()).toEqual(['submit baseline', 'submit h1']);
    });

    it('a concluded experiment makes no new reference Request for act either, unless a person’s run goes on (issue 42)', async () => {
      const want = (person: boolean) => {
        const t = queued({ concluded: { reason: 'max_rounds', winner: null } }, [baseline], [], person);
        const pass = readState([{ exp: t.exp }]);
        const e = pass.experiments[0]!;
        const need = { needed: true, reason: 'p1 is open' };
        e.referenceJob = {
          mode: 'beside',
          note: null,
          job: null,
          need,
          stops: [],
          request: { pr: 7, headSha: 'h' },
        };
        return { pass, ports: t.ports, e };
      };
      const alone = want(false);
      await autopilot(alone.pass, alone.ports);
      // the plan act carries out (decide's, as the autopilot returns it)
      expect(actPlan(alone.e).request).toBeNull();
      const beside = want(true);
      await autopilot(beside.pass, beside.ports);
      expect(actPlan(beside.e).request).toEqual({ pr: 7, headSha: 'h' });
    });

    it('a writer’s /topo submit on a bot pull request after the conclusion is theirs: it runs, whatever the free slots', async () => {
      // p3 #10 is the bot's pull request; alice asked for its run herself (her login on the Request)
      const mine = { c: requestedCandidate('p3', 10), pull: botPull('p3', 10) };
      for (const state of [{ concluded: { reason: 'max_rounds', winner: null } }, { concludeBy: 'alice' }]) {
        const t = queued(state, [baseline], [mine]);
        await runStages(readState([{ exp: t.exp }]), t.ports, stages);
        expect(t.submitted().sort()).toEqual(['submit h1', 'submit p3']);
      }
      // paused, it waits like every queued Request of the experiment
      const t = queued({ paused: { by: 'alice', now: false } }, [baseline], [mine]);
      await runStages(readState([{ exp: t.exp }]), t.ports, stages);
      expect(t.submitted()).toEqual([]);
    });

    it('under pause --now, a conclusion or a spent budget a queued bot Request is never submitted then cancelled', async () => {
      for (const [state, recorded] of [
        [{ paused: { by: 'alice', now: true } }, [baseline]],
        [{ concludeBy: 'alice' }, [baseline]],
        [{}, [{ ...baseline, gpuHours: 200 }]],
      ] as Array<[Partial<PilotState>, PilotRun[]]>) {
        const t = queued(state, recorded);
        const running = { ...requestedCandidate('p1', 7), requested: true };
        const exp = { ...t.exp, candidates: [running, ...t.exp.candidates.slice(1)] };
        const pass = readState([{ exp, jobs: [runningJob(running.runName, '42', 600)] }]);
        observeWith(pass.experiments[0] as never, {
          p1: analysisOf(running.runName, { state: 'warming' }, 10),
        });
        await runStages(pass, t.ports, stages);
        const log = callLog(t.ports.calls);
        expect(log.filter((c) => c.startsWith('submit p'))).toEqual([]);
        expect(log.filter((c) => c.startsWith('slurm.cancel'))).toEqual(['slurm.cancel 42']);
        // the run a control stopped is `stopped`, not failed: its Outcome says so now
        const outcome = t.ports.calls.find((c) => c.port === 'lifecycle.recordOutcome');
        expect(outcome?.args.slice(0, 2)).toEqual([7, '00000007']);
        expect(outcome?.args[2]).toMatchObject({ kind: 'stopped' });
      }
    });

    it('after pause --now the stopped runs keep their round: not closed while paused, and resume runs them again', async () => {
      const stopped = (name: string, pr: number) =>
        requestedCandidate(name, pr, {
          outcome: { kind: 'stopped', at: '2027-01-01T00:00:00Z', jobId: `4${pr}`, evidence: [] },
        });
      const exp = withAutopilot({}, [stopped('p1', 7), stopped('p2', 8)]);
      const w = world(() => context(exp), { paused: { by: 'alice', now: true }, stopped: ['p1', 'p2'] });
      w.pulls.push(botPull('p1', 7), botPull('p2', 8));
      const jobs = [7, 8].map((pr) => ({
        ...runningJob((exp.candidates[pr - 7] as MonitorCandidate).runName, `4${pr}`, 60),
        state: 'CANCELLED',
        endTs: NOW - 30,
      }));
      const pass = () => {
        const state = readState([{ exp, jobs }]);
        observeWith(state.experiments[0] as never);
        return state;
      };
      const ports = { ...recordingPorts(), autopilot: w.port };
      await runStages(pass(), ports, stages);
      expect(w.calls).toEqual([]);
      expect(w.dashboard.body).not.toContain('**Concluded:**');
      w.pilot.state = { ...w.pilot.state, paused: null };
      await runStages(pass(), ports, stages);
      expect(w.calls).toEqual(['request p1 #7', 'request p2 #8']);
      expect(w.dashboard.body).not.toContain('**Concluded:**');
    });

    it('a conclusion is written to the bot’s state; the next pass posts the final report and closes the dashboard, and then nothing more', async () => {
      const exp = withAutopilot();
      const w = world(() => context(exp), { concludeBy: 'alice' });
      await autopilot(readState([{ exp }]), { ...recordingPorts(), autopilot: w.port });
      expect(w.pilot.state.concluded).toEqual({
        reason: 'concluded on the dashboard by @alice',
        winner: null,
      });
      expect(w.pilot.state.concludeBy).toBeNull();
      // the login is defused (no mention on every edit)
      expect(w.dashboard.body).toMatch(/\*\*Concluded:\*\* concluded on the dashboard by @\u200balice/);
      expect(w.dashboard.closed).toBe(false);
      await autopilot(readState([{ exp }]), { ...recordingPorts(), autopilot: w.port });
      expect(w.calls).toEqual(['report']);
      expect(w.pilot.state.concluded?.reported).toBe(true);
      expect(w.dashboard.closed).toBe(true);
      expect(w.dashboard.body).toContain('The final report is below.');
      await autopilot(readState([{ exp }]), { ...recordingPorts(), autopilot: w.port });
      expect(w.calls).toEqual(['report']);
    });
  });

  describe('a budget that is hard: Slurm’s allocations, kept in the bot’s state', () => {
    const stages = withStage(
      stagesNamed('decide', 'act'),
      { name: 'autopilot', run: autopilot },
      { after: 'decide' },
    );

    it('counts a run’s allocation (elapsed × GPUs), not its minutes of metrics: 8 GPUs for 4 run-hours without data count 32', async () => {
      const a = { ...requestedCandidate('p1', 7), requested: true };
      const exp = withAutopilot({}, [a]);
      const w = world(() => context(exp));
      w.pulls.push({ pr: 7, candidate: 'p1', round: 1, state: 'open', headSha: 'h', takenOver: false });
      const state = readState([{ exp, jobs: [runningJob(a.runName, '42', 240)] }]);
      observeWith(state.experiments[0] as never); // no metrics at all
      await runStages(state, { ...recordingPorts(), autopilot: w.port }, stages);
      expect(w.dashboard.body).toContain('**GPU-hours:** 42.0 spent');
      // a live run is kept in the bot's state as it grows, so a job Slurm forgets still counts
      expect(w.pilot.state.held).toEqual({ [a.runName]: 32 });
    });

    /** A job as squeue prints it: started `ago` seconds before NOW (or waiting), its end start + a 10-minute limit. */
    const listed = (runName: string, id: string, state: 'RUNNING' | 'PENDING', ago: number) => {
      const t = (ts: number) => new Date(ts * 1000).toISOString().slice(0, 19);
      const used = state === 'RUNNING' ? `0:${String(ago).padStart(2, '0')}` : '0:00';
      const why = state === 'RUNNING' ? 'None' : 'Resources';
      const line = `${id}|${state}|${why}|0|0|${t(NOW - ago - 5)}|${t(NOW - ago)}|${t(NOW - ago + 600)}|10:00|${used}|node1|1|cpu=1,node=1,gres/gpu=8|gres/gpu:8|runner|/tmp/o|(null)|${runName}`;
      const job = parseSqueue(line).jobs[0];
      if (!job) throw new Error(`unreadable: ${line}`);
      return runJob(job);
    };

    it('charges what the allocations held, never Slurm’s forecast end: two runs 10 s old under a 10-run-hour limit, and a waiting one, cost 2.7 of 100, not 160 (issue 40)', async () => {
      const [a, b, c] = ['p1', 'p2', 'p3'].map((n, i) => ({
        ...requestedCandidate(n, 7 + i),
        requested: true,
      }));
      const exp = withAutopilot({}, [a, b, c] as MonitorCandidate[]);
      const w = world(() => context(exp, { gpuHours: 100 }));
      for (const [i, n] of ['p1', 'p2', 'p3'].entries())
        w.pulls.push({ pr: 7 + i, candidate: n, round: 1, state: 'open', headSha: 'h', takenOver: false });
      const jobs = [
        listed(a?.runName ?? '', '41', 'RUNNING', 10),
        listed(b?.runName ?? '', '42', 'RUNNING', 10),
        // a waiting job's start is a forecast (here already past), its end start + limit: nothing held
        listed(c?.runName ?? '', '43', 'PENDING', 5),
      ];
      const state = readState([{ exp, jobs }]);
      observeWith(state.experiments[0] as never);
      await runStages(state, { ...recordingPorts(), autopilot: w.port }, stages);
      // 10 recorded (the baseline) + 2 × 8 GPUs × 10 s at ×60 = 10 + 2.7
      expect(w.dashboard.body).toContain('**GPU-hours:** 12.7 spent');
      expect(w.dashboard.body).not.toContain('**Concluded:**');
      expect(w.calls.filter((x) => x.startsWith('stop'))).toEqual([]);
    });

    it('the budget’s stop charges what was held and says what the live runs would still take, apart', async () => {
      const a = { ...requestedCandidate('p1', 7), requested: true };
      const exp = withAutopilot({}, [a]);
      const w = world(() => context(exp, { gpuHours: 100 }, [{ ...baseline, gpuHours: 99 }]));
      w.pulls.push({ pr: 7, candidate: 'p1', round: 1, state: 'open', headSha: 'h', takenOver: false });
      const state = readState([{ exp, jobs: [listed(a.runName, '41', 'RUNNING', 30)] }]);
      observeWith(state.experiments[0] as never);
      await runStages(state, { ...recordingPorts(), autopilot: w.port }, stages);
      // 99 + 8 GPUs × 30 s at ×60 = 103; the run's cost is 10, so it would take 6 more
      expect(w.dashboard.body).toMatch(
        /\*\*Concluded:\*\* budget: 103 of 100 GPU-hours spent, held so far; the 1 live run would take about 6 GPU-hours more to finish, a forecast not counted/,
      );
    });

    it('a lost state branch forgets no GPU-hours Slurm still lists: the next pass rebuilds them (issue 40 item 5: 42, not 10)', async () => {
      const exp = withAutopilot();
      const t = (ts: number) => new Date(ts * 1000).toISOString().slice(0, 19);
      // two ended runs no candidate stands for (a closed pull request's, a candidate's earlier run):
      // 8 GPUs × 2 minutes at ×60 = 16 GPU-hours each
      const ended = (name: string, id: string) => {
        const line = `${id}|COMPLETED|None|0|0|${t(NOW - 900)}|${t(NOW - 800)}|${t(NOW - 680)}|10:00|2:00|node1|1|cpu=1,node=1,gres/gpu=8|gres/gpu:8|runner|/tmp/o|topo:0000000${id.slice(-1)}|${name}`;
        const job = parseSqueue(line).jobs[0];
        if (!job) throw new Error(`unreadable: ${line}`);
        return runJob(job);
      };
      const jobs = [
        ended(`topo-${EXPERIMENT_ID}-p9-0123abcd-00000001`, '51'),
        ended(`topo-${EXPERIMENT_ID}-p8-0123abcd-00000002`, '52'),
      ];
      const w = world(() => context(exp)); // the state branch deleted: an empty state
      await autopilot(readState([{ exp, jobs }]), { ...recordingPorts(), autopilot: w.port });
      expect(w.dashboard.body).toContain('**GPU-hours:** 42.0 spent');
      expect(w.pilot.state.held).toEqual({
        [`topo-${EXPERIMENT_ID}-p9-0123abcd-00000001`]: 16,
        [`topo-${EXPERIMENT_ID}-p8-0123abcd-00000002`]: 16,
      });
    });

    it('says its GPU-hours are a lower bound without Slurm accounting (a requeue’s earlier allocations are unknown)', async () => {
      const exp = withAutopilot();
      for (const accounting of ['off', 'on'] as const) {
        const w = world(() => context(exp));
        const state = readState([{ exp }]);
        (state.experiments[0] as { accounting?: string }).accounting = accounting;
        await autopilot(state, { ...recordingPorts(), autopilot: w.port });
        const said = w.dashboard.body?.includes('the GPU-hours spent are a lower bound');
        expect(said, accounting).toBe(accounting === 'off');
      }
    });

    it('a run the bot’s state kept counts after its pull request closed and Slurm forgot it', async () => {
      const exp = withAutopilot();
      const w = world(() => context(exp), { held: { 'topo-x-p9-0123abcd-00000009': 105 } });
      await autopilot(readState([{ exp }]), { ...recordingPorts(), autopilot: w.port });
      expect(w.dashboard.body).toContain('**GPU-hours:** 115.0 spent');
      // 5 left: less than one run's cost, so no round opens
      expect(w.calls.filter((c) => c.startsWith('open'))).toEqual([]);
    });
  });

  it('a round’s reference job (a run of the recorded best on a candidate’s pull request) is not a run of the autopilot: the best stays the merged winner, and its allocation counts', async () => {
    const winner: PilotRun = { ...botRun('p1', 1, 7), pull: 'merged', outcome: 'better', seconds: 80 };
    const cand = { ...requestedCandidate('p2', 8), requested: true };
    const refName = `topo-${EXPERIMENT_ID}-p1-0123abcd-ffff0008`;
    const base = requestedCandidate('p1', 8);
    const ref: MonitorCandidate = {
      ...base,
      runName: refName,
      role: 'reference',
      ...(base.request ? { request: { ...base.request, runName: refName, role: 'reference' as const } } : {}),
    };
    const exp = withAutopilot({}, [cand, ref]);
    const w = world(() => context(exp, {}, [baseline, winner]), { rounds: { p1: 1, p2: 2 } });
    w.pulls.push({ pr: 8, candidate: 'p2', round: 2, state: 'open', headSha: 'h', takenOver: false });
    const stages = withStage(
      stagesNamed('decide'),
      { name: 'autopilot', run: autopilot },
      { after: 'decide' },
    );
    const state = readState([
      { exp, jobs: [runningJob(cand.runName, '41', 240), runningJob(refName, '42', 240)] },
    ]);
    observeWith(state.experiments[0] as never);
    await runStages(state, { ...recordingPorts(), autopilot: w.port }, stages);
    expect(w.dashboard.body).toContain('**Best so far:** `p1`, 80.00 s/rollout');
    expect(w.dashboard.body).not.toContain('a person’s');
    // 10 baseline + 8 winner + 32 of p2's live job + 32 of the reference's, kept in the bot's state
    expect(w.dashboard.body).toContain('**GPU-hours:** 82.0 spent');
    expect(w.pilot.state.held[refName]).toBe(32);
  });

  it('a person’s recorded candidate whose hypothesis reads "Autopilot round 9:" is a person’s: the round comes from the bot’s state', async () => {
    const exp = withAutopilot();
    const mine: PilotRun = {
      ...baseline,
      name: 'mine',
      round: 9,
      origin: 'bot',
      pull: 'closed',
      outcome: 'worse',
    };
    const w = world(() => context(exp, {}, [baseline, mine]));
    await autopilot(readState([{ exp }]), { ...recordingPorts(), autopilot: w.port });
    expect(w.dashboard.body).not.toContain('**Concluded:**');
    expect(w.calls.filter((c) => c.startsWith('open'))).toEqual([
      'open p1 round 1 #100',
      'open p2 round 1 #101',
    ]);
  });
});

/**
 * Issue 42: a held candidate (a guard held a decision whose whole interval lies below
 * −min_improvement) is rerun by the monitor's own pass, as the campaign bench runs it: moved to the
 * next round with attempt 2, its new Request made on its open pull request, its two jobs' GPU-hours
 * counted, the dashboard showing attempt 2; held again, it settles `better` (src/campaign/held.ts heldAgain).
 */
describe('stage autopilot: a held candidate is rerun beside the round’s reference (issue 42)', () => {
  const heldDecision = (high: number, fullRun: number) => ({
    state: 'faster-drift-not-ruled-out',
    reference: { role: 'baseline', name: 'baseline' },
    relative_change: { value: -0.06, low: -0.09, high },
    figure: { value: 94, low: 91, high: 100 * (1 + high), reference_value: 100 },
    min_improvement: 0.02,
    decided_at_minutes: 120,
    full_run: { guard: 'open', change: { value: fullRun, low: -0.2, high: 0.05 } },
  });
  /** p1 (#7) ended held with `runName`, p2 (#8) ended decided worse: round 1 is over. */
  function roundOver(
    state: Partial<PilotState>,
    p1 = requestedCandidate('p1', 7),
    fullRun = -0.05,
    policy: Partial<AutopilotPolicy> = {},
  ) {
    const ended = { kind: 'decided' as const, at: new Date(NOW * 1000).toISOString(), evidence: [] };
    const p2 = requestedCandidate('p2', 8, { outcome: ended });
    const exp = withAutopilot({}, [{ ...p1, outcome: ended }, p2]);
    const w = world(() => context(exp, policy), { rounds: { p1: 1, p2: 1 }, ...state });
    w.pulls.push(
      { pr: 7, candidate: 'p1', round: 1, state: 'open', headSha: 'h', takenOver: false },
      { pr: 8, candidate: 'p2', round: 1, state: 'open', headSha: 'h', takenOver: false },
    );
    const pass = readState([{ exp }]);
    const decisions = { p1: heldDecision(-0.03, fullRun), p2: { ...heldDecision(0.2, 0.1), state: 'worse' } };
    for (const c of pass.experiments[0]!.candidates) {
      const d = decisions[c.c.candidate as 'p1' | 'p2'];
      const verdict = { state: 'stable', evidence: [], minutes_of_data: 120 };
      c.decided = {
        view: { observation: { verdict, decision: d, stable_metrics: {} } },
        stop: null,
      } as never;
    }
    return { w, pass, p1 };
  }

  it('the round after a held one reruns it: attempt 2 in round 2 (bot state), a new Request on its open pull request, attempt 2 on the dashboard', async () => {
    const first = roundOver({});
    await autopilot(first.pass, { ...recordingPorts(), autopilot: first.w.port });
    // p2 is closed as decided; p1 stays open and moves to round 2 beside one proposal (parallel 2)
    expect(writes(first.w.calls)).toEqual([
      'propose 2 excluding baseline,p1,p2',
      'close #8: Closed by the autopilot: `p2` is rejected by its decision.',
      'open p3 round 2 #100',
    ]);
    expect(first.w.dashboard.body).toContain('open round 2: rerun `p1`');
    expect(first.w.pilot.state.rounds.p1).toBe(2);
    expect(first.w.pilot.state.reruns).toEqual({ p1: { attempt: 2, after: first.p1.runName } });

    // the next pass: p1 waits for its new Request (its held job is no run of round 2) and gets it
    const next = roundOver(first.w.pilot.state);
    await autopilot(next.pass, { ...recordingPorts(), autopilot: next.w.port });
    expect(next.w.calls).toContain('request p1 #7');
    expect(next.w.dashboard.body).toMatch(/\| 2 \| `p1` \(attempt 2\) \| #7 \| waiting \|/);
  });

  it('the held job’s GPU-hours still count once its rerun’s Request replaced it; held again, the rerun settles better and wins round 2', async () => {
    const state = {
      rounds: { p1: 2, p2: 1, p3: 2 },
      reruns: { p1: { attempt: 2, after: requestedCandidate('p1', 7).runName } },
      held: { [requestedCandidate('p1', 7).runName]: 12 },
    };
    const again = requestedCandidate('p1', 7, { runName: `topo-${EXPERIMENT_ID}-p1-0123abcd-00000099` });
    const t = roundOver(state, again);
    await autopilot(t.pass, { ...recordingPorts(), autopilot: t.w.port });
    // 10 baseline + 12 of the held job; p3 has no pull request here, so round 2 is p1's alone
    expect(t.w.dashboard.body).toContain('**GPU-hours:** 22.0 spent');
    expect(t.w.dashboard.body).toMatch(/\| 2 \| `p1` \(attempt 2\) \| #7 \| better \| 94.00 \|/);
    expect(t.w.dashboard.body).toContain('**Best so far:** `p1`, 94.00 s/rollout');
    expect(t.w.calls).toContain('label #7 autopilot:winner');

    // a drift the full-run guard carries past −min_improvement keeps its hold: no `better`
    const drift = roundOver(state, again, 0.01);
    await autopilot(drift.pass, { ...recordingPorts(), autopilot: drift.w.port });
    expect(drift.w.dashboard.body).toMatch(/\| 2 \| `p1` \(attempt 2\) \| #7 \| undecided \|/);
    expect(drift.w.calls).not.toContain('label #7 autopilot:winner');
  });

  it('the pass that concludes at max_rounds closes the decided loser with one comment, the held run as concluded', async () => {
    const t = roundOver({}, undefined, undefined, { maxRounds: 1 });
    await autopilot(t.pass, { ...recordingPorts(), autopilot: t.w.port });
    expect(t.w.calls.filter((c) => c.startsWith('close'))).toEqual([
      'close #8: Closed by the autopilot: `p2` is rejected by its decision.',
      expect.stringMatching(/^close #7: /),
    ]);
    expect(t.w.pilot.state.concluded?.reason).toBe('max_rounds 1 reached');
  });
});

describe('stage autopilot: the loop closes', () => {
  const concluded = { reason: 'max_rounds 1 reached', winner: 'p1' };
  const auto = { merge: 'auto' as const, requiredChecks: ['topo/validate', 'topo/monitor'] };
  const winnerRun = (pr: number) => ({
    name: 'p1',
    round: 1,
    origin: 'bot' as const,
    pr,
    pull: 'closed' as const,
    request: 'ended' as const,
    outcome: 'better' as const,
    seconds: 80,
    gpuHours: 8,
  });
  function concludedWorld() {
    const exp = withAutopilot();
    const w = world(() => context(exp, auto, [baseline, winnerRun(7)]), { concluded });
    w.pulls.push({ pr: 7, candidate: 'p1', round: 1, state: 'open', headSha: shaOf('p1'), takenOver: false });
    return {
      exp,
      w,
      pass: () => autopilot(readState([{ exp }]), { ...recordingPorts(), autopilot: w.port }),
    };
  }

  it('merge: auto labels the winner, merges it once its required checks pass, posts the final report and closes the dashboard', async () => {
    const t = concludedWorld();
    t.w.checks['topo/validate'] = 'success';
    t.w.checks['topo/monitor'] = null; // still running
    await t.pass();
    expect(t.w.calls).toEqual(['label #7 autopilot:winner']);
    expect(t.w.dashboard.body).toContain('\\#7 waits for its required check\\(s\\) topo/monitor');
    t.w.pulls[0]!.labels = ['autopilot:winner'];
    t.w.checks['topo/monitor'] = 'success';
    t.w.calls.length = 0;
    await t.pass();
    expect(t.w.calls).toEqual(['merge #7', 'report']);
    expect(t.w.pilot.state.concluded).toEqual({ ...concluded, reported: true });
    expect(t.w.dashboard.closed).toBe(true);
  });

  it('a required check that failed on the winner is on the dashboard with what to do: no merge', async () => {
    const t = concludedWorld();
    t.w.checks['topo/validate'] = 'failure';
    t.w.checks['topo/monitor'] = 'success';
    await t.pass();
    expect(t.w.calls).toEqual(['label #7 autopilot:winner']);
    expect(t.w.dashboard.body).toMatch(
      /\*\*Needs a person:\*\*\n- #7: `p1` is not merged: its required check\(s\) `topo\/validate` failed on its head\. \*\*What you can do:\*\* merge #7 by hand/,
    );
    expect(t.w.dashboard.closed).toBe(false);
  });
});

describe('stage autopilot: nothing stalls silently', () => {
  it('a Request it cannot make is on the dashboard with why and what to do', async () => {
    const exp = withAutopilot();
    const w = world(() => context(exp));
    w.pulls.push({ pr: 7, candidate: 'p1', round: 1, state: 'open', headSha: 'h', takenOver: false });
    w.refuse.set('p1', {
      why: '#7 changes `README.md`, not only `x.yaml`',
      fix: 'restore #7 to its one candidate file',
    });
    await autopilot(readState([{ exp }]), { ...recordingPorts(), autopilot: w.port });
    expect(w.dashboard.body).toContain(
      '- #7: no Request for `p1`: #7 changes `README.md`, not only `x.yaml`. **What you can do:** restore #7 to its one candidate file.',
    );
  });

  it('a pass that died opening a round is resumed: the next opens the pull requests and posts topo/validate, and opens no new round', async () => {
    const exp = withAutopilot();
    // the bot's commits of p1 and p2 kept in its state, no branch or pull request made
    const w = world(() => context(exp), {
      rounds: { p1: 1, p2: 1 },
      heads: { p1: shaOf('p1'), p2: shaOf('p2') },
    });
    await w.port.commit(exp, {
      candidate: 'p1',
      path: 'x',
      text: 'x',
      reasoning: '',
      round: 1,
      title: 't',
      body: botMarkerBody('p1'),
    });
    await w.port.commit(exp, {
      candidate: 'p2',
      path: 'x',
      text: 'x',
      reasoning: '',
      round: 1,
      title: 't',
      body: botMarkerBody('p2'),
    });
    await autopilot(readState([{ exp }]), { ...recordingPorts(), autopilot: w.port });
    expect(w.calls).toEqual([
      'open p1 round 1 #100',
      'open p2 round 1 #101',
      'validate #100',
      'validate #101',
      'request p1 #100',
      'request p2 #101',
    ]);
    expect(w.pilot.state.validated).toEqual({ p1: shaOf('p1'), p2: shaOf('p2') });
    w.calls.length = 0;
    await autopilot(readState([{ exp }]), { ...recordingPorts(), autopilot: w.port });
    expect(w.calls).toEqual(['request p1 #100', 'request p2 #101']);
  });

  it('a write GitHub refuses (a 403 on the topo/validate check) is on the dashboard and an error of the pass; the next pass posts it', async () => {
    const exp = withAutopilot();
    const w = world(() => context(exp));
    let refused = true;
    const validate = w.port.validate;
    w.port.validate = async (e, pr) => {
      if (refused) throw Object.assign(new Error('Resource not accessible by integration'), { status: 403 });
      return validate(e, pr);
    };
    const state = readState([{ exp }]);
    await autopilot(state, { ...recordingPorts(), autopilot: w.port });
    expect(state.experiments[0]?.errors[0]).toMatch(/could not post `topo\/validate` on #100/);
    expect(w.dashboard.body).toMatch(
      /GitHub refused to post `topo\/validate` on #100 \(HTTP 403: Resource not accessible by integration\)\. \*\*What you can do:\*\* give the monitor job's token/,
    );
    refused = false;
    w.calls.length = 0;
    await autopilot(readState([{ exp }]), { ...recordingPorts(), autopilot: w.port });
    expect(w.calls.filter((c) => c.startsWith('validate'))).toEqual(['validate #100', 'validate #101']);
    expect(w.dashboard.body).not.toContain('Needs a person');
  });

  it('never proposes a name a person’s open pull request uses, and shows a clash a person made after the bot', async () => {
    const exp = withAutopilot();
    const w = world(() => context(exp));
    const read = w.port.read;
    let others = [{ pr: 50, candidate: 'p1' }];
    w.port.read = async (e) => ({ ...(await read(e))!, others });
    await autopilot(readState([{ exp }]), { ...recordingPorts(), autopilot: w.port });
    expect(writes(w.calls)).toEqual([
      'propose 2 excluding baseline,p1',
      'open p2 round 1 #100',
      'open p3 round 1 #101',
    ]);
    others = [{ pr: 51, candidate: 'p3' }];
    await autopilot(readState([{ exp }]), { ...recordingPorts(), autopilot: w.port });
    expect(w.dashboard.body).toContain("- #101: `p3` is also the candidate of #51, a person's pull request");
  });

  it('a runner clock off Prometheus’s on the first pass (no run counted yet): nothing opened, the dashboard says why', async () => {
    const exp = withAutopilot();
    const w = world(() => context(exp));
    const ahead = NOW - 3600;
    const ports = {
      ...recordingPorts({
        prometheus: {
          baseUrl: 'http://prometheus.test',
          instant: async () =>
            ({ resultType: 'scalar', series: [{ labels: {}, points: [[ahead, ahead]] }] }) as never,
          range: async () => Promise.reject(new Error('no')),
        },
      }),
      autopilot: w.port,
    };
    const state = readState([{ exp }]);
    await autopilot(state, ports);
    expect(w.calls).toEqual([]);
    expect(state.experiments[0]?.autopilot?.waiting).toBe('held: the runner’s clock is off');
    expect(w.dashboard.body).toMatch(
      /the runner's clock cannot be trusted: the runner's clock .* is 60 min ahead of Prometheus's/,
    );
  });
});

describe('stage autopilot: a held job with a drift is abandoned at once and rerun (issue 43 item 4)', () => {
  /** Better at equal run age (whole interval below −2%), held by the full-run guard reading a drift. */
  const drifting = {
    state: 'better-at-equal-age',
    reference: { role: 'baseline', name: 'baseline' },
    relative_change: { value: -0.08, low: -0.11, high: -0.05 },
    figure: { value: 92, low: 89, high: 95, reference_value: 100 },
    min_improvement: 0.02,
    full_run: { guard: 'drifts', change: { value: 0.01, low: -0.1, high: 0.12 } },
  };
  /** p1 (#7) running 20 run-minutes with `decision`, its bot pull request open; the bot's state `state`. */
  function running(decision: object, state: Partial<PilotState> = { rounds: { p1: 1 } }) {
    const p1 = { ...requestedCandidate('p1', 7), requested: true };
    const exp = withAutopilot({}, [p1]);
    const w = world(() => context(exp), state);
    w.pulls.push({ pr: 7, candidate: 'p1', round: 1, state: 'open', headSha: 'h', takenOver: false });
    const pass = readState([{ exp, jobs: [runningJob(p1.runName, '42', 20)] }]);
    const c = pass.experiments[0]!.candidates[0]!;
    const verdict = { state: 'stabilising', evidence: [], minutes_of_data: 20 };
    c.decided = { view: { observation: { verdict, decision, stable_metrics: {} } }, stop: null } as never;
    return { w, pass, c, p1 };
  }

  /** The stop act is to carry out for the candidate, as the autopilot leaves the plan (null: none). */
  const stopOf = (t: { pass: PassState; c: CandidatePass }) =>
    actPlan(t.pass.experiments[0] as ExperimentPass).stops.get(t.c) ?? null;

  it('stops the job with why, as the campaign loop abandons it, and keeps it out of the pause’s stopped runs', async () => {
    const t = running(drifting);
    const ports = { ...recordingPorts(), autopilot: t.w.port };
    await autopilot(t.pass, ports);
    const outcome = ports.calls.find((c) => c.port === 'lifecycle.recordOutcome');
    expect(outcome?.args[2]).toMatchObject({ kind: 'stopped' });
    expect(JSON.stringify(outcome?.args[2])).toContain('drifts against the reference');
    // the stop is in the plan the autopilot leaves act (decide's section stays as decide wrote it)
    expect(stopOf(t)).toMatch(/^autopilot: its job drifts against the reference/);
    expect(t.w.pilot.state.stopped).toEqual([]);
  });

  it('leaves a steady hold, a person’s run and a rerun (attempt 2) running', async () => {
    const steady = running({ ...drifting, full_run: { guard: 'open', change: drifting.full_run.change } });
    await autopilot(steady.pass, { ...recordingPorts(), autopilot: steady.w.port });
    expect(stopOf(steady)).toBeNull();
    const rerun = running(drifting, {
      rounds: { p1: 2 },
      reruns: { p1: { attempt: 2, after: 'an-earlier-job' } },
    });
    await autopilot(rerun.pass, { ...recordingPorts(), autopilot: rerun.w.port });
    expect(stopOf(rerun)).toBeNull();
    const person = running(drifting);
    person.w.pulls.length = 0; // no bot pull request: a person's candidate
    await autopilot(person.pass, { ...recordingPorts(), autopilot: person.w.port });
    expect(stopOf(person)).toBeNull();
  });
});
