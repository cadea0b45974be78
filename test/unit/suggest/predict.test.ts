// Proposals that predict their gain: the twin's model calibrated on a run's metrics (never the
// profile), anchored on the measured parent, with an interval; suggest ranks by predicted gain per
// GPU-hour and drops what cannot reach min_improvement.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { stableMetrics } from '../../../bench/campaign/observation.js';
import { steadyState } from '../../../src/sim/model.js';
import { loadProfile } from '../../../src/sim/profile.js';
import { createRng } from '../../../src/sim/rng.js';
import { fitMemoryModel } from '../../../src/suggest/memory-model.js';
import { retarget } from '../../../src/suggest/moves.js';
import { calibrate, measurementOf, predictSeconds } from '../../../src/suggest/predict.js';
import { limitView, suggest } from '../../../src/suggest/suggest.js';
import { activeServices, clone } from '../../../src/suggest/topology-ops.js';
import type { TriedCandidate } from '../../../src/suggest/types.js';
import { checkCandidate } from '../../../src/topology/files.js';
import type { Topology } from '../../../src/types/generated/topology.js';
import type { TwinProfile } from '../../../src/types/generated/twin-profile.js';
import { candidateFileText } from '../../../src/usecases/suggest.js';
import { input, observe, preset } from './helpers.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const cluster = { gpusPerNode: 8, gpuMemoryGiB: 80, cpusPerNode: 64 };
const base = preset('8gpu_64rollouts');

/** A run of the twin as the monitor records it: its metrics, and its value with a ±1.5% interval. */
function measured(
  name: string,
  t: Topology,
  profile: TwinProfile,
  seed: number,
  parent: string | null = null,
): TriedCandidate {
  const ss = steadyState(t, profile);
  const rng = createRng(seed);
  const v = ss.secondsPerRollout * (1 + 0.005 * rng.normal());
  return {
    name,
    parent,
    topology: t,
    status: 'accepted',
    observation: {
      verdict: {
        state: 'stabilising',
        projected_full_run: { value: v, low: v * 0.985, high: v * 1.015 },
        evidence: [],
      },
      stable_metrics: stableMetrics(t, ss, rng),
    },
  };
}

function variant(change: (t: Topology) => void): Topology {
  const t = clone(base);
  change(t);
  return t;
}

describe('predict: the twin model calibrated on metrics', () => {
  const profile = loadProfile('twin-renderer-bound', root);
  const baseline = measured('baseline', base, profile, 1);

  it('reads a run from its metrics only, and skips failed runs', () => {
    const m = measurementOf(baseline)!;
    expect(m.seconds).toBeGreaterThan(0);
    expect(Object.keys(m.queues).sort()).toEqual(['controller', 'driver', 'physics', 'renderer']);
    expect(m.gpuUtil.size).toBe(8);
    expect(m.idle).toBeGreaterThan(0);
    expect(measurementOf({ ...baseline, status: 'failed' })).toBeUndefined();
  });

  it('predicts seconds per rollout of changed topologies from the baseline alone, the truth inside the interval', () => {
    const cal = calibrate([baseline], cluster)!;
    expect(cal.runs).toEqual(['baseline']);
    expect(cal.misfit).toBeLessThan(2);
    const parent = {
      name: 'baseline',
      topology: base,
      seconds: baseline.observation!.verdict!.projected_full_run!.value,
    };
    const cases = [
      variant((t) => {
        t.services!.renderer!.gpus = [0, 1, 2, 3, 4, 5];
        retarget(t, 'renderer', 64);
      }),
      variant((t) => {
        for (const s of activeServices(t)) retarget(t, s, 96);
        t.runtime!.nr_workers = 16;
      }),
      variant((t) => {
        t.services!.driver!.replicas_per_container = 4;
        retarget(t, 'driver', 64);
      }),
    ];
    for (const t of cases) {
      const p = predictSeconds(cal, t, parent)!;
      const truth = steadyState(t, profile).secondsPerRollout;
      expect(Math.abs(p.seconds / truth - 1)).toBeLessThan(0.03);
      expect(p.low).toBeLessThanOrEqual(truth);
      expect(p.high).toBeGreaterThanOrEqual(truth);
      expect(p.gain).toBeCloseTo(1 - p.seconds / parent.seconds, 6);
    }
  });

  it('keeps the calibration error of earlier predictions (RMS of log measured ÷ predicted)', () => {
    const other = measured(
      'more-workers',
      variant((t) => (t.runtime!.nr_workers = 16)),
      profile,
      2,
      'baseline',
    );
    const measuredValue = other.observation!.verdict!.projected_full_run!.value;
    const cal = calibrate([baseline, other], cluster, {
      previous: [{ name: 'more-workers', predictedSeconds: measuredValue / 1.1 }],
    })!;
    expect(cal.runs).toEqual(['baseline', 'more-workers']);
    expect(cal.calibrationError).toBeCloseTo(Math.log(1.1), 6);
  });
});

