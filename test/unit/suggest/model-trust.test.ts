// Proposals and the stop rule trust a calibrated model only as far as it has earned (issue 43):
// dominated proposals dropped with the gain's uncertainty net of the parent's own error, and the stop
// when the model's best remaining move is predicted below min_improvement within its calibration.
import { describe, expect, it } from 'vitest';
import type { Move } from '../../../src/suggest/moves.js';
import type { Calibration } from '../../../src/suggest/predict.js';
import { calibratedStop, undominated } from '../../../src/suggest/suggest.js';
import type { ProposalPrediction } from '../../../src/suggest/types.js';

const prediction = (seconds: number, logSd: number, netLogSd: number): ProposalPrediction => ({
  seconds,
  low: seconds * Math.exp(-1.645 * logSd),
  high: seconds * Math.exp(1.645 * logSd),
  level: 0.9,
  gain: 1 - seconds / 1.56,
  gainLow: 0,
  gainHigh: 0,
  logSd,
  netLogSd,
  parent: 'baseline',
  parentSeconds: 1.56,
  expectedGpuHours: 5,
  gainPerGpuHour: 0.01,
  calibration: { runs: ['baseline'], misfit: 1, calibrationError: null },
});
const scored = (change: string, p?: ProposalPrediction) => ({
  move: { kind: 'raise-workers', change } as unknown as Move,
  ...(p ? { prediction: p } : {}),
});

describe('dominated proposals (issue 43)', () => {
  it('drops one the model expects to lose to the best by more than min_improvement, net of the parent’s error', () => {
    // a young parent (log s.e. 0.19) makes every interval wide; beside the parent that error cancels
    const best = scored('best', prediction(1.25, 0.2, 0.02));
    const close = scored('close', prediction(1.27, 0.2, 0.02));
    const far = scored('far', prediction(1.4, 0.2, 0.02));
    const rejected: { change: string; reason: string }[] = [];
    const kept = undominated([best, close, far, scored('rule')], 0.02, rejected);
    expect(kept.map((k) => k.move.change)).toEqual(['best', 'close', 'rule']);
    expect(rejected[0]).toMatchObject({ change: 'far', reason: expect.stringMatching(/^dominated/) });
    // with the parent's error counted in the difference (as before), nothing would be dropped
    const wide = [best, scored('far', prediction(1.4, 0.2, 0.2))];
    expect(undominated(wide, 0.02, [])).toHaveLength(2);
  });
});

describe('the model’s stop (issue 43)', () => {
  const calibration = (calibrationError: number | null) => ({ calibrationError }) as Calibration;
  const outlook = (gain: number) => ({ change: 'more workers', gain, gainLow: gain - 0.05, proposed: true });
  it('stops when the best remaining move is predicted below min_improvement within its calibration error', () => {
    expect(calibratedStop(outlook(0.005), calibration(0.01), 0.02)?.reason).toMatch(
      /best remaining move \(more workers\) is predicted 0.5% faster/,
    );
    // its calibration error makes room for a gain: go on
    expect(calibratedStop(outlook(0.015), calibration(0.01), 0.02)).toBeNull();
    // never checked against a measured run: it has earned nothing yet
    expect(calibratedStop(outlook(0), calibration(null), 0.02)).toBeNull();
    expect(calibratedStop(undefined, calibration(0.01), 0.02)).toBeNull();
  });
});
