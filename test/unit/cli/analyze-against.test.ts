// `topo analyze --against`: its mistakes are usage errors (exit 2) that name the option, found
// before any service is asked (no Prometheus here).
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { runTopo } from '../../support/cli.js';

const base = ['--prometheus', 'http://127.0.0.1:1'];

describe('topo analyze --against', () => {
  it('refuses the run itself, a malformed name and a min_improvement outside (0, 1)', async () => {
    const self = await runTopo(['analyze', 'run-a', '--against', 'run-a', ...base], process.cwd());
    expect(self.code).toBe(2);
    expect(self.stderr).toMatch(/--against names the run itself/);
    const bad = await runTopo(['analyze', 'run-a', '--against', 'a\u0001b', ...base], process.cwd());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--against: run name .* is not valid/);
    for (const value of ['1.5', '1']) {
      const r = await runTopo(
        ['analyze', 'run-a', '--against', 'run-b', '--min-improvement', value, ...base],
        process.cwd(),
      );
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--min-improvement must be a fraction between 0 and 1 \(0\.02 is 2%\)/);
    }
  });
  it('with a valid reference it goes on to ask Prometheus (exit 3 when it is unreachable)', async () => {
    const r = await runTopo(['analyze', 'run-a', '--against', 'run-b', ...base], process.cwd());
    expect(r.code).toBe(3);
    expect(r.stderr).not.toMatch(/note:/);
  });
  it("says when a topo experiment's run is judged without its experiment (not in this checkout)", async () => {
    // issue 39: from another directory the same pair was judged with the default settings, unsaid
    const id = 'topology-opt-it-gone-20260101';
    const run = (c: string) => `topo-${id}-${c}-0123abcd-89abcdef`;
    const r = await runTopo(['analyze', run('model'), '--against', run('baseline'), ...base], tmpdir());
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(
      `note: experiment ${id} is not in this checkout (topologies/${id}/experiment.yaml): ${run('model')} is judged from its samples alone, with the default settings (min_improvement 2%, the 120-minute decision horizon`,
    );
  });
});
