// Rebuilding the bot state from the bot's comments and Slurm's jobs: only a live run at the head's
// topology stays open; every other run gets an Outcome; a rebuild never starts anything.
import { describe, expect, it } from 'vitest';
import { emptyRunState, openRequests, withRequest } from '../../../src/lifecycle/model.js';
import { planRebuild, type RebuildJob, runsInHistory, underCurrent } from '../../../src/lifecycle/rebuild.js';

const A = 'topology-opt-vam-local-20260101';
const B = `${A}-b-20260102`;
const HEAD = 'a'.repeat(40);
const run = (candidate: string, hash: string, label: string, exp = A) =>
  `topo-${exp}-${candidate}-${hash}-${label}`;

const history = [
  {
    at: '2026-12-01T10:00:00.000Z',
    body: `\`${run('more', '11111111', '0000aaaa')}\` submitted as Slurm job **41**.`,
  },
  {
    at: '2026-12-01T10:05:00.000Z',
    body: [
      `\`${run('more', '11111111', '0000bbbb')}\` queued at position 1 (by request time): 1 of 1 experiment slots are busy`,
      `\`${run('less', '22222222', '0000cccc')}\` submitted as Slurm job **42**.`,
      `a run of the longer experiment: \`${run('x', '33333333', '0000dddd', B)}\` submitted as Slurm job **43**`,
      'not a run: topo-other-thing',
    ].join('\n'),
  },
];

describe('the runs in the pull request’s history', () => {
  it('are its run names, each once, owned by the longest experiment id, with whether a job was named', () => {
    const runs = runsInHistory(history, [A, B]);
    expect(runs.map((r) => [r.experiment, r.candidate, r.id, r.submitted])).toEqual([
      [A, 'more', '0000aaaa', true],
      [A, 'more', '0000bbbb', false],
      [A, 'less', '0000cccc', true],
      [B, 'x', '0000dddd', true],
    ]);
    expect(runs[1]?.firstSeen).toBe('2026-12-01T10:05:00.000Z');
  });
});

describe('planning a rebuild', () => {
  const runs = runsInHistory(history, [A]);
  const head = new Map([
    [`${A}/more`, { path: `topologies/${A}/more.yaml`, topologyHash: '11111111' }],
    [`${A}/less`, { path: `topologies/${A}/less.yaml`, topologyHash: '99999999' }],
  ]);
  const plan = (jobs: Array<[string, RebuildJob]>) =>
    planRebuild({
      pr: 7,
      headSha: HEAD,
      login: 'alice',
      now: '2026-12-02T00:00:00.000Z',
      runs,
      jobs: new Map(jobs),
      head,
      topologiesDir: 'topologies',
    });

  it('keeps a live run at the head’s topology open; withdraws one that never got a job', () => {
    const p = plan([
      [run('more', '11111111', '0000aaaa'), { id: '41', state: 'RUNNING', submittedAt: null }],
    ]);
    expect(openRequests(p.state).map((r) => [r.id, p.state.runs[r.id]?.jobId])).toEqual([['0000aaaa', '41']]);
    const kinds = (id: string) => p.state.outcomes[id]?.kind ?? p.state.ended.find((e) => e.id === id)?.kind;
    expect(kinds('0000bbbb')).toBe('superseded');
    // submitted, and Slurm no longer knows the job: lost, never submitted again
    expect(kinds('0000cccc')).toBe('lost');
    expect(p.cancel).toEqual([]);
  });

  it('cancels a live run whose candidate at the head is another topology; an ended one says how it ended', () => {
    const p = plan([
      [run('more', '11111111', '0000aaaa'), { id: '41', state: 'COMPLETED', submittedAt: null }],
      [
        run('less', '22222222', '0000cccc'),
        { id: '42', state: 'RUNNING', submittedAt: '2026-12-01T10:05:01.000Z' },
      ],
    ]);
    expect(openRequests(p.state)).toEqual([]);
    expect(p.cancel).toEqual([{ experiment: A, jobId: '42', runName: run('less', '22222222', '0000cccc') }]);
    const all = { ...p.state.outcomes };
    expect(all['0000cccc']?.kind ?? p.state.ended.find((e) => e.id === '0000cccc')?.kind).toBe('superseded');
    expect(all['0000aaaa']?.kind ?? p.state.ended.find((e) => e.id === '0000aaaa')?.kind).toBe('finished');
  });

  it('adds to a readable state only what it does not hold', () => {
    const p = plan([
      [run('more', '11111111', '0000aaaa'), { id: '41', state: 'RUNNING', submittedAt: null }],
    ]);
    const known = p.state.requests.find((r) => r.id === '0000aaaa');
    if (!known) throw new Error('no request');
    const current = withRequest(emptyRunState(), { ...known, login: 'bob' });
    const merged = underCurrent(current, p.state);
    expect(merged.added.has('0000aaaa')).toBe(false);
    expect(merged.state.requests.find((r) => r.id === '0000aaaa')?.login).toBe('bob');
    expect(merged.added.size).toBe(2);
  });
});
