// Rebuilding the bot state from the bot's own records (state block, submission records) and Slurm's jobs: only a live run at the head's
// topology stays open; every other run gets an Outcome; a rebuild never starts anything.
import { describe, expect, it } from 'vitest';
import {
  emptyRunState,
  openRequests,
  type RunRequest,
  withRequest,
  withRun,
} from '../../../src/lifecycle/model.js';
import { planRebuild, type RebuildJob, runsOfRecords, underCurrent } from '../../../src/lifecycle/rebuild.js';
import type { Submission } from '../../../src/lifecycle/submissions.js';

const A = 'topology-opt-vam-local-20260101';
const B = `${A}-b-20260102`;
const HEAD = 'a'.repeat(40);
const run = (candidate: string, hash: string, label: string, exp = A) =>
  `topo-${exp}-${candidate}-${hash}-${label}`;

const request = (candidate: string, hash: string, label: string, at: string, exp = A): RunRequest => ({
  id: label,
  experiment: exp,
  candidate,
  path: `topologies/${exp}/${candidate}.yaml`,
  pr: 7,
  headSha: HEAD,
  topologyHash: hash,
  runName: run(candidate, hash, label, exp),
  login: 'alice',
  requestedAt: at,
});

/** What the bot recorded: `more` submitted, then queued again; `less` submitted; a run of a longer experiment. */
const submissions: Submission[] = [
  { request: request('more', '11111111', '0000aaaa', '2026-12-01T10:00:00.000Z'), jobId: '41' },
  { request: request('more', '11111111', '0000bbbb', '2026-12-01T10:05:00.000Z') },
  { request: request('less', '22222222', '0000cccc', '2026-12-01T10:05:00.001Z'), jobId: '42' },
  { request: request('x', '33333333', '0000dddd', '2026-12-01T10:05:00.002Z', B), jobId: '43' },
];

describe('the runs the bot’s records name', () => {
  it('are the submission records’ Requests, each once, oldest first, with whether a job was recorded', () => {
    const runs = runsOfRecords(null, [...submissions].reverse());
    expect(runs.map((r) => [r.experiment, r.candidate, r.id, r.submitted])).toEqual([
      [A, 'more', '0000aaaa', true],
      [A, 'more', '0000bbbb', false],
      [A, 'less', '0000cccc', true],
      [B, 'x', '0000dddd', true],
    ]);
    expect(runs[1]?.firstSeen).toBe('2026-12-01T10:05:00.000Z');
  });

  it('take a readable state’s Requests and ended runs too, and a Run there makes a record’s run submitted', () => {
    let state = withRequest(
      emptyRunState(),
      request('more', '11111111', '0000bbbb', '2026-12-01T10:05:00.000Z'),
    );
    state = withRun(state, '0000bbbb', { jobId: '44', submittedAt: '2026-12-01T10:06:00.000Z' });
    state = {
      ...state,
      ended: [
        {
          id: '0000eeee',
          experiment: A,
          candidate: 'old',
          runName: run('old', '44444444', '0000eeee'),
          kind: 'finished',
          at: '2026-11-30T00:00:00.000Z',
          jobId: '9',
        },
      ],
    };
    const runs = runsOfRecords(state, submissions.slice(0, 2));
    expect(runs.map((r) => [r.candidate, r.id, r.topologyHash, r.submitted])).toEqual([
      ['old', '0000eeee', '44444444', true],
      ['more', '0000aaaa', '11111111', true],
      ['more', '0000bbbb', '11111111', true],
    ]);
  });
});

describe('planning a rebuild', () => {
  const runs = runsOfRecords(
    null,
    submissions.filter((s) => s.request.experiment === A),
  );
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
      [
        run('more', '11111111', '0000aaaa'),
        { id: '41', state: 'RUNNING', status: 'running', submittedAt: null },
      ],
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
      [
        run('more', '11111111', '0000aaaa'),
        { id: '41', state: 'COMPLETED', status: 'completed', submittedAt: null },
      ],
      [
        run('less', '22222222', '0000cccc'),
        { id: '42', state: 'RUNNING', status: 'running', submittedAt: '2026-12-01T10:05:01.000Z' },
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
      [
        run('more', '11111111', '0000aaaa'),
        { id: '41', state: 'RUNNING', status: 'running', submittedAt: null },
      ],
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
