// The round's reference job as a Request (issue 38 item 1): the bot's, of the default branch's best,
// pinned to the pull request's head so a push ends it with the candidates; kept and checked in the
// bot state like any Request; the one that stands is shared by the rounds of one experiment.
import { describe, expect, it } from 'vitest';
import { emptyRunState, phaseOf, withOutcome, withRequest } from '../../../src/lifecycle/model.js';
import { referenceRequest, standingReference } from '../../../src/lifecycle/reference.js';
import { parseRunStateBlock, renderRunStateBlock } from '../../../src/lifecycle/state-block.js';
import { parseRunName } from '../../../src/topology/run-name.js';

const EXP = 'topology-opt-vam-local-20260101';
const source = { name: 'model', path: `topologies/${EXP}/model.yaml`, topologyHash: '0123abcd' };
const at = '2026-01-01T10:00:00.000Z';
const make = (label: string, pr = 4, headSha = 'a'.repeat(40)) =>
  referenceRequest({ experiment: EXP, source, pr, headSha, login: 'topo-bot[bot]', requestedAt: at, label });

describe('the reference Request', () => {
  it('is a run of the best under a label of its own, asked for by the bot', () => {
    const r = make('abcdef01');
    expect(r).toMatchObject({
      role: 'reference',
      candidate: 'model',
      path: source.path,
      login: 'topo-bot[bot]',
    });
    expect(parseRunName(r.runName, EXP)).toEqual({
      experimentId: EXP,
      candidate: 'model',
      hash: '0123abcd',
      label: 'abcdef01',
    });
    expect(() => make('not-hex!')).toThrow(/8 hex digits/);
  });

  it('round-trips through the bot state with its role; a role the state does not know is an error', () => {
    const state = withRequest(emptyRunState(), make('abcdef01'));
    expect(parseRunStateBlock(renderRunStateBlock(state))).toEqual(state);
    const bad = { ...state, requests: [{ ...make('abcdef01'), role: 'candidate' }] };
    const block = `<!-- topo:run-state v2 ${Buffer.from(JSON.stringify(bad)).toString('base64')} -->`;
    expect(() => parseRunStateBlock(block)).toThrow(/requests\[0\]\.role: not "reference"/);
  });

  it('is superseded by a push like the candidates it runs beside', () => {
    const r = make('abcdef01');
    expect(phaseOf({ request: r, job: { id: '7', status: 'running' }, headSha: 'b'.repeat(40) })).toEqual({
      phase: 'supersede',
      jobId: '7',
    });
  });

  it('stands for the rounds of one experiment until it ends: the oldest open one, of the same topology', () => {
    const head = 'a'.repeat(40);
    const a = { request: { ...make('0000000a', 4), requestedAt: '2026-01-01T10:05:00.000Z' }, headSha: head };
    const b = { request: make('0000000b', 6), headSha: head };
    expect(standingReference([a, b], EXP, source)?.request.id).toBe('0000000b');
    const ended = withOutcome(withRequest(emptyRunState(), b.request), b.request.id, {
      kind: 'closed',
      at,
      evidence: ['closed'],
    });
    const closedB = { ...b, outcome: ended.outcomes[b.request.id] };
    expect(standingReference([a, closedB], EXP, source)?.request.id).toBe('0000000a');
    // another best, a pushed pull request, a candidate's Request: none stands
    expect(standingReference([a], EXP, { ...source, topologyHash: 'ffffffff' })).toBeNull();
    expect(standingReference([{ ...a, headSha: 'c'.repeat(40) }], EXP, source)).toBeNull();
    const { role: _role, ...candidate } = a.request;
    expect(standingReference([{ ...a, request: candidate }], EXP, source)).toBeNull();
  });
});
