// The watch loop: a scheduled pass, then, while candidates are live, a look every minute until
// shortly before the next scheduled pass. A look is a list of stages over the state the scheduled
// pass read (WATCH_STAGES): the jobs from Slurm again, the metrics, the decisions, and the stops.
// It reads the pull requests once (the scheduled pass's snapshot): a look makes no GitHub request
// but one to see whether a command waits for the runner, and writes only for a candidate it stops
// (its comment, its pull request's check and label). It submits nothing and writes no Run or
// Outcome: a freed slot and every lifecycle record wait for the next scheduled pass, so nothing new
// can start a job here. A command queued for the self-hosted runner ends the loop at once.
import { setTimeout as sleepMs } from 'node:timers/promises';
import { isLive } from '../slurm/types.js';
import { act } from './act.js';
import { decide } from './decide.js';
import { observe } from './observe.js';
import { runStages, STAGES } from './pass.js';
import type { MonitorPorts } from './ports.js';
import { publish } from './publish.js';
import { clockOf, readJobs } from './read.js';
import { type PassReport, passReport } from './report.js';
import {
  candidatesNow,
  clearErrors,
  jobNow,
  newPassState,
  type PassOptions,
  type PassState,
  policyStage,
  type Stage,
  storePullErrors,
  storeReread,
} from './state.js';

/** Stage `reread`: each experiment's clock and the Slurm half of read; the pull requests stay as read. */
export async function reread(state: PassState, ports: MonitorPorts): Promise<void> {
  const now = ports.now();
  // an outage of the last look is tried again
  for (const e of state.experiments) storeReread(e, clockOf(e.exp, state.options, now));
  await readJobs(state, ports);
}

/**
 * Stage `stops-only` (between decide and act): a look only stops. No submission (the queue waits
 * for the scheduled pass, which records the Run), no reference Request and no lifecycle Outcome; a
 * job its Outcome already ended is still cancelled (no write).
 */
export const stopsOnly: Stage['run'] = policyStage('stops-only', (_e, plan) => ({
  ...plan,
  queue: { order: [], free: 0 },
  request: null,
  lifecycle: new Map([...plan.lifecycle].filter(([, intent]) => intent.kind === 'cancel')),
})).run;

/** Stage `publish-stops`: publish for the pull requests with a candidate stopped by this look, only. */
export async function publishStops(state: PassState, ports: MonitorPorts): Promise<void> {
  const ok = state.experiments.filter((e) => !e.failed);
  const stopped = new Set(
    ok.flatMap((e) =>
      candidatesNow(e)
        .filter((p) => p.acted?.cancelled)
        .map((p) => p.c.pr),
    ),
  );
  if (!stopped.size) return;
  const only: PassState = {
    ...state,
    left: new Map(),
    pullErrors: [],
    experiments: ok.map((e) => ({ ...e, candidates: e.candidates.filter((p) => stopped.has(p.c.pr)) })),
  };
  await publish(only, ports);
  storePullErrors(state, only.pullErrors);
}

/** A look: reread → observe → decide → stops-only → act → publish-stops. */
export const WATCH_STAGES: readonly Stage[] = [
  { name: 'reread', run: reread },
  { name: 'observe', run: observe },
  { name: 'decide', run: decide },
  { name: 'stops-only', run: stopsOnly },
  { name: 'act', run: act },
  { name: 'publish-stops', run: publishStops },
];

export interface WatchOptions {
  /** Minutes from the start the loop may run: the schedule's period less a margin; 0: one pass. */
  minutes: number;
  /** Seconds between two looks (60). */
  lookSeconds?: number;
  /** Seconds between two checks for a queued command while it waits (30). */
  yieldCheckSeconds?: number;
  /** The full pass's stages (STAGES, or with a plugged-in stage such as the autopilot); the looks keep theirs. */
  stages?: readonly Stage[];
}

export interface WatchDeps {
  /** The queued runs of the workflows the loop yields to (one GitHub read). */
  queued(): Promise<string[]>;
  sleep?(seconds: number): Promise<void>;
  log?(line: string): void;
}

