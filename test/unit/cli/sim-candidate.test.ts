// `topo sim steady --topology <candidate.yaml>`: a candidate's topology block changes its experiment's
// base preset, so the twin runs the topology submission would run (issue 41: the block alone was read
// as a whole topology), and a candidate that cannot be expanded is refused saying what to pass.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runTopo } from '../../support/cli.js';
import { repoRoot } from '../../support/run-action.js';

const experiment = 'topology-opt-vavam-ord-20261202';
const steady = async (topology: string, cwd = repoRoot) => {
  const r = await runTopo(['sim', 'steady', '--topology', topology], cwd);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
};

describe('topo sim steady --topology <candidate.yaml>', () => {
  it('runs a parent-relative candidate as submission expands it: the base preset with its change', async () => {
    const dir = `topologies/${experiment}`;
    const baseline = await steady(`${dir}/baseline.yaml`);
    const candidate = await steady(`${dir}/more-workers.yaml`);
    // the base preset's services (the block holds only runtime.nr_workers: 16, which the old reading
    // refused as 'no services'), with twice the runtime workers: their event loops idle more
    expect(candidate.capacities).toEqual(baseline.capacities);
    expect(candidate.in_flight).toBe(baseline.in_flight);
    expect(candidate.idle_fraction).toBeGreaterThan(baseline.idle_fraction);
  });

  it('refuses a candidate with no experiment beside it, naming what to pass', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-sim-'));
    try {
      cpSync(join(repoRoot, 'topologies', experiment, 'more-workers.yaml'), join(dir, 'more-workers.yaml'));
      const r = await runTopo(['sim', 'steady', '--topology', 'more-workers.yaml'], dir);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(
        /--topology more-workers\.yaml is a candidate: its topology block changes its experiment's base preset, and it cannot be expanded \(.+\); fix what `topo validate more-workers\.yaml` reports, or pass a whole topology \(a preset name, or a preset file\)/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
