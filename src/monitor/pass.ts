// One monitor pass: the stages, as data, run in order over one PassState, like a controller's
// Reconcile (read the desired and the actual state, act, and let the schedule requeue). A new
// capability is a new stage placed in the list, not a branch in another stage:
// `withStage(STAGES, { name: 'autopilot', run: autopilot }, { after: 'decide' })`. A quick pass
// reuses the stages it needs on a state already read.
import { act } from './act.js';
import { decide } from './decide.js';
import { observe } from './observe.js';
import type { MonitorPorts } from './ports.js';
import { publish } from './publish.js';
import { read } from './read.js';
import { type PassReport, passReport } from './report.js';
import { newPassState, type PassOptions, type PassState, type Stage } from './state.js';

export type { Stage };

/** read → observe → decide → act → publish. */
export const STAGES: readonly Stage[] = [
  { name: 'read', run: read },
  { name: 'observe', run: observe },
  { name: 'decide', run: decide },
  { name: 'act', run: act },
  { name: 'publish', run: publish },
];

/** These stages of STAGES, in the order given (a quick pass: `stagesNamed('observe', 'decide', 'act')`). */
export function stagesNamed(...names: string[]): Stage[] {
  return names.map((name) => {
    const stage = STAGES.find((s) => s.name === name);
    if (!stage) throw new Error(`no stage "${name}" (have ${STAGES.map((s) => s.name).join(', ')})`);
    return stage;
  });
}

/** The stages with `stage` placed right after the one named `after`. */
export function withStage(stages: readonly Stage[], stage: Stage, { after }: { after: string }): Stage[] {
  const i = stages.findIndex((s) => s.name === after);
  if (i < 0)
    throw new Error(
      `no stage "${after}" to place "${stage.name}" after (have ${stages.map((s) => s.name).join(', ')})`,
    );
  return [...stages.slice(0, i + 1), stage, ...stages.slice(i + 1)];
}

/** Runs the stages in order over `state`. */
export async function runStages(
  state: PassState,
  ports: MonitorPorts,
  stages: readonly Stage[] = STAGES,
): Promise<PassState> {
  for (const stage of stages) await stage.run(state, ports);
  return state;
}

/** One pass over every experiment: its report (each judged candidate, and the errors). */
export async function monitorPass(
  ports: MonitorPorts,
  options: PassOptions = {},
  stages: readonly Stage[] = STAGES,
): Promise<PassReport> {
  return passReport(await runStages(newPassState(options), ports, stages));
}
