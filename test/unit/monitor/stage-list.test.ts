// The pass's stages are data: a stage placed after `decide` sees every decision and its effects
// reach `act` and `publish` without touching them; a quick pass runs the stages it needs on a state
// already read, and publishes nothing.
import { describe, expect, it } from 'vitest';
import {
  monitorPass,
  runStages,
  STAGES,
  type Stage,
  stagesNamed,
  withStage,
} from '../../../src/monitor/pass.js';
import { type CandidatePass, type ExperimentPass, policyStage, viewNow } from '../../../src/monitor/state.js';
import {
  callLog,
  experimentOf,
  readState,
  recordingPorts,
  requestedCandidate,
} from '../../support/monitor-state.js';

describe('the stage list', () => {
  it('is read → observe → decide → act → publish', () => {
    expect(STAGES.map((s) => s.name)).toEqual(['read', 'observe', 'decide', 'act', 'publish']);
  });

  it('takes a new stage after decide; it reads the decisions and what it changes reaches act', async () => {
    const seen: string[] = [];
    // a stage between decide and act returns the plan act carries out (it writes no other stage's section)
    const holdQueue: Stage = policyStage('hold-queue', (e, plan) => {
      seen.push(...e.candidates.map((p) => `${p.c.candidate}:${p.decided?.view?.state}`));
      return { ...plan, queue: { ...plan.queue, order: [] } }; // e.g. an autopilot pausing the experiment
    });
    const stages = withStage(STAGES, holdQueue, { after: 'decide' });
    expect(stages.map((s) => s.name)).toEqual(['read', 'observe', 'decide', 'hold-queue', 'act', 'publish']);
    const a = requestedCandidate('a', 1);
    const ports = recordingPorts({
      experiments: async () => [experimentOf([a])],
      submit: async () => ({ jobId: '9' }),
    });
    const report = await monitorPass(ports, { tickSeconds: 5, lagSeconds: 0 }, stages);
    expect(seen).toEqual(['a:queued']);
    expect(callLog(ports.calls)).not.toContain('submit a');
    expect(report.candidates.map((c) => [c.candidate, c.state, c.changed])).toEqual([['a', 'queued', true]]);
    expect(() => withStage(STAGES, holdQueue, { after: 'plan' })).toThrow(/no stage "plan"/);
  });

  it('a quick pass (observe → decide → act) on a state already read writes nothing to GitHub', async () => {
    const a = requestedCandidate('a', 1);
    const state = readState([{ exp: experimentOf([a]) }]);
    const ports = recordingPorts({ submit: async () => ({ jobId: '9' }) });
    await runStages(state, ports, stagesNamed('observe', 'decide', 'act'));
    expect(callLog(ports.calls)).toEqual(['github.readComment #1 a', 'submit a', 'lifecycle.recordRun #1']);
    const e = state.experiments[0] as ExperimentPass;
    expect(viewNow(e, e.candidates[0] as CandidatePass)?.state).toBe('submitted');
  });
});
