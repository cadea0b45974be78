// The pure lifecycle: run names parsed exactly, the phase function, the bot-owned state block.
import { describe, expect, it } from 'vitest';
import { jobForRun } from '../../../src/lifecycle/jobs.js';
import {
  EVIDENCE_KEPT,
  emptyRunState,
  latestRequests,
  openRequests,
  phaseOf,
  type RunRequest,
  staleRequests,
  standingRequests,
  UnknownRequestError,
  withOutcome,
  withRequest,
  withRun,
} from '../../../src/lifecycle/model.js';
import {
  parseRunStateBlock,
  RunStateError,
  renderRunStateBlock,
} from '../../../src/lifecycle/state-block.js';
import { isRunOf, newRunLabel, parseRunName, runNameFor } from '../../../src/topology/run-name.js';

const A = 'topology-opt-vam-local-20260101';
const B = `${A}-b-20260102`;
const HEAD = 'a'.repeat(40);
const HEAD2 = 'b'.repeat(40);

function request(over: Partial<RunRequest> = {}): RunRequest {
  const id = over.id ?? '0000aaaa';
  return {
    id,
    experiment: A,
    candidate: 'more',
    path: `topologies/${A}/more.yaml`,
    pr: 3,
    headSha: HEAD,
    topologyHash: '12345678',
    runName: runNameFor(`topo-${A}-more-12345678`, id),
    login: 'alice',
    requestedAt: '2026-12-02T10:00:00.000Z',
    ...over,
  };
}

describe('run names', () => {
  it('carry a label of their own per submission', () => {
    const a = newRunLabel();
    const b = newRunLabel();
    expect(a).toMatch(/^[0-9a-f]{8}$/);
    expect(a).not.toBe(b);
    expect(runNameFor(`topo-${A}-more-12345678`, a)).toBe(`topo-${A}-more-12345678-${a}`);
  });

  it('parse exactly: a sibling name is not a prefix match', () => {
    const more = `topo-${A}-more-12345678-0000aaaa`;
    const moreWorkers = `topo-${A}-more-workers-87654321-0000bbbb`;
    expect(parseRunName(more, A)).toEqual({
      experimentId: A,
      candidate: 'more',
      hash: '12345678',
      label: '0000aaaa',
    });
    expect(parseRunName(moreWorkers, A)?.candidate).toBe('more-workers');
    const jobs = [
      { id: '7', name: moreWorkers, status: 'running' as const },
      { id: '8', name: more, status: 'running' as const },
    ];
    expect(jobForRun(jobs, more, (j) => j)?.id).toBe('8');
  });

  it("never count an experiment's jobs under an experiment whose id it extends", () => {
    const bJob = `topo-${B}-cand-12345678-0000cccc`;
    expect(isRunOf(bJob, B)).toBe(true);
    expect(isRunOf(bJob, A, [B])).toBe(false);
    // even when B is unknown here (another repository on the same Slurm account)
    expect(isRunOf(bJob, A)).toBe(false);
    expect(isRunOf(`topo-${A}-cand-12345678-0000cccc`, A, [B])).toBe(true);
  });

  it('refuse names that are not runs', () => {
    expect(parseRunName(`topo-${A}-more`, A)).toBeNull();
    expect(parseRunName(`retired-topo-${A}-more-12345678`, A)).toBeNull();
    expect(parseRunName(`topo-${A}-More-12345678`, A)).toBeNull();
  });
});

