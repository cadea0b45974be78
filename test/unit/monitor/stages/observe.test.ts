// Stage `observe` on a state `read` left, built in memory: one Prometheus query per quantity over the
// started jobs, each judged candidate's comment read back, nothing written.
import { describe, expect, it } from 'vitest';
import { observe } from '../../../../src/monitor/observe.js';
import { renderObservationBlock } from '../../../../src/report/observation-block.js';
import { QUANTITIES } from '../../../../src/telemetry/queries.js';
import {
  callLog,
  experimentOf,
  readState,
  recordingPorts,
  requestedCandidate,
  runningJob,
} from '../../../support/monitor-state.js';

const noPrometheus = {
  baseUrl: 'http://prometheus.test',
  instant: async () => Promise.reject(new Error('no')),
};
const empty = { resultType: 'matrix' as const, series: [], empty: true, nonFinite: 0, warnings: [] };

describe('stage observe', () => {
  it('without a started job asks Prometheus nothing and reads each judged candidate’s comment once', async () => {
    const queued = requestedCandidate('queued', 1);
    const moved = requestedCandidate('moved', 2, { currentHeadSha: 'b'.repeat(40) });
    const state = readState([{ exp: experimentOf([queued, moved]) }]);
    const previous = renderObservationBlock({
      run_name: queued.runName,
      verdict: { state: 'warming', evidence: [] },
      stable_metrics: {},
    });
    const ports = recordingPorts({ github: { readComment: async () => `last pass\n${previous}` } });
    await observe(state, ports);
    expect(callLog(ports.calls)).toEqual(['github.readComment #1 queued']);
    const [q, m] = state.experiments[0]?.candidates ?? [];
    expect(q?.observed).toMatchObject({ ended: false, run: { memory: { run_name: queued.runName } } });
    expect(q?.observed?.analysis).toBeUndefined();
    expect(m?.observed).toBeUndefined(); // superseded: not judged
    expect(state.experiments[0]?.telemetry).toBeUndefined();
  });

  it('queries each quantity once for the experiment; a run without metrics past the deadline and the wall-clock floor fails with no-telemetry', async () => {
    const a = requestedCandidate('a', 1);
    const b = requestedCandidate('b', 2);
    const state = readState([
      {
        exp: experimentOf([a, b]),
        jobs: [runningJob(a.runName, '11', 600), runningJob(b.runName, '12', 60)],
      },
    ]);
    const ports = recordingPorts({ prometheus: { ...noPrometheus, range: async () => empty } });
    await observe(state, ports);
    const queries = ports.calls.filter((c) => c.port === 'prometheus.range');
    // the rule, then its raw fallback when the rule is empty: at most two per quantity, never per run
    expect(queries.length).toBeLessThanOrEqual(2 * QUANTITIES.length);
    expect(state.experiments[0]?.unavailable).toBeNull();
    const [pa, pb] = state.experiments[0]?.candidates ?? [];
    // 600 s at time scale 60 is 600 run-minutes: past the deadline and the wall-clock floor (120 s)
    expect(pa?.observed?.analysis?.observation.failure?.kind).toBe('no-telemetry');
    // 60 s is an hour of run time, past the 15 run-minutes, but a minute of wall clock: a run that
    // merely started slowly on a loaded machine is not failed
    expect(pb?.observed?.analysis?.observation.failure).toBeUndefined();
  });

  it('an unreadable quantity makes the experiment unavailable: no run fails for want of metrics', async () => {
    const a = requestedCandidate('a', 1);
    const state = readState([{ exp: experimentOf([a]), jobs: [runningJob(a.runName, '11', 600)] }]);
    const ports = recordingPorts({
      prometheus: {
        ...noPrometheus,
        range: async () => Promise.reject(new Error('503 Service Unavailable')),
      },
    });
    await observe(state, ports);
    const e = state.experiments[0];
    expect(e?.unavailable).toMatch(/^Prometheus: \w+: 503 Service Unavailable$/);
    expect(e?.candidates[0]?.observed?.analysis?.observation.failure).toBeUndefined();
    expect(e?.failed).toBeUndefined();
  });
});
