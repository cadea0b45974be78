// The bot-owned run state of a pull request, kept as a hidden block in the bot's `lifecycle`
// comment (found by marker AND the bot's login: a user's copy of the block is never read).
// Encoded as base64 JSON so no text inside can close the HTML comment; checked field by field on
// read: a block that does not check is an error, never a guess.
import {
  emptyRunState,
  OUTCOME_KINDS,
  type Outcome,
  type RunRecord,
  type RunRequest,
  type RunState,
} from './model.js';

const BLOCK = /<!-- topo:run-state v1 ([A-Za-z0-9+/=]*) -->/;

export class RunStateError extends Error {
  override name = 'RunStateError';
}

export function renderRunStateBlock(state: RunState): string {
  return `<!-- topo:run-state v1 ${Buffer.from(JSON.stringify(state), 'utf8').toString('base64')} -->`;
}

/** The state in a bot comment's body; an empty state when the body has no block. */
export function parseRunStateBlock(body: string | undefined): RunState {
  const m = body ? BLOCK.exec(body) : null;
  if (!m) return emptyRunState();
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(m[1] ?? '', 'base64').toString('utf8'));
  } catch (e) {
    throw new RunStateError(`the run-state block is not JSON: ${(e as Error).message}`);
  }
  return checkRunState(data);
}

const SHA = /^[0-9a-f]{40}$/;
const HEX8 = /^[0-9a-f]{8}$/;
const NAME = /^[a-z0-9][a-z0-9-]{0,39}$/;
const EXPERIMENT = /^[a-z0-9][a-z0-9_.-]{0,119}$/;
const RUN_NAME = /^topo-[a-z0-9_.-]{1,200}$/;
const LOGIN = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?$/;
const JOB_ID = /^[0-9]+(_[0-9]+)?$/;
const PATH = /^[A-Za-z0-9_.][A-Za-z0-9_./-]{0,300}$/;

function fail(where: string, what: string): never {
  throw new RunStateError(`run-state block: ${where}: ${what}`);
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

function checkRequest(v: unknown, i: number): RunRequest {
  const where = `requests[${i}]`;
  const o = obj(v, where);
  const pr = o.pr;
  if (typeof pr !== 'number' || !Number.isInteger(pr) || pr < 1) fail(`${where}.pr`, 'not a PR number');
  return {
    id: str(o, 'id', HEX8, where),
    experiment: str(o, 'experiment', EXPERIMENT, where),
    candidate: str(o, 'candidate', NAME, where),
    path: str(o, 'path', PATH, where),
    pr,
    headSha: str(o, 'headSha', SHA, where),
    topologyHash: str(o, 'topologyHash', HEX8, where),
    runName: str(o, 'runName', RUN_NAME, where),
    login: str(o, 'login', LOGIN, where),
    requestedAt: str(o, 'requestedAt', 'iso', where),
  };
}

function checkRun(v: unknown, where: string): RunRecord {
  const o = obj(v, where);
  return { jobId: str(o, 'jobId', JOB_ID, where), submittedAt: str(o, 'submittedAt', 'iso', where) };
}

function checkOutcome(v: unknown, where: string): Outcome {
  const o = obj(v, where);
  const kind = o.kind;
  if (typeof kind !== 'string' || !(OUTCOME_KINDS as readonly string[]).includes(kind))
    fail(`${where}.kind`, `not one of ${OUTCOME_KINDS.join(', ')}`);
  const evidence = o.evidence;
  if (!Array.isArray(evidence) || evidence.some((e) => typeof e !== 'string' || e.length > 2000))
    fail(`${where}.evidence`, 'not a list of sentences');
  const out: Outcome = { kind: kind as Outcome['kind'], at: str(o, 'at', 'iso', where), evidence };
  if (o.jobId !== undefined) out.jobId = str(o, 'jobId', JOB_ID, where);
  return out;
}

export function checkRunState(data: unknown): RunState {
  const o = obj(data, 'state');
  if (o.version !== 1) fail('version', `${JSON.stringify(o.version)} is not 1`);
  if (!Array.isArray(o.requests)) fail('requests', 'not a list');
  const state: RunState = {
    version: 1,
    requests: o.requests.map(checkRequest),
    runs: {},
    outcomes: {},
  };
  const ids = new Set(state.requests.map((r) => r.id));
  for (const [id, run] of Object.entries(obj(o.runs, 'runs'))) {
    if (!ids.has(id)) fail(`runs.${id}`, 'no such request');
    state.runs[id] = checkRun(run, `runs.${id}`);
  }
  for (const [id, outcome] of Object.entries(obj(o.outcomes, 'outcomes'))) {
    if (!ids.has(id)) fail(`outcomes.${id}`, 'no such request');
    state.outcomes[id] = checkOutcome(outcome, `outcomes.${id}`);
  }
  return state;
}
