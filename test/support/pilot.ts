// The autopilot's runs, policy and plan input as the unit tests build them in memory.
import type { PilotInput, PilotRun } from '../../src/autopilot/core.js';
import type { AutopilotPolicy } from '../../src/autopilot/policy.js';

/** A person's merged baseline, decided and ended: 100 s per rollout for 10 GPU-hours. */
export const BASELINE_RUN: PilotRun = {
  name: 'baseline',
  round: 0,
  origin: 'person',
  pull: 'merged',
  request: 'ended',
  outcome: 'equivalent',
  seconds: 100,
  gpuHours: 10,
};

/** The policy's defaults (6 rounds, stop after 2, submit auto, merge manual) at 120 GPU-hours, 3 in parallel. */
export const POLICY: AutopilotPolicy = {
  enabled: true,
  maxRounds: 6,
  gpuHours: 120,
  parallel: 3,
  stopAfter: 2,
  submit: 'auto',
  merge: 'manual',
  requiredChecks: [],
};

/** A bot run of `round` on pull request `pr`, ended `worse` at 110 s per rollout for 8 GPU-hours unless `more` says otherwise. */
export function botRun(name: string, round: number, pr: number, more: Partial<PilotRun> = {}): PilotRun {
  return {
    name,
    round,
    origin: 'bot',
    pr,
    pull: 'open',
    request: 'ended',
    outcome: 'worse',
    seconds: 110,
    gpuHours: 8,
    ...more,
  };
}

/** planStep's input over `runs`: POLICY, no control set, 10 GPU-hours a run. */
export function pilotInput(
  experimentId: string,
  runs: PilotRun[],
  more: Partial<PilotInput> = {},
): PilotInput {
  return {
    experimentId,
    policy: POLICY,
    runs,
    controls: { paused: false, stopLive: false },
    runGpuHours: 10,
    ...more,
  };
}
