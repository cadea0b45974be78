// The bot-owned run state of a pull request, kept as a hidden block in the bot's `lifecycle`
// comment (found by marker AND the bot's login: a user's copy of the block is never read).
// Encoded as base64 JSON so no text inside can close the HTML comment; checked field by field on
// read: a block that does not check, is cut, or is missing from the bot's comment is an error
// ("bot state unreadable: …"), never a guess and never an empty state.

import { CANDIDATE_NAME, RUN_LABEL, RUN_NAME, TOPOLOGY_HASH8 } from '../topology/run-name.js';
import {
  type EndedRequest,
  emptyRunState,
  OUTCOME_KINDS,
  type Outcome,
  type OutcomeKind,
  type RunRecord,
  type RunRequest,
  type RunState,
} from './model.js';

const MARK = '<!-- topo:run-state v';
const BLOCK = /<!-- topo:run-state v([12]) ([A-Za-z0-9+/=]*) -->/;

/** The state cannot be read: shown to people as "bot state unreadable: …", never taken as empty. */
export class RunStateError extends Error {
  override name = 'RunStateError';
  constructor(detail: string) {
    super(`bot state unreadable: ${detail}`);
  }
}

export function renderRunStateBlock(state: RunState): string {
  return `${MARK}2 ${Buffer.from(JSON.stringify(state), 'utf8').toString('base64')} -->`;
}

/** Characters the state's block takes (what src/lifecycle/bounds.ts holds to its budget). */
export function encodedRunStateLength(state: RunState): number {
  return MARK.length + 2 + 4 * Math.ceil(Buffer.byteLength(JSON.stringify(state), 'utf8') / 3) + 4;
}

/**
 * The state in the bot's lifecycle comment. No comment: an empty state (the bot never wrote one).
 * A comment without a whole block (cut, or none at all) is an error: the bot always writes one.
 */
export function parseRunStateBlock(body: string | undefined): RunState {
  if (body === undefined) return emptyRunState();
  const m = BLOCK.exec(body);
  if (!m) {
    const at = body.indexOf(MARK);
    if (at < 0) throw new RunStateError("the bot's lifecycle comment carries no state block");
    throw new RunStateError(
      `the state block is cut (it starts at character ${at} of ${body.length} and never ends): part of it is missing`,
    );
  }
  const text = Buffer.from(m[2] ?? '', 'base64').toString('utf8');
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new RunStateError(`the run-state block is not JSON: ${(e as Error).message}`);
  }
  const version = (data as { version?: unknown } | null)?.version;
  if (String(version) !== m[1])
    throw new RunStateError(`the block says v${m[1]} but holds a version ${JSON.stringify(version)} state`);
  return checkRunState(data);
}

const SHA = /^[0-9a-f]{40}$/;
const EXPERIMENT = /^[a-z0-9][a-z0-9_.-]{0,119}$/;
const LOGIN = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?$/;
const JOB_ID = /^[0-9]{1,10}(_[0-9]{1,10})?$/;
const PATH = /^[A-Za-z0-9_.][A-Za-z0-9_./-]{0,300}$/;

function fail(where: string, what: string): never {
  throw new RunStateError(`run-state block: ${where}: ${what}`);
}

function kindOf(v: unknown, where: string): OutcomeKind {
  if (typeof v !== 'string' || !(OUTCOME_KINDS as readonly string[]).includes(v))
    fail(where, `not one of ${OUTCOME_KINDS.join(', ')}`);
  return v as OutcomeKind;
}

function str(o: Record<string, unknown>, key: string, pattern: RegExp | 'iso', where: string): string {
  const v = o[key];
  if (typeof v !== 'string') fail(`${where}.${key}`, 'missing or not a string');
  if (pattern === 'iso' ? !Number.isFinite(Date.parse(v)) : !pattern.test(v))
    fail(`${where}.${key}`, `${JSON.stringify(v).slice(0, 80)} is not valid`);
  return v;
}

function obj(v: unknown, where: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(where, 'not an object');
  return v as Record<string, unknown>;
}