describe('the phase of a request', () => {
  it('is queued until submitted, then follows its job', () => {
    const r = request();
    expect(phaseOf({ request: r, job: null, headSha: HEAD })).toEqual({ phase: 'queued' });
    const run = { jobId: '41', submittedAt: '2026-12-02T10:00:01Z' };
    expect(phaseOf({ request: r, run, job: { id: '41', status: 'suspended' }, headSha: HEAD })).toEqual({
      phase: 'running',
      jobId: '41',
    });
    expect(phaseOf({ request: r, run, job: { id: '41', status: 'failed' }, headSha: HEAD })).toEqual({
      phase: 'ended',
      jobId: '41',
    });
  });

  it('is lost, never queued again, when Slurm forgot a submitted job', () => {
    const run = { jobId: '41', submittedAt: '2026-12-02T10:00:01Z' };
    expect(phaseOf({ request: request(), run, job: null, headSha: HEAD })).toEqual({
      phase: 'lost',
      jobId: '41',
    });
  });

  it('is consumed once it has an Outcome, whatever Slurm says', () => {
    const outcome = { kind: 'failed' as const, at: '2026-12-02T11:00:00Z', evidence: ['gpu-oom'] };
    const p = phaseOf({ request: request(), outcome, job: null, headSha: HEAD });
    expect(p.phase).toBe('done');
    const stopped = { kind: 'superseded' as const, at: '2026-12-02T11:00:00Z', evidence: [] };
    expect(
      phaseOf({ request: request(), outcome: stopped, job: { id: '41', status: 'running' }, headSha: HEAD }),
    ).toMatchObject({ phase: 'done', cancelLive: '41' });
  });

  it('is superseded by a push, cancelling a live job', () => {
    expect(phaseOf({ request: request(), job: { id: '41', status: 'running' }, headSha: HEAD2 })).toEqual({
      phase: 'supersede',
      jobId: '41',
    });
    expect(phaseOf({ request: request(), job: null, headSha: HEAD2 })).toEqual({
      phase: 'supersede',
      jobId: null,
    });
  });
});

