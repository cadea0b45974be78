// Stage `read` on ports in memory: one snapshot (experiments once, each experiment's jobs once), the
// experiment's clock, each Request's phase; Slurm unreachable fails that experiment alone.
import { describe, expect, it } from 'vitest';
import { read } from '../../../../src/monitor/read.js';
import { newPassState } from '../../../../src/monitor/state.js';
import {
  callLog,
  EXPERIMENT_ID,
  experimentOf,
  NOW,
  recordingPorts,
  requestedCandidate,
  runningJob,
} from '../../../support/monitor-state.js';

const OTHER_HEAD = 'b'.repeat(40);

describe('stage read', () => {
  it('reads the experiments once and each experiment’s jobs once, and nothing else', async () => {
    const queued = requestedCandidate('queued', 1);
    const exp = experimentOf([queued]);
    const other = experimentOf([], { experiment_id: `${EXPERIMENT_ID}-2` });
    const ports = recordingPorts({ experiments: async () => [exp, other] });
    const state = newPassState({ tickSeconds: 60, lagSeconds: 10 });
    await read(state, ports);
    expect(callLog(ports.calls)).toEqual([
      'experiments',
      `slurm.jobs ${EXPERIMENT_ID}`,
      `slurm.jobs ${EXPERIMENT_ID}-2`,
    ]);
    const [e] = state.experiments;
    expect(e?.clock).toEqual({
      S: 60,
      scrape: 1,
      evalTs: Math.floor((NOW - 10) / 60) * 60,
      wallMinutes: 240,
      expectedRollouts: null,
    });
    expect(e?.candidates.map((p) => [p.c.candidate, p.inPass, p.c.requested, p.phase?.phase])).toEqual([
      ['queued', true, true, 'queued'],
    ]);
  });

  it('gives each Request its phase: a push supersedes, a forgotten job is lost, a consumed one is kept while its job is', async () => {
    const moved = requestedCandidate('moved', 1, { currentHeadSha: OTHER_HEAD });
    const forgotten = requestedCandidate('forgotten', 2, { run: { jobId: '7', submittedAt: 'x' } });
    const stopped = requestedCandidate('stopped', 3, {
      outcome: { kind: 'stopped', at: 'x', jobId: '13', evidence: [] },
    });
    const withdrawn = requestedCandidate('withdrawn', 4, {
      outcome: { kind: 'cancelled', at: 'x', evidence: [] },
    });
    const exp = experimentOf([moved, forgotten, stopped, withdrawn]);
    const jobs = [runningJob(moved.runName, '11'), runningJob(stopped.runName, '13')];
    const ports = recordingPorts({ experiments: async () => [exp], slurm: { jobs: async () => jobs } });
    const state = newPassState();
    await read(state, ports);
    const byName = Object.fromEntries(state.experiments[0]?.candidates.map((p) => [p.c.candidate, p]) ?? []);
    expect(byName.moved?.phase).toEqual({ phase: 'supersede', jobId: '11' });
    expect(byName.moved?.inPass).toBe(false);
    expect(byName.forgotten?.phase).toEqual({ phase: 'lost', jobId: '7' });
    expect(byName.forgotten?.inPass).toBe(false);
    // `/topo stop` consumed it but Slurm still runs it: judged (its comment), never submitted again
    expect(byName.stopped?.phase).toMatchObject({ phase: 'done', cancelLive: '13' });
    expect([byName.stopped?.inPass, byName.stopped?.c.requested, byName.stopped?.job?.jobId]).toEqual([
      true,
      false,
      '13',
    ]);
    expect(byName.withdrawn?.inPass).toBe(false);
  });

  it('an experiment whose Slurm cannot be listed fails alone, as an outage', async () => {
    const down = experimentOf([requestedCandidate('a', 1)]);
    const up = experimentOf([requestedCandidate('b', 2)], { experiment_id: `${EXPERIMENT_ID}-up` });
    const ports = recordingPorts({
      experiments: async () => [down, up],
      slurm: {
        jobs: async (id) => {
          if (id === EXPERIMENT_ID) throw new Error('slurmctld: connection refused');
          return [];
        },
      },
    });
    const state = newPassState();
    await read(state, ports);
    const [d, u] = state.experiments;
    expect(d?.failed).toEqual({
      stage: 'read',
      message: 'Slurm: slurmctld: connection refused',
      clusterUnreachable: true,
    });
    expect(d?.errors).toEqual([`${EXPERIMENT_ID}: Slurm: slurmctld: connection refused`]);
    expect(u?.failed).toBeUndefined();
    expect(u?.candidates.map((p) => p.c.candidate)).toEqual(['b']);
  });
});