/** One Request as the bot wrote it, checked field by field (`where` names it in the error). */
export function checkRunRequest(v: unknown, where: string): RunRequest {
  const o = obj(v, where);
  const pr = o.pr;
  if (typeof pr !== 'number' || !Number.isInteger(pr) || pr < 1) fail(`${where}.pr`, 'not a PR number');
  if (o.role !== undefined && o.role !== 'reference') fail(`${where}.role`, 'not "reference"');
  return {
    id: str(o, 'id', RUN_LABEL, where),
    experiment: str(o, 'experiment', EXPERIMENT, where),
    candidate: str(o, 'candidate', CANDIDATE_NAME, where),
    path: str(o, 'path', PATH, where),
    pr,
    headSha: str(o, 'headSha', SHA, where),
    topologyHash: str(o, 'topologyHash', TOPOLOGY_HASH8, where),
    runName: str(o, 'runName', RUN_NAME, where),
    login: str(o, 'login', LOGIN, where),
    requestedAt: str(o, 'requestedAt', 'iso', where),
    ...(o.role === 'reference' ? { role: 'reference' as const } : {}),
  };
}

export function checkRun(v: unknown, where: string): RunRecord {
  const o = obj(v, where);
  return { jobId: str(o, 'jobId', JOB_ID, where), submittedAt: str(o, 'submittedAt', 'iso', where) };
}

function checkOutcome(v: unknown, where: string): Outcome {
  const o = obj(v, where);
  const kind = kindOf(o.kind, `${where}.kind`);
  const evidence = o.evidence;
  if (!Array.isArray(evidence) || evidence.some((e) => typeof e !== 'string' || e.length > 2000))
    fail(`${where}.evidence`, 'not a list of sentences');
  const out: Outcome = { kind, at: str(o, 'at', 'iso', where), evidence };
  if (o.jobId !== undefined) out.jobId = str(o, 'jobId', JOB_ID, where);
  return out;
}

function checkEnded(v: unknown, i: number): EndedRequest {
  const where = `ended[${i}]`;
  const o = obj(v, where);
  const out: EndedRequest = {
    id: str(o, 'id', RUN_LABEL, where),
    experiment: str(o, 'experiment', EXPERIMENT, where),
    candidate: str(o, 'candidate', CANDIDATE_NAME, where),
    runName: str(o, 'runName', RUN_NAME, where),
    kind: kindOf(o.kind, `${where}.kind`),
    at: str(o, 'at', 'iso', where),
  };
  if (o.jobId !== undefined) out.jobId = str(o, 'jobId', JOB_ID, where);
  return out;
}

function checkForgotten(v: unknown): RunState['forgotten'] {
  const out: RunState['forgotten'] = {};
  for (const [kind, n] of Object.entries(obj(v, 'forgotten'))) {
    const k = kindOf(kind, `forgotten.${kind}`);
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) fail(`forgotten.${kind}`, 'not a count');
    out[k] = n;
  }
  return out;
}

/** A parsed block's data as a state (version 1, from before the bound, is read as a version 2 one). */
export function checkRunState(data: unknown): RunState {
  const o = obj(data, 'state');
  if (o.version !== 1 && o.version !== 2) fail('version', `${JSON.stringify(o.version)} is not 1 or 2`);
  if (!Array.isArray(o.requests)) fail('requests', 'not a list');
  if (o.version === 2 && !Array.isArray(o.ended)) fail('ended', 'not a list');
  const state: RunState = {
    version: 2,
    requests: o.requests.map((r, i) => checkRunRequest(r, `requests[${i}]`)),
    runs: {},
    outcomes: {},
    ended: o.version === 2 ? (o.ended as unknown[]).map(checkEnded) : [],
    forgotten: o.version === 2 ? checkForgotten(o.forgotten) : {},
  };
  const ids = new Set<string>();
  for (const id of [...state.requests.map((r) => r.id), ...state.ended.map((e) => e.id)]) {
    if (ids.has(id)) fail(`requests.${id}`, 'appears twice');
    ids.add(id);
  }
  const whole = new Set(state.requests.map((r) => r.id));
  for (const [id, run] of Object.entries(obj(o.runs, 'runs'))) {
    if (!whole.has(id)) fail(`runs.${id}`, 'no such request');
    state.runs[id] = checkRun(run, `runs.${id}`);
  }
  for (const [id, outcome] of Object.entries(obj(o.outcomes, 'outcomes'))) {
    if (!whole.has(id)) fail(`outcomes.${id}`, 'no such request');
    state.outcomes[id] = checkOutcome(outcome, `outcomes.${id}`);
  }
  return state;
}
