// The autopilot's own checked state, one per experiment: its controls (paused, a conclusion asked
// for, the conclusion), the last dashboard comment it answered, the round of each bot candidate and
// the runs a control stopped. The dashboard issue is a view and an input: deleting it, closing it or
// editing its marker changes none of this (docs/autopilot.md, "The bot's state"). Pure: parse and
// render the stored text; the dashboard's commands are folded into it by src/commands/dashboard.ts.
import type { Controls } from './core.js';

export interface PilotState {
  version: 1;
  /** Set by a writer's /topo pause [--now]; cleared by /topo resume. */
  paused: { by: string; now: boolean } | null;
  /** A writer's /topo conclude, carried out by the next plan. */
  concludeBy: string | null;
  /**
   * Final: the experiment concluded (by its stop rule, the budget or a writer), with its winner;
   * `reported` once the final report is posted on the dashboard (the loop is closed then).
   */
  concluded: { reason: string; winner: string | null; reported?: boolean } | null;
  /** The id of the last dashboard comment answered: later ones are new. */
  lastComment: number;
  /** Each bot candidate's round, as the bot opened it (never read from a text a person can write). */
  rounds: Record<string, number>;
  /** Bot runs a control stopped (`stopped`, not failed): their proposals stand and run again on resume. */
  stopped: string[];
  /**
   * GPU-hours each run of the experiment held (Slurm's allocation, elapsed × GPUs), by run name: kept
   * so a run Slurm forgets, or a closed pull request's, still counts against the budget.
   */
  held: Record<string, number>;
  /**
   * The commit the bot made on each bot branch, by candidate: a head that is not it was pushed by
   * someone else (an amended bot commit included), and a branch the pass that made the commit died
   * before creating is created from it by the next pass.
   */
  heads: Record<string, string>;
  /** The head each bot pull request's `topo/validate` check was posted on, by candidate. */
  validated: Record<string, string>;
  /**
   * The issues the bot wrote as this experiment's dashboard, oldest first (the last DASHBOARDS_KEPT):
   * their `/topo` comments are read too, so a writer who edited the marker out of one (the next pass
   * writes a new one) or comments on the old one loses no command.
   */
  dashboards: number[];
  /**
   * By round, the proposal the calibrated model predicted best when the round was opened (null: the
   * round did not propose it); absent for a round opened without a model. The stop rule reads it.
   */
  predicted: Record<string, string | null>;
  /**
   * Each held candidate the bot runs again, by candidate: its attempt (2 the first rerun) and the run
   * name of the job it replaces (null: none known), so the pass before its new Request reads it as
   * waiting for one, not as the held job it replaces (src/autopilot/runs.ts withReruns).
   */
  reruns: Record<string, Rerun>;
}

/** A held candidate's next job (PilotState.reruns). */
export interface Rerun {
  attempt: number;
  after: string | null;
}

/** The former dashboards whose comments are still read. */
export const DASHBOARDS_KEPT = 5;

export const EMPTY_PILOT_STATE: PilotState = {
  version: 1,
  paused: null,
  concludeBy: null,
  concluded: null,
  lastComment: 0,
  rounds: {},
  stopped: [],
  held: {},
  heads: {},
  validated: {},
  dashboards: [],
  predicted: {},
  reruns: {},
};