export interface LookReport {
  /** Unix seconds when the look began. */
  at: number;
  /** Run names the look stopped. */
  stopped: string[];
  errors: string[];
}

export interface WatchReport {
  /** The scheduled pass. */
  pass: PassReport;
  looks: LookReport[];
  ended: 'one pass' | 'no live candidates' | 'time' | 'yielded';
  /** The queued runs it yielded to. */
  yieldedTo: string[];
  /** The scheduled pass's errors, then each look's. */
  errors: string[];
}

/** The scheduled pass, then looks while candidates are live, until `minutes` or a queued command. */
export async function watchPass(
  ports: MonitorPorts,
  options: PassOptions,
  watch: WatchOptions,
  deps: WatchDeps,
): Promise<WatchReport> {
  const cached = withCommentCache(ports);
  const start = ports.now();
  const state = await runStages(newPassState(options), cached, watch.stages ?? STAGES);
  const report: WatchReport = {
    pass: passReport(state),
    looks: [],
    ended: 'one pass',
    yieldedTo: [],
    errors: [],
  };
  const done = (ended: WatchReport['ended'], yieldedTo: string[] = []): WatchReport => ({
    ...report,
    ended,
    yieldedTo,
    errors: [...report.pass.errors, ...report.looks.flatMap((l) => l.errors)],
  });
  if (!(watch.minutes > 0)) return done('one pass');
  const look = watch.lookSeconds ?? 60;
  const deadline = start + watch.minutes * 60;
  for (;;) {
    if (!hasLive(state)) return done('no live candidates');
    const next = ports.now() + look;
    if (next > deadline) return done('time');
    const waiting = await waitOrYield(ports, deps, next, watch.yieldCheckSeconds ?? 30);
    if (waiting.length) {
      deps.log?.(`yielding the runner to ${waiting.join(', ')}`);
      return done('yielded', waiting);
    }
    report.looks.push(await lookOnce(state, cached));
  }
}

/** One look over the state; what it stopped and the errors it met. */
async function lookOnce(state: PassState, ports: MonitorPorts): Promise<LookReport> {
  const at = ports.now();
  clearErrors(state);
  await runStages(state, ports, WATCH_STAGES);
  return {
    at,
    stopped: state.experiments.flatMap((e) =>
      candidatesNow(e)
        .filter((p) => p.acted?.cancelled)
        .map((p) => p.c.runName),
    ),
    errors: [...state.experiments.flatMap((e) => e.errors), ...state.pullErrors],
  };
}

/** Waits until `until` (unix seconds), checking for queued commands first and every `check` seconds. */
async function waitOrYield(
  ports: MonitorPorts,
  deps: WatchDeps,
  until: number,
  check: number,
): Promise<string[]> {
  const sleep = deps.sleep ?? ((s: number) => sleepMs(s * 1000));
  for (;;) {
    const waiting = await deps.queued();
    if (waiting.length) return waiting;
    const left = until - ports.now();
    if (left <= 0) return [];
    await sleep(Math.min(check, left));
    if (ports.now() >= until) return [];
  }
}

/** A candidate's job is live and the pass did not just stop it. */
export function hasLive(state: PassState): boolean {
  return state.experiments.some((e) =>
    candidatesNow(e).some((p) => {
      const job = jobNow(e, p);
      return p.inPass && !!job && isLive(job.status) && !p.acted?.cancelled;
    }),
  );
}

/** The ports with each candidate's comment read once, then kept as written: a look reads none from GitHub. */
export function withCommentCache<P extends MonitorPorts>(ports: P): P {
  const known = new Map<string, string | undefined>();
  const key = (pr: number, candidate: string) => `${pr}/${candidate}`;
  return {
    ...ports,
    github: {
      ...ports.github,
      async readComment(pr: number, candidate: string) {
        const k = key(pr, candidate);
        if (!known.has(k)) known.set(k, await ports.github.readComment(pr, candidate));
        return known.get(k);
      },
      async writeComment(pr: number, candidate: string, body: string) {
        await ports.github.writeComment(pr, candidate, body);
        known.set(key(pr, candidate), body);
      },
    },
  };
}
