// One clock (src/monitor/clock.ts): the runner's clock is checked against Prometheus's now and the
// times Slurm printed; a run is counted in run-minutes from Prometheus's now, never the runner's alone.
import { describe, expect, it } from 'vitest';
import {
  clockSkew,
  MAX_SKEW_SECONDS,
  prometheusNow,
  readClock,
  slurmLatest,
} from '../../../src/monitor/clock.js';
import type { MonitorJob } from '../../../src/monitor/ports.js';
import {
  experimentOf,
  NOW,
  readState,
  recordingPorts,
  requestedCandidate,
  runningJob,
} from '../../support/monitor-state.js';

const scalar = (ts: number) => ({
  resultType: 'scalar' as const,
  series: [{ labels: {}, points: [[ts, ts]] as [number, number][] }],
  empty: false,
  nonFinite: 0,
  warnings: [],
});
const noRange = async () => Promise.reject(new Error('no'));

describe('the runner clock', () => {
  it('is trusted within a minute of Prometheus’s now, either way', () => {
    expect(clockSkew(NOW + MAX_SKEW_SECONDS, { prometheus: NOW, slurm: null })).toBeNull();
    expect(clockSkew(NOW - MAX_SKEW_SECONDS, { prometheus: NOW, slurm: NOW })).toBeNull();
  });

  it('is named off, with by how much and which way, beyond a minute', () => {
    expect(clockSkew(NOW + 7200, { prometheus: NOW, slurm: null })).toMatch(
      /^the runner's clock \(\S+\) is 2 h 0 min ahead of Prometheus's \(\S+\), more than 60 s: no verdict is written from it/,
    );
    expect(clockSkew(NOW - 90, { prometheus: NOW, slurm: null })).toMatch(/is 90 s behind Prometheus's/);
  });

  it('is off when it is behind a time Slurm already printed (Prometheus unreadable)', () => {
    expect(clockSkew(NOW - 600, { prometheus: null, slurm: NOW })).toMatch(
      /is at least 10 min behind a time Slurm printed/,
    );
    // ahead of Slurm says nothing: Slurm prints past times only
    expect(clockSkew(NOW + 7200, { prometheus: null, slurm: NOW })).toBeNull();
  });

  it('reads Slurm’s past times only: a pending job’s start and a live job’s end are forecasts', () => {
    const jobs: MonitorJob[] = [
      { jobId: '1', name: 'a', state: 'PENDING', status: 'queued', submitTs: NOW - 10, startTs: NOW + 900 },
      {
        jobId: '2',
        name: 'b',
        state: 'RUNNING',
        status: 'running',
        submitTs: NOW - 50,
        startTs: NOW - 40,
        endTs: NOW + 600,
      },
      {
        jobId: '3',
        name: 'c',
        state: 'COMPLETED',
        status: 'completed',
        submitTs: NOW - 99,
        startTs: NOW - 98,
        endTs: NOW - 5,
      },
    ];
    expect(slurmLatest(jobs)).toBe(NOW - 5);
    expect(slurmLatest([])).toBeNull();
  });

  it('takes Prometheus’s now from an instant time() at the server’s own time; anything else is unreadable', async () => {
    const asked: Array<[string, number | undefined]> = [];
    const prom = (answer: () => Promise<ReturnType<typeof scalar>>) => ({
      baseUrl: 'http://p',
      range: noRange,
      instant: async (q: string, time?: number) => {
        asked.push([q, time]);
        return answer();
      },
    });
    expect(await prometheusNow(prom(async () => scalar(NOW)))).toBe(NOW);
    expect(asked).toEqual([['time()', undefined]]);
    expect(
      await prometheusNow(prom(async () => ({ ...scalar(NOW), resultType: 'vector' as never }))),
    ).toBeNull();
    expect(await prometheusNow(prom(() => Promise.reject(new Error('down'))))).toBeNull();
  });
});

describe('the pass clock', () => {
  it('counts a started run to Prometheus’s now, and marks a runner 2 h fast as skewed', async () => {
    const a = requestedCandidate('a', 1);
    const state = readState([{ exp: experimentOf([a]), jobs: [runningJob(a.runName, '11')] }]);
    const [e] = state.experiments;
    if (!e) throw new Error('no experiment');
    const ports = {
      ...recordingPorts({
        prometheus: { baseUrl: 'http://p', instant: async () => scalar(NOW - 30), range: noRange },
      }),
      now: () => NOW + 7200,
    };
    const clock = await readClock(e, ports, state.options);
    expect(clock.source).toBe('prometheus');
    expect(clock.evalTs).toBe(Math.floor((NOW - 30) / 5) * 5);
    expect(clock.skew).toMatch(/is 2 h 1 min ahead of Prometheus's/);
  });

  it('asks nothing when no run is to be counted', async () => {
    const state = readState([{ exp: experimentOf([requestedCandidate('q', 1)]) }]);
    const [e] = state.experiments;
    if (!e) throw new Error('no experiment');
    const before = e.clock;
    const ports = recordingPorts();
    const clock = await readClock(e, ports, state.options);
    expect(ports.calls).toEqual([]);
    expect(clock).toBe(before);
  });
});