/** A stored state that does not parse: shown to people, never read as an empty state. */
export class PilotStateError extends Error {
  override name = 'PilotStateError';
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null;
const NAME = /^[a-z0-9][a-z0-9_.-]{0,99}$/;
const SHA = /^[0-9a-f]{40}$/;

/** A candidate → commit map (absent in a state written before it was kept: empty). */
function shaMap(x: unknown, what: string): Record<string, string> {
  const m = x ?? {};
  if (
    !isObject(m) ||
    Object.entries(m).some(([k, v]) => !NAME.test(k) || typeof v !== 'string' || !SHA.test(v))
  )
    throw new PilotStateError(`the autopilot state is not valid: ${what}`);
  return { ...(m as Record<string, string>) };
}

/** The state in its stored text (JSON); throws PilotStateError on anything else. */
export function parsePilotState(text: string): PilotState {
  let x: unknown;
  try {
    x = JSON.parse(text);
  } catch (e) {
    throw new PilotStateError(`the autopilot state is not JSON: ${(e as Error).message}`);
  }
  const bad = (what: string) => new PilotStateError(`the autopilot state is not valid: ${what}`);
  if (!isObject(x) || x.version !== 1) throw bad('version is not 1');
  const p = x.paused;
  if (p !== null && !(isObject(p) && typeof p.by === 'string' && typeof p.now === 'boolean'))
    throw bad('paused');
  if (x.concludeBy !== null && typeof x.concludeBy !== 'string') throw bad('concludeBy');
  const c = x.concluded;
  if (
    c !== null &&
    !(
      isObject(c) &&
      typeof c.reason === 'string' &&
      (c.winner === null || typeof c.winner === 'string') &&
      (c.reported === undefined || typeof c.reported === 'boolean')
    )
  )
    throw bad('concluded');
  if (!Number.isSafeInteger(x.lastComment) || (x.lastComment as number) < 0) throw bad('lastComment');
  const rounds = x.rounds;
  if (!isObject(rounds) || Object.entries(rounds).some(([k, v]) => !NAME.test(k) || !Number.isSafeInteger(v)))
    throw bad('rounds');
  if (!Array.isArray(x.stopped) || x.stopped.some((s) => typeof s !== 'string' || !NAME.test(s)))
    throw bad('stopped');
  const held = x.held ?? {};
  if (!isObject(held) || Object.values(held).some((v) => typeof v !== 'number' || !(v >= 0)))
    throw bad('held');
  const dashboards = x.dashboards ?? [];
  if (!Array.isArray(dashboards) || dashboards.some((n) => !Number.isSafeInteger(n) || n <= 0))
    throw bad('dashboards');
  return {
    version: 1,
    paused: p === null ? null : { by: (p as { by: string }).by, now: (p as { now: boolean }).now },
    concludeBy: x.concludeBy as string | null,
    concluded: c === null ? null : concludedOf(c as NonNullable<PilotState['concluded']>),
    lastComment: x.lastComment as number,
    rounds: { ...(rounds as Record<string, number>) },
    stopped: [...(x.stopped as string[])],
    held: { ...(held as Record<string, number>) },
    heads: shaMap(x.heads, 'heads'),
    validated: shaMap(x.validated, 'validated'),
    dashboards: [...(dashboards as number[])],
    predicted: predictedMap(x.predicted),
    reruns: rerunMap(x.reruns),
  };
}

/** Candidate → its rerun (absent in a state written before reruns were kept: empty). */
function rerunMap(x: unknown): Record<string, Rerun> {
  const m = x ?? {};
  const ok = (v: unknown) =>
    isObject(v) &&
    Number.isSafeInteger(v.attempt) &&
    (v.attempt as number) >= 2 &&
    (v.after === null || typeof v.after === 'string');
  if (!isObject(m) || Object.entries(m).some(([k, v]) => !NAME.test(k) || !ok(v)))
    throw new PilotStateError('the autopilot state is not valid: reruns');
  return Object.fromEntries(
    Object.entries(m as Record<string, Rerun>).map(([k, v]) => [k, { attempt: v.attempt, after: v.after }]),
  );
}

/** Round → predicted best (absent in a state written before it was kept: empty). */
function predictedMap(x: unknown): Record<string, string | null> {
  const m = x ?? {};
  if (
    !isObject(m) ||
    Object.entries(m).some(
      ([k, v]) => !/^\d{1,3}$/.test(k) || !(v === null || (typeof v === 'string' && NAME.test(v))),
    )
  )
    throw new PilotStateError('the autopilot state is not valid: predicted');
  return { ...(m as Record<string, string | null>) };
}

function concludedOf(c: NonNullable<PilotState['concluded']>): PilotState['concluded'] {
  return { reason: c.reason, winner: c.winner, ...(c.reported ? { reported: true } : {}) };
}

export function renderPilotState(state: PilotState): string {
  return JSON.stringify(state, null, 2);
}

/** The controls the plan reads. */
export function controlsOfState(state: PilotState): Controls {
  return {
    paused: state.paused !== null,
    stopLive: state.paused?.now === true,
    ...(state.concludeBy ? { concludedBy: state.concludeBy } : {}),
  };
}

/** A dashboard comment: its id (later comments have larger ids), author and whether they may command. */
export interface DashboardComment {
  id: number;
  login: string;
  body: string;
  /** The author may run /topo commands (write, maintain or admin: decideCommandAllowed). */
  allowed: boolean;
}

/** The bot's reply to one dashboard comment. */
export interface CommandReply {
  /** The comment answered. */
  id: number;
  text: string;
}