describe('suggest with predictions', () => {
  const profile = loadProfile('twin-renderer-bound', root);
  const baseline = measured('baseline', base, profile, 1);

  it('predicts every proposal, ranks by predicted gain per GPU-hour and drops those below min_improvement', () => {
    const result = suggest(input([baseline], { cluster }));
    expect(result.calibration).toMatchObject({ runs: ['baseline'], ranked: true, level: 0.9 });
    expect(result.proposals.length).toBeGreaterThan(0);
    for (const p of result.proposals) {
      expect(p.prediction).toBeDefined();
      expect(p.prediction!.gainHigh).toBeGreaterThanOrEqual(0.02);
      expect(p.prediction!.parent).toBe('baseline');
      expect(p.candidate.prediction).toMatchObject({
        seconds_per_rollout: p.prediction!.seconds,
        parent: 'baseline',
        calibrated_on: ['baseline'],
      });
    }
    const best = Math.max(...result.proposals.map((p) => p.prediction!.gainPerGpuHour));
    expect(result.proposals[0]!.prediction!.gainPerGpuHour).toBe(best);
    // the candidate file carries the prediction and is still a valid candidate
    const first = result.proposals[0]!;
    const text = candidateFileText(first, base, base);
    expect(text).toMatch(/prediction:\n\s+seconds_per_rollout:/);
    expect(checkCandidate(text, `topologies/x/${first.candidate.name}.yaml`).issues).toEqual([]);
  });

  it('drops a move predicted below min_improvement even at the optimistic end of its interval', () => {
    const result = suggest(input([baseline], { cluster, minImprovement: 0.5 }));
    expect(result.proposals).toEqual([]);
    expect(result.rejected.some((r) => r.reason.startsWith('predicted below min_improvement 50%'))).toBe(
      true,
    );
    expect(result.stop).toMatchObject({ stop: true });
    expect(result.stop.reason).toMatch(/no move is predicted to gain min_improvement 50%/);
  });

  it('a model that cannot reproduce the readings ranks nothing: the tuning rules do, and nothing is dropped', () => {
    // hand-made readings no queueing network produces
    const messy = {
      name: 'baseline',
      topology: base,
      status: 'accepted' as const,
      observation: observe(base, {
        seconds: 2,
        queues: { driver: [20, 41], renderer: [0, 3], physics: [0, 2] },
      }),
    };
    const result = suggest(input([messy], { cluster }));
    expect(result.calibration?.ranked).toBe(false);
    expect(result.calibration?.misfit).toBeGreaterThan(4);
    expect(result.rejected.filter((r) => r.reason.startsWith('predicted below'))).toEqual([]);
    expect(result.proposals[0]?.kind).toBe('scale-bottleneck');
  });

  it('predict: false is the seed by hand: the rules alone, no prediction', () => {
    const result = suggest(input([baseline], { cluster, predict: false }));
    expect(result.calibration).toBeUndefined();
    expect(result.proposals.every((p) => p.prediction === undefined)).toBe(true);
  });

  it("proposes the calibrated model's own combination of rule-shaped changes, valid, within memory, truly faster", () => {
    const balanced = loadProfile('twin-balanced', root);
    const b = measured('baseline', base, balanced, 3);
    const result = suggest(input([b], { cluster }));
    const model = result.proposals.find((p) => p.kind === 'model-search');
    expect(model).toBeDefined();
    // several changes combined, each named in the change and the hypothesis
    expect(model!.change.split('; ').length).toBeGreaterThan(1);
    expect(model!.candidate.hypothesis).toMatch(
      /calibrated on 1 measured run\(s\) \(baseline\) predicts this combination fastest/,
    );
    for (const m of model!.predictedMemory) expect(m.fraction).toBeLessThanOrEqual(0.9);
    const truth = steadyState(model!.candidate.topology, balanced).secondsPerRollout;
    expect(truth).toBeLessThan(0.97 * steadyState(base, balanced).secondsPerRollout);
    expect(Math.abs(model!.prediction!.seconds / truth - 1)).toBeLessThan(0.03);
    // a rule's proposal fills the other slots: different explanations in one round
    expect(result.proposals.some((p) => p.kind !== 'model-search')).toBe(true);
  });

  it("the model's search keeps services it puts together for the first time under the 80% memory line", () => {
    const b = measured('baseline', base, loadProfile('twin-balanced', root), 3);
    const memory = fitMemoryModel([b]);
    expect(memory.measuredSets).toEqual(['driver+physics', 'renderer']);
    const t = variant((u) => {
      u.services!.physics!.gpus = [0, 4, 5, 6, 7];
      retarget(u, 'physics', 64);
    });
    const plain = limitView(t, memory, 80, base);
    const strict = limitView(t, memory, 80, base, true);
    const on = (v: typeof plain, gpu: number) => v.find((p) => p.gpu === gpu)!.gib;
    // GPU 0 now holds renderer and physics, measured together nowhere: an extrapolation
    expect(on(strict, 0)).toBeCloseTo((on(plain, 0) / 0.8) * 0.9, 6);
    // GPU 4 holds driver and physics, as measured: unchanged
    expect(on(strict, 4)).toBe(on(plain, 4));
  });
});
