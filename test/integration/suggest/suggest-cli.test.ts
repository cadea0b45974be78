// `topo suggest` end to end on a repository tree: the record's runs were measured by the twin's
// model, the proposals are written as candidate files and must pass `topo validate`.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { expandCandidate, topologyHash } from '../../../src/topology/expand.js';
import type { Candidate } from '../../../src/types/generated/candidate.js';
import { runTopo } from '../../support/cli.js';
import { cliSchemaErrors } from '../../support/cli-schemas.js';
import { createExperimentRepo, EXPERIMENT_ID } from './experiment-repo.js';

const topo = runTopo;

function candidateFiles(dir: string): string[] {
  return readdirSync(join(dir, 'topologies', EXPERIMENT_ID))
    .filter((f) => f.endsWith('.yaml') && f !== 'experiment.yaml')
    .sort();
}

describe('topo suggest', () => {
  it('writes up to max_parallel valid candidates that cite the evidence and predict their gain', async () => {
    const repo = createExperimentRepo('twin-renderer-bound');
    repo.addRun('baseline', null, {}, 'accepted');
    const { code, stdout, stderr } = await topo(['suggest', EXPERIMENT_ID, '--json'], repo.dir);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(cliSchemaErrors('suggest', out)).toEqual([]);
    expect(out.parent).toBe('baseline');
    expect(out.stop.stop).toBe(false);
    // up to max_parallel: a move predicted below min_improvement even at its optimistic end is dropped
    expect(out.proposals.length).toBeGreaterThanOrEqual(1);
    expect(out.proposals.length).toBeLessThanOrEqual(3);
    if (out.proposals.length < 3)
      expect(
        out.not_proposed.some((r: { reason: string }) =>
          r.reason.startsWith('predicted below min_improvement'),
        ),
      ).toBe(true);
    expect(out.calibration).toMatchObject({ runs: ['baseline'], level: 0.9 });
    expect(out.memory_model.source).toBe('fitted');
    // The twin's renderer-bound profile: the analysis names the renderer, the first proposal scales it.
    expect(out.proposals[0].service).toBe('renderer');
    expect(out.proposals[0].hypothesis).toMatch(/renderer queue-depth max [\d.]+ vs \w+ [\d.]+/);
    expect(out.proposals[0].hypothesis).toContain('renderer is the bottleneck');
    for (const p of out.proposals) {
      expect(existsSync(join(repo.dir, p.path))).toBe(true);
      for (const m of p.predicted_memory) expect(m.fraction).toBeLessThanOrEqual(0.9);
      const candidate = parse(readFileSync(join(repo.dir, p.path), 'utf8')) as Candidate;
      expect(candidate.parent).toBe('baseline');
      expect(candidate.hypothesis).toBe(p.hypothesis);
      expect(candidate.expected_effect).toBe(p.expected_effect);
      // the prediction travels with the candidate file into the record
      expect(p.prediction.gain_high).toBeGreaterThanOrEqual(0.02);
      expect(candidate.prediction?.seconds_per_rollout).toBe(p.prediction.seconds_per_rollout);
    }
    // Validation uses the learned model by itself once the record has measurements: clusters.yaml's
    // pessimistic estimate alone refuses some of these proposals.
    const files = out.proposals.map((p: { path: string }) => p.path);
    const validate = await topo(['validate', ...files], repo.dir);
    expect(validate.stdout).toMatch(/0 error\(s\), 0 warning\(s\)/);
    expect(validate.code).toBe(0);
  });

  it('refuses the driver 64 → 96 its validator warns about (capacity-imbalance)', async () => {
    const repo = createExperimentRepo('twin-driver-bound');
    repo.addRun('baseline', null, {}, 'accepted');
    const out = JSON.parse((await topo(['suggest', EXPERIMENT_ID, '--json'], repo.dir)).stdout);
    expect(out.proposals.map((p: { change: string }) => p.change).join('\n')).not.toContain('64 → 96');
    expect(out.not_proposed).toContainEqual({
      change: 'driver: replicas_per_container 8 → 12; capacity 64 → 96',
      reason: 'fails validation: capacities differ by 50% (limit 25%)',
    });
  });

  it.each(['twin-renderer-bound', 'twin-balanced'])(
    'proposes nothing topo validate warns about, and no no-op change (%s)',
    async (profile) => {
      const repo = createExperimentRepo(profile);
      repo.addRun('baseline', null, {}, 'accepted');
      const { code, stdout } = await topo(['suggest', EXPERIMENT_ID, '--json'], repo.dir);
      expect(code).toBe(0);
      const out = JSON.parse(stdout);
      expect(out.proposals.length).toBeGreaterThan(0);
      for (const p of out.proposals) expect(p.change).not.toMatch(/(\b\d+) → \1\b/);
      const validate = await topo(
        ['validate', ...out.proposals.map((p: { path: string }) => p.path)],
        repo.dir,
      );
      expect(validate.stdout).toMatch(/ 0 error\(s\), 0 warning\(s\)/);
    },
  );

  it('never proposes a topology that is already a candidate', async () => {
    const repo = createExperimentRepo('twin-renderer-bound');
    repo.addRun('baseline', null, {}, 'accepted');
    const first = JSON.parse((await topo(['suggest', EXPERIMENT_ID, '--json'], repo.dir)).stdout);
    const second = JSON.parse(
      (await topo(['suggest', EXPERIMENT_ID, '--json', '--count', '2'], repo.dir)).stdout,
    );
    const firstHashes = new Set(first.proposals.map((p: { hash: string }) => p.hash));
    expect(second.proposals.length).toBeLessThanOrEqual(2);
    for (const p of second.proposals) expect(firstHashes.has(p.hash)).toBe(false);
    // Every candidate file on disk is a distinct topology.
    const hashes = candidateFiles(repo.dir).map((f) => {
      const c = parse(readFileSync(join(repo.dir, 'topologies', EXPERIMENT_ID, f), 'utf8')) as Candidate;
      return topologyHash(expandCandidate(repo.base, c.topology));
    });
    expect(new Set(hashes).size).toBe(hashes.length);
  });

  it('says stop, with the reason, after two rounds without a significant improvement', async () => {
    const repo = createExperimentRepo('twin-balanced');
    const baseline = repo.addRun('baseline', null, {}, 'accepted')!;
    // Six children that change nothing measurable: more runtime workers (the runtime is not the limit).
    for (let i = 0; i < 6; i++) {
      repo.addRun(`workers-${9 + i}`, 'baseline', { runtime: { nr_workers: 9 + i } }, 'rejected', {
        name: 'baseline',
        seconds: baseline,
      });
    }
    const before = candidateFiles(repo.dir);
    const { code, stdout } = await topo(['suggest', EXPERIMENT_ID], repo.dir);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^STOP: no significant improvement over the last 2 rounds/m);
    expect(candidateFiles(repo.dir)).toEqual(before);
  });

  it('refuses an unknown experiment with a clear message', async () => {
    const repo = createExperimentRepo();
    const { code, stderr } = await topo(['suggest', 'topology-opt-nope-local-20261202'], repo.dir);
    expect(code).toBe(2);
    expect(stderr).toContain('topologies/topology-opt-nope-local-20261202/experiment.yaml not found');
    const usage = await topo(['suggest', EXPERIMENT_ID, '--count', 'x'], repo.dir);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--count must be a whole number');
  });

  it('asks to wait while the baseline has no measurement', async () => {
    const repo = createExperimentRepo();
    const { code, stdout } = await topo(['suggest', EXPERIMENT_ID], repo.dir);
    expect(code).toBe(0);
    expect(stdout).toMatch(/continue: no candidate yet: run the baseline first/);
  });
});
