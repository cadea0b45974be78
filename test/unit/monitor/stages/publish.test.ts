// Stage `publish` on a state acted on in memory: per pull request its check run and label over all
// its candidates, then the comments, then the final Outcomes; nothing for what did not change.
import { describe, expect, it } from 'vitest';
import { act } from '../../../../src/monitor/act.js';
import { decide } from '../../../../src/monitor/decide.js';
import type { MonitorJob } from '../../../../src/monitor/ports.js';
import { publish } from '../../../../src/monitor/publish.js';
import type { PassState } from '../../../../src/monitor/state.js';
import {
  callLog,
  experimentOf,
  NOW,
  observeWith,
  readState,
  recordingPorts,
  requestedCandidate,
} from '../../../support/monitor-state.js';

async function acted(state: PassState): Promise<PassState> {
  for (const e of state.experiments) observeWith(e);
  await decide(state);
  await act(state, recordingPorts());
  return state;
}

describe('stage publish', () => {
  it('writes a new candidate’s check, label and comment, in that order; the same state again writes nothing', async () => {
    const a = requestedCandidate('a', 1);
    const state = await acted(readState([{ exp: experimentOf([a]) }]));
    const ports = recordingPorts();
    await publish(state, ports);
    expect(callLog(ports.calls)).toEqual([
      'github.writeCheck #1',
      'github.setLabel #1',
      'github.writeComment #1 a',
    ]);
    expect(ports.calls[1]?.args[1]).toBe('queued');
    const text = ports.calls[2]?.args[2] as string;
    expect(text).toContain('<!-- topo:written state=queued');
    expect(state.experiments[0]?.candidates[0]?.published).toEqual({ changed: true });

    // the next pass reads that comment back: nothing changed, nothing is written
    const again = readState([{ exp: experimentOf([a]) }]);
    for (const e of again.experiments) observeWith(e);
    const p = again.experiments[0]?.candidates[0];
    if (p?.observed) p.observed.current = text;
    await decide(again);
    await act(again, recordingPorts());
    const quiet = recordingPorts();
    await publish(again, quiet);
    expect(quiet.calls).toEqual([]);
    expect(p?.published).toEqual({ changed: false });
  });

  it('a pull request a candidate left gets its label recomputed from the candidates that stay', async () => {
    const moved = requestedCandidate('moved', 1, {
      currentHeadSha: 'b'.repeat(40),
      labels: ['topology:running'],
    });
    const job: MonitorJob = {
      jobId: '11',
      name: moved.runName,
      state: 'RUNNING',
      status: 'running',
      startTs: NOW - 60,
    };
    const state = await acted(readState([{ exp: experimentOf([moved]), jobs: [job] }]));
    const ports = recordingPorts();
    await publish(state, ports);
    expect(callLog(ports.calls)).toEqual(['github.setLabel #1']);
    expect(ports.calls[0]?.args.slice(1)).toEqual([null, ['topology:running']]);
  });

  it('records the Outcome once the ended run’s comment is final, after the comment', async () => {
    const done = requestedCandidate('done', 1);
    const job: MonitorJob = {
      jobId: '11',
      name: done.runName,
      state: 'COMPLETED',
      status: 'completed',
      startTs: NOW - 120,
      endTs: NOW - 60,
    };
    const state = readState([{ exp: experimentOf([done]), jobs: [job] }]);
    for (const e of state.experiments) observeWith(e);
    const p = state.experiments[0]?.candidates[0];
    if (p?.observed) p.observed.ended = true;
    await decide(state);
    await act(state, recordingPorts());
    const ports = recordingPorts();
    await publish(state, ports);
    expect(callLog(ports.calls)).toEqual([
      'github.writeCheck #1',
      'github.setLabel #1',
      'github.writeComment #1 done',
      'lifecycle.recordOutcome #1',
    ]);
    expect(ports.calls[2]?.args[2]).toContain('final-job:11');
    expect(ports.calls[3]?.args[2]).toMatchObject({ kind: 'failed', jobId: '11' });
  });

  it('an experiment whose cluster was unreachable: a notice on its requested candidates’ comments, their check and label kept', async () => {
    const a = requestedCandidate('a', 1);
    const state = readState([{ exp: experimentOf([a]) }]);
    const e = state.experiments[0];
    if (!e) throw new Error('no experiment');
    e.failed = { stage: 'read', message: 'Slurm: connection refused', clusterUnreachable: true };
    const ports = recordingPorts({ github: { readComment: async () => '### ⏳ `a`: measuring\n' } });
    await publish(state, ports);
    expect(callLog(ports.calls)).toEqual(['github.readComment #1 a', 'github.writeComment #1 a']);
    expect(ports.calls[1]?.args[2]).toMatch(
      /^> ⚠️ Cluster unreachable since \S+ \(Slurm: connection refused\): nothing is judged until it is back/,
    );
  });
});
