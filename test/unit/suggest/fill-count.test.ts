// `topo suggest --count N` asked by a person (issue 41): the moves the calibrated model calls dominated
// fill the round up to N, each saying so; the autopilot's and the campaign's call keeps only the
// undominated. Before, a team that asked for two candidates after its baseline got one (driver-bound
// twin on 8gpu_12rollouts: the model's combination, the driver's scaling dropped as dominated).
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { stableMetrics } from '../../../bench/campaign/observation.js';
import { steadyState } from '../../../src/sim/model.js';
import { loadProfile } from '../../../src/sim/profile.js';
import { createRng } from '../../../src/sim/rng.js';
import { suggest } from '../../../src/suggest/suggest.js';
import type { TriedCandidate } from '../../../src/suggest/types.js';
import { input, preset } from './helpers.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const cluster = { gpusPerNode: 8, gpuMemoryGiB: 80, cpusPerNode: 64 };

describe('suggest fills the count a person asked for', () => {
  const base = preset('8gpu_12rollouts');
  const profile = loadProfile('twin-driver-bound', root);
  const ss = steadyState(base, profile);
  const rng = createRng(1);
  const v = ss.secondsPerRollout;
  const baseline: TriedCandidate = {
    name: 'baseline',
    parent: null,
    topology: base,
    status: 'accepted',
    observation: {
      verdict: {
        state: 'stable',
        projected_full_run: { value: v, low: v * 0.985, high: v * 1.015 },
        evidence: [],
      },
      stable_metrics: stableMetrics(base, ss, rng),
    },
  };

  it('without fillCount (the autopilot, the campaign) the dominated move is dropped: one proposal', () => {
    const r = suggest(input([baseline], { cluster, count: 2, maxParallel: 4 }));
    expect(r.proposals.map((p) => p.kind)).toEqual(['model-search']);
    expect(r.rejected.some((x) => x.reason.startsWith('dominated'))).toBe(true);
  });

  it('with fillCount the dominated move fills the second slot, saying why, and leaves the rejected list', () => {
    const r = suggest(input([baseline], { cluster, count: 2, maxParallel: 4 }), { fillCount: true });
    expect(r.proposals).toHaveLength(2);
    const [first, second] = r.proposals;
    expect(first?.kind).toBe('model-search');
    expect(second?.change).toMatch(/^driver: 4 → 5 containers/);
    expect(second?.candidate.hypothesis).toMatch(
      /Proposed because --count asked for more: the model calls it dominated: predicted [\d.]+% slower than the best predicted move/,
    );
    // still predicted to gain min_improvement over the parent: a move below it never fills a slot
    expect(second?.prediction?.gainHigh).toBeGreaterThanOrEqual(0.02);
    expect(r.rejected.some((x) => x.reason.startsWith('dominated'))).toBe(false);
    expect(r.rejected.some((x) => x.reason.startsWith('predicted below min_improvement'))).toBe(true);
    expect(r.rejected.some((x) => x.reason.startsWith('fails validation'))).toBe(true);
    // never more than asked
    expect(
      suggest(input([baseline], { cluster, count: 1, maxParallel: 4 }), { fillCount: true }).proposals,
    ).toHaveLength(1);
  });
});
