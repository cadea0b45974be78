// `topo analyze --against` with a reference recorded to its end (issue 31): a reference that slows
// 6%/h ran its whole 234 minutes hours ago; a candidate equal to it (the same run model, another
// seed) is read at run-minute 25. Both are backfilled into a real Prometheus (promtool, then a
// temporary Prometheus on a free port). The candidate is compared with the reference at equal run age
// (the start cohorts both runs share), never with its full-run value: it must not be called `better`.
// The same reference read back from an experiment record (the verdict the record keeps) decides the
// same way.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backfill, prometheusOn } from '../../../bench/prometheus-blocks.js';
import { type Shape, writeFamily } from '../../../bench/trace-family.js';
import { decideCandidate, decisionOptions } from '../../../src/analysis/decision.js';
import { referenceOf } from '../../../src/record/model.js';
import type { CandidateObservation } from '../../../src/types/generated/metrics.js';
import { runTopo } from '../../support/cli.js';

const SLOWING: Shape = {
  name: 'slowing',
  inFlight: 64,
  workers: 4,
  steadySeconds: 3,
  congestion: 0.2,
  congestionMinutes: 5,
  jitter: 0.15,
  driftPerHour: 0.06,
};

describe('topo analyze --against a reference recorded to its end', () => {
  let prom: ChildProcess | undefined;
  afterAll(() => {
    if (prom?.pid) process.kill(prom.pid, 'SIGTERM');
  });

  it('does not call better a candidate equal to a slowing reference', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topo-equal-age-'));
    const data = join(dir, 'data');
    const now = Math.floor(Date.now() / 1000);
    const candStart = now - 30 * 60;
    const refStart = candStart - 5 * 3600;
    const runs = [
      { runName: 'topo-eqage-ref', seed: 3, start: refStart, end: 234 },
      { runName: 'topo-eqage-cand', seed: 1003, start: candStart, end: 26 },
    ];
    for (const r of runs) {
      const file = join(dir, `${r.runName}.om`);
      const spec = {
        shape: SLOWING,
        seed: r.seed,
        factor: 1,
        runName: r.runName,
        endMinutes: r.end,
        scrapeSeconds: 15,
      };
      await writeFamily([spec], file, r.start);
      backfill(file, data);
    }
    // a scraped run's series end with staleness markers when its target goes; backfilled ones carry
    // none, so a short lookback stands in for them (else the ended reference looks stalled)
    const started = await prometheusOn(dir, data, ['--query.lookback-delta=30s']);
    prom = started.prom;
    const url = started.url;
    const at = String(candStart + 25 * 60);
    const common = ['--json', '--prometheus', url, '--time-scale', '1', '--step', '15', '--in-flight', '64'];
    const res = await runTopo(
      ['analyze', 'topo-eqage-cand', '--against', 'topo-eqage-ref', '--at', at, ...common],
      dir,
    );
    expect(res.stderr).not.toMatch(/error/i);
    const out = JSON.parse(res.stdout) as { observation: CandidateObservation };
    const decision = out.observation.decision;
    expect(decision?.state).not.toBe('better');
    // compared at equal run age over the start cohorts both runs share (the first 25 minutes of each),
    // never with the reference's full-run value (about 7% slower than its first 25 minutes)
    expect(decision?.evidence.join(' ')).toMatch(/at equal run age: \d+ start cohorts both runs share/);
    expect(decision?.contrast?.mean_age_minutes).toBeLessThan(25);
    expect(Math.abs(decision?.relative_change?.value ?? 1)).toBeLessThan(0.03);

    // the record keeps the reference's verdict with its cohorts: the monitor's path decides alike
    const ref = await runTopo(
      ['analyze', 'topo-eqage-ref', '--at', String(refStart + 234 * 60), ...common],
      dir,
    );
    const refObs = (JSON.parse(ref.stdout) as { observation: CandidateObservation }).observation;
    expect(refObs.verdict.decision_estimate?.trajectory?.values.length).toBeGreaterThan(200);
    expect(refObs.verdict.cohorts?.log_seconds.length).toBeGreaterThan(200);
    const run = {
      name: 'baseline',
      status: 'accepted' as const,
      decision: { outcome: 'accept' as const, reason: null, next: null },
      verdict: refObs.verdict,
    };
    const recorded = referenceOf(run);
    expect(recorded?.verdict).toBeDefined();
    const fromRecord = decideCandidate(
      out.observation.verdict,
      { name: 'baseline', verdict: recorded?.verdict as NonNullable<typeof recorded>['verdict'] & object },
      decisionOptions({}),
    );
    expect(fromRecord.state).not.toBe('better');
    expect(fromRecord.relative_change?.value).toBeCloseTo(decision?.relative_change?.value ?? Number.NaN, 3);
  }, 180_000);
});