describe('the run state', () => {
  it('keeps the latest request per candidate and supersedes older or other-head ones', () => {
    let s = withRequest(emptyRunState(), request());
    s = withRequest(s, request({ id: '0000bbbb', headSha: HEAD2, requestedAt: '2026-12-02T10:05:00Z' }));
    expect(latestRequests(s).map((r) => r.id)).toEqual(['0000bbbb']);
    expect(staleRequests(s, HEAD2).map((r) => r.id)).toEqual(['0000aaaa']);
    expect(standingRequests(s, HEAD2).map((r) => r.id)).toEqual(['0000bbbb']);
    expect(standingRequests(s, HEAD)).toEqual([]);
  });

  it('keeps one standing Request per candidate of a multi-candidate pull request', () => {
    let s = withRequest(emptyRunState(), request());
    s = withRequest(s, request({ id: '0000cccc', candidate: 'other', requestedAt: '2026-12-02T10:01:00Z' }));
    s = withRequest(s, request({ id: '0000dddd', requestedAt: '2026-12-02T10:02:00Z' }));
    expect(standingRequests(s, HEAD).map((r) => r.id)).toEqual(['0000cccc', '0000dddd']);
    expect(staleRequests(s, HEAD).map((r) => r.id)).toEqual(['0000aaaa']);
    s = withOutcome(s, '0000cccc', { kind: 'cancelled', at: '2026-12-02T10:03:00Z', evidence: [] });
    expect(standingRequests(s, HEAD).map((r) => r.id)).toEqual(['0000dddd']);
    expect(openRequests(s).map((r) => r.id)).toEqual(['0000aaaa', '0000dddd']);
  });

  it('reads a refused Outcome back from the block', () => {
    const s = withOutcome(withRequest(emptyRunState(), request()), '0000aaaa', {
      kind: 'refused',
      at: '2026-12-02T11:00:00Z',
      evidence: ['x.yaml:7:26: error [gpu-index] GPU index 8 of `driver` does not exist'],
    });
    expect(parseRunStateBlock(renderRunStateBlock(s)).outcomes['0000aaaa']?.kind).toBe('refused');
  });

  it('keeps the first outcome and refuses a Run or an Outcome for a Request it does not hold', () => {
    let a = withRequest(emptyRunState(), request());
    a = withOutcome(a, '0000aaaa', { kind: 'finished', at: '2026-12-02T11:00:00Z', evidence: [] });
    a = withOutcome(a, '0000aaaa', { kind: 'failed', at: '2026-12-02T12:00:00Z', evidence: [] });
    expect(a.outcomes['0000aaaa']?.kind).toBe('finished');
    expect(() =>
      withOutcome(a, 'ffffffff', { kind: 'finished', at: '2026-12-02T11:00:00Z', evidence: [] }),
    ).toThrow(UnknownRequestError);
    expect(() => withRun(a, 'ffffffff', { jobId: '9', submittedAt: '2026-12-02T10:00:00Z' })).toThrow(
      /which the state does not hold/,
    );
  });

  it('keeps at most two sentences of evidence, each a bounded line', () => {
    const s = withOutcome(withRequest(emptyRunState(), request()), '0000aaaa', {
      kind: 'failed',
      at: '2026-12-02T11:00:00Z',
      evidence: [`${'"\u0001'.repeat(400)}\nend`, 'two', 'three'],
    });
    const kept = s.outcomes['0000aaaa']?.evidence ?? [];
    expect(kept).toHaveLength(2);
    expect(Buffer.byteLength(JSON.stringify(kept[0]))).toBeLessThanOrEqual(EVIDENCE_KEPT.bytes);
    expect(kept[0]).toMatch(/…$/);
    expect(kept[1]).toBe('two');
  });

  it('round-trips through the hidden block, which no text can close', () => {
    const s = withOutcome(withRequest(emptyRunState(), request()), '0000aaaa', {
      kind: 'failed',
      at: '2026-12-02T11:00:00Z',
      evidence: ['--> </details> @team <img src=x>'],
    });
    const block = renderRunStateBlock(s);
    expect(block).not.toContain('-->'.repeat(2));
    expect(block.match(/-->/g)).toHaveLength(1);
    expect(parseRunStateBlock(`text\n${block}\n`)).toEqual(s);
    expect(parseRunStateBlock(undefined)).toEqual(emptyRunState());
  });

  it('never reads a comment without a whole block as an empty state', () => {
    const block = renderRunStateBlock(withRequest(emptyRunState(), request()));
    expect(() => parseRunStateBlock('no block')).toThrow(/bot state unreadable: .*no state block/);
    expect(() => parseRunStateBlock(`text\n${block.slice(0, 120)}`)).toThrow(
      /bot state unreadable: the state block is cut/,
    );
  });

  it('refuses a block that does not check, saying where', () => {
    const bad = (data: unknown, v = 2) =>
      `<!-- topo:run-state v${v} ${Buffer.from(JSON.stringify(data)).toString('base64')} -->`;
    const s = withRequest(emptyRunState(), request());
    expect(() => parseRunStateBlock(bad({ ...s, version: 3 }))).toThrow(RunStateError);
    expect(() => parseRunStateBlock(bad(s, 1))).toThrow(/says v1 but holds a version 2/);
    expect(() => parseRunStateBlock(bad({ ...s, ended: [{ ...request(), kind: 'done' }] }))).toThrow(
      /ended\[0\]/,
    );
    expect(() =>
      parseRunStateBlock(bad({ ...s, requests: [{ ...request(), runName: 'x; rm -rf /' }] })),
    ).toThrow(/requests\[0\]\.runName/);
    expect(() => parseRunStateBlock(bad({ ...s, outcomes: { ffffffff: { kind: 'finished' } } }))).toThrow(
      /no such request/,
    );
    expect(() => parseRunStateBlock('<!-- topo:run-state v1 bm90IGpzb24= -->')).toThrow(/not JSON/);
  });

  it('reads a state written before the bound (version 1) as one with nothing summarised', () => {
    const { version: _, ended: __, forgotten: ___, ...v1 } = withRequest(emptyRunState(), request());
    const block = `<!-- topo:run-state v1 ${Buffer.from(JSON.stringify({ version: 1, ...v1 })).toString('base64')} -->`;
    expect(parseRunStateBlock(block)).toEqual(withRequest(emptyRunState(), request()));
  });
});

describe('cancel matches runs exactly', () => {
  it('a base name matches its labelled runs, never a sibling', async () => {
    const { isRunOfName } = await import('../../../src/usecases/submit.js');
    const base = `topo-${A}-more-12345678`;
    expect(isRunOfName(`${base}-0000aaaa`, base, A)).toBe(true);
    expect(isRunOfName(base, base, A)).toBe(true);
    expect(isRunOfName(`topo-${A}-more-workers-12345678-0000aaaa`, base, A)).toBe(false);
    expect(isRunOfName(`${base}-0000bbbb`, `${base}-0000aaaa`, A)).toBe(false);
  });
});
