// The campaign bench's rounds with their reference beside the candidates (issue 43): the reference
// lives as long as the round's decisions need it, and a rerun's incident is its own.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decideBeside } from '../../../bench/campaign/decide.js';
import { hash32, INCIDENT_RATE, incidentOf, World } from '../../../bench/campaign/sim.js';
import { build } from '../../../bench/campaign/space.js';
import { DEFAULT_POLICY } from '../../../src/campaign/rounds.js';
import { parseProfile } from '../../../src/sim/profile.js';
import { preset } from '../suggest/helpers.js';

const base = preset('8gpu_64rollouts');
const file = new URL('../../../bench/profiles/twin-runtime-bound.yaml', import.meta.url);
const runtimeBound = parseProfile(readFileSync(file, 'utf8'), file.pathname);
const at = (total: number, workers: number, driver = 8) =>
  build(base, { renderer: 0, driver, physics: 4, total, workers });

describe('the reference beside a round (issue 43)', () => {
  it('keeps running while the leader points at a gain after the others were pruned at run-minute 15', () => {
    // a runtime-bound twin: the leader (more workers and rollouts in flight) is 20% faster, the
    // others are pruned at run-minute 15; Dunnett's √K share stopped the reference at 45 while the
    // leader was still open, and the leader was then read against a reference past its age
    const world = new World(runtimeBound, 10);
    const runs = [at(96, 16), at(64, 12, 10), at(64, 8, 10)].map((t) => world.run(t));
    const { decided, reference } = decideBeside(world, runs, world.run(at(64, 8), 101), DEFAULT_POLICY, 5);
    const [leader, ...others] = decided;
    for (const o of others) expect(o.stoppedAt).toBeLessThanOrEqual(15);
    // the leader is the provisional winner from its first looks and carries on past the pruned ones
    expect(leader!.stoppedAt).toBeGreaterThan(15);
    expect(reference.stoppedAt).toBeGreaterThanOrEqual(leader!.stoppedAt);
    expect(leader!.outcome).toBe('better');
  }, 180_000);
});

describe("a job's incident (issue 43: the bench)", () => {
  const keys = [...Array(4000).keys()].map((i) => hash32(`topology-${i}`).toString(16));
  const kind = (x: ReturnType<typeof incidentOf>) =>
    x.crashAtMinutes !== undefined ? 'crash' : x.driftPerHour ? 'drift' : 'none';
  it("is drawn independently for a rerun and for each round's reference job", () => {
    let incidents = 0;
    let referenceIncidents = 0;
    const same = { rerun: 0, reference: 0 };
    for (const key of keys) {
      const first = incidentOf(100, key);
      if (first.crashAtMinutes === undefined && first.driftPerHour === undefined) continue;
      incidents++;
      if (kind(incidentOf(100, `${key}#1`)) === kind(first)) same.rerun++;
    }
    for (const key of keys) {
      const round1 = kind(incidentOf(100, `${key}#101`));
      if (round1 === 'none') continue;
      referenceIncidents++;
      if (kind(incidentOf(100, `${key}#102`)) === round1) same.reference++;
    }
    // one in ten jobs has an incident; a rerun repeats its kind one time in twenty (FNV alone: 1 in 5)
    expect(incidents / keys.length).toBeGreaterThan(0.08);
    expect(incidents / keys.length).toBeLessThan(0.12);
    expect(same.rerun / incidents).toBeLessThan(2 * INCIDENT_RATE);
    expect(same.reference / referenceIncidents).toBeLessThan(2 * INCIDENT_RATE);
  });

  it("a rerun has its own noise and incident, the topology's truth", () => {
    const world = new World(runtimeBound, 100);
    const a = world.run(at(96, 16));
    const b = world.run(at(96, 16), 1);
    expect(b.id).not.toBe(a.id);
    expect(b.truth).toEqual(a.truth);
    expect(world.spec(b).seed).not.toBe(world.spec(a).seed);
  });
});
