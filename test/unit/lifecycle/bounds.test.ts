// The run state's bound: compacted, never cut; a new Request is admitted only when every open
// Request can still get its Run and Outcome; ending Requests never needs a cut.
import { describe, expect, it } from 'vitest';
import {
  admitRequest,
  compactRunState,
  ENDED_KEEP,
  fitRunState,
  RunStateFullError,
  STATE_BLOCK_BUDGET,
} from '../../../src/lifecycle/bounds.js';
import {
  emptyRunState,
  latestRequests,
  openRequests,
  type RunRequest,
  type RunState,
  withOutcome,
  withRun,
} from '../../../src/lifecycle/model.js';
import {
  encodedRunStateLength,
  parseRunStateBlock,
  renderRunStateBlock,
} from '../../../src/lifecycle/state-block.js';
import { runNameFor } from '../../../src/topology/run-name.js';

const EXP = 'topology-opt-renderer-local-20260101';
const HEAD = 'a'.repeat(40);

function request(i: number, candidate = `c${i % 16}`): RunRequest {
  const id = i.toString(16).padStart(8, '0');
  return {
    id,
    experiment: EXP,
    candidate,
    path: `topologies/${EXP}/${candidate}.yaml`,
    pr: 7,
    headSha: HEAD,
    topologyHash: '12345678',
    runName: runNameFor(`topo-${EXP}-${candidate}-12345678`, id),
    login: 'alice',
    requestedAt: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
  };
}

const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1000 + 500).toISOString();

/** Rounds of /topo submit (16 candidates) then /topo cancel, as the overflow did. */
function rounds(n: number): RunState {
  let s = emptyRunState();
  for (let i = 0; i < n; i++) {
    s = admitRequest(s, request(i));
    s = fitRunState(withRun(s, request(i).id, { jobId: String(1000 + i), submittedAt: at(i) }));
    s = fitRunState(
      withOutcome(s, request(i).id, {
        kind: 'cancelled',
        at: at(i),
        jobId: String(1000 + i),
        evidence: ['/topo cancel by alice'],
      }),
    );
  }
  return s;
}

describe('the bounded run state', () => {
  it('holds 200 Requests as the latest per candidate and a summary of the newest ended ones', () => {
    const s = rounds(200);
    expect(s.requests.map((r) => r.candidate).sort()).toEqual(
      Array.from({ length: 16 }, (_, i) => `c${i}`).sort(),
    );
    expect(s.ended).toHaveLength(ENDED_KEEP);
    expect(s.forgotten.cancelled).toBe(200 - 16 - ENDED_KEEP);
    expect(Object.keys(s.outcomes)).toHaveLength(16);
    expect(encodedRunStateLength(s)).toBeLessThan(STATE_BLOCK_BUDGET);
    expect(renderRunStateBlock(s).length).toBe(encodedRunStateLength(s));
    expect(parseRunStateBlock(renderRunStateBlock(s))).toEqual(s);
    // the summary keeps the newest: the last ended entry is the 184th Request
    expect(s.ended.at(-1)?.id).toBe(request(183).id);
    expect(s.ended.at(-1)?.jobId).toBe('1183');
  });

  it('never drops an open Request: compaction moves only ended ones that are not the latest', () => {
    let s = rounds(40);
    for (let i = 40; i < 48; i++) s = admitRequest(s, request(i));
    const compact = compactRunState(s);
    expect(openRequests(compact).map((r) => r.id)).toEqual(openRequests(s).map((r) => r.id));
    expect(latestRequests(compact).map((r) => r.id)).toEqual(latestRequests(s).map((r) => r.id));
  });

  it('drops the oldest summary entries to fit, then refuses rather than cut', () => {
    const s = rounds(80);
    const small = encodedRunStateLength({ ...s, ended: [] }) + 2000;
    const fitted = fitRunState(s, small);
    expect(encodedRunStateLength(fitted)).toBeLessThanOrEqual(small);
    expect(fitted.ended.length).toBeLessThan(s.ended.length);
    expect(fitted.ended.at(-1)).toEqual(s.ended.at(-1));
    const forgotten = Object.values(fitted.forgotten).reduce((a, b) => (a ?? 0) + (b ?? 0), 0) ?? 0;
    expect(forgotten + fitted.ended.length).toBe(80 - 16);
    expect(() => fitRunState(s, 1000)).toThrow(RunStateFullError);
  });

  it('admits a Request only when every open Request can still end in the state', () => {
    // open Requests of 200 distinct candidates: admitted until the reserve would not fit
    let s = emptyRunState();
    let admitted = 0;
    let refusal: Error | undefined;
    for (let i = 0; i < 200 && !refusal; i++) {
      try {
        s = admitRequest(s, request(i, `cand-${i}`));
        admitted++;
      } catch (e) {
        refusal = e as Error;
      }
    }
    expect(refusal).toBeInstanceOf(RunStateFullError);
    expect(refusal?.message).toMatch(/already has \d+ open Requests.*Cancel some/);
    expect(admitted).toBeGreaterThanOrEqual(24);
    // every admitted Request still gets a Run and the largest Outcome, and the state still fits
    for (const r of openRequests(s)) {
      s = fitRunState(withRun(s, r.id, { jobId: '1234567890_1234567890', submittedAt: at(1) }));
      s = fitRunState(
        withOutcome(s, r.id, {
          kind: 'superseded',
          at: at(2),
          jobId: '1234567890_1234567890',
          evidence: ['é"'.repeat(500), '\u0001'.repeat(500), 'three'],
        }),
      );
    }
    expect(openRequests(s)).toEqual([]);
    expect(encodedRunStateLength(s)).toBeLessThanOrEqual(STATE_BLOCK_BUDGET);
  });
});
