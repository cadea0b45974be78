// The full `topo demo` (two rounds) on the local cluster, round 2 against a reference running beside
// it (issue 38 item 1): each round after the baseline runs one job of the current best beside its
// candidates, the monitor decides them against it at equal run age and stops it once no open decision
// needs it, the terminal and the record show it with its cost, no candidate of round 2 runs past 45
// run-minutes unless its reference runs beside it, and no decision contradicts the twin's
// steady-state truth (what `topo sim steady` prints) by more than its interval.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { recordProblems } from '../../../src/record/validate.js';
import { steadyState } from '../../../src/sim/model.js';
import { loadProfile } from '../../../src/sim/profile.js';
import { expandCandidate, expandPreset } from '../../../src/topology/expand.js';
import type { Experiment } from '../../../src/types/generated/experiment.js';
import type { ExperimentRecord, RecordRun } from '../../../src/types/generated/record.js';
import type { Topology } from '../../../src/types/generated/topology.js';
import { type CliProcessRun, spawnTopo } from '../../support/cli-process.js';
import { clusterCommand, repoRoot, requireCluster } from '../../support/cluster.js';

const SUBMITTED_REFERENCE =
  /^submitted the round's reference job, a run of the current best (\S+): Slurm job (\d+), run (\S+)$/gm;

/** Slurm's state of a job now ('' once the controller forgot it). */
const jobState = (id: string) =>
  clusterCommand(['squeue', '--noheader', '--jobs', id, '--format=%T']).trim().split('\n')[0] ?? '';

interface Sample {
  candidate: string;
  minutes: number;
  reference: string;
}

describe('topo demo (full): round 2 against a reference job running beside its candidates', () => {
  let out: string;
  let ran: CliProcessRun;
  let record: ExperimentRecord;
  let experiment: Experiment;
  /** Round 2's candidates' rows as the terminal printed them, with its reference job's Slurm state then. */
  const samples: Sample[] = [];

  beforeAll(async () => {
    requireCluster();
    out = mkdtempSync(join(tmpdir(), 'topo-demo-ref-'));
    let seen = 0;
    ran = await spawnTopo(['demo', '--out', out], (text) => {
      const round2 = [...text.matchAll(SUBMITTED_REFERENCE)][1];
      if (!round2) return;
      const after = text.slice((round2.index ?? 0) + round2[0].length);
      const rows = [
        ...after.matchAll(/^([a-z0-9-]+): (?:starting|warming|stabilising|stable), ([\d.]+) sim min/gm),
      ];
      if (rows.length === seen) return;
      seen = rows.length;
      const last = rows.at(-1) as RegExpMatchArray;
      samples.push({
        candidate: last[1] as string,
        minutes: Number(last[2]),
        reference: jobState(round2[2] as string),
      });
    });
    const id = readdirSync(join(out, 'topologies'))[0] as string;
    record = JSON.parse(readFileSync(join(out, 'experiments', `${id}.json`), 'utf8')) as ExperimentRecord;
    experiment = parse(readFileSync(join(out, 'topologies', id, 'experiment.yaml'), 'utf8')) as Experiment;
    // the full demo takes about 3.5 minutes on an idle 2-core machine; much longer on a loaded one
  }, 900_000);

  const round2 = () => record.reference_runs?.[1];
  const round2Candidates = () =>
    (round2()?.candidates ?? []).map((n) => record.runs.find((r) => r.name === n) as RecordRun);

  it('runs two rounds, each beside a job of the current best, and records each with its cost', () => {
    expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
    expect(recordProblems(record)).toEqual([]);
    const submitted = [...ran.stdout.matchAll(SUBMITTED_REFERENCE)];
    expect(submitted, ran.stdout).toHaveLength(2);
    expect(record.reference_runs?.map((r) => r.run_name)).toEqual(submitted.map((m) => m[3]));
    // round 1 beside the baseline, round 2 beside the best round 1 left
    expect(record.reference_runs?.[0]?.of).toBe('baseline');
    expect(round2()?.of).toBe(submitted[1]?.[1]);
    for (const r of record.reference_runs ?? []) {
      expect(r.gpu_minutes, r.run_name).toBeGreaterThan(0);
      expect(ran.stdout).toMatch(
        new RegExp(
          `^round \\d: reference job ${r.run_name} \\(.*\\): \\d+ run-minutes, ${r.gpu_minutes} GPU-minutes; `,
          'm',
        ),
      );
    }
    expect(ran.stdout).toMatch(
      /^round 2: \d+ GPU-minutes \(candidates \d+, reference job \d+\); run-minutes: /m,
    );
    expect(readFileSync(join(out, 'experiments', `${record.experiment_id}.md`), 'utf8')).toContain(
      '## Reference jobs',
    );
  });

  it('decides round 2’s candidates against the reference job while it runs, at equal run age', () => {
    expect(round2Candidates().length).toBeGreaterThan(0);
    const ref = round2();
    const againstReference = round2Candidates().filter(
      (c) =>
        c.monitor_decision?.reference.role === 'current best' &&
        c.monitor_decision.reference.name === ref?.of,
    );
    // each is decided against the reference beside it, or pruned by the round's leading candidate
    expect(againstReference.length).toBeGreaterThan(0);
    for (const c of round2Candidates()) {
      const comment = readFileSync(join(out, 'comments', `${c.name}.md`), 'utf8');
      expect(comment).toContain(`run \`${ref?.run_name}\` beside this candidate`);
      const named = c.monitor_decision?.reference;
      expect(
        (named?.role === 'current best' && named.name === ref?.of) || named?.role === 'leading candidate',
        JSON.stringify(named),
      ).toBe(true);
      // the terminal saw it run while the reference job ran on the cluster
      const beside = samples.filter((s) => s.candidate === c.name && s.reference === 'RUNNING');
      expect(beside.length, JSON.stringify(samples)).toBeGreaterThan(0);
    }
    for (const c of againstReference) expect(c.monitor_decision?.evidence.join(' ')).toMatch(/equal run age/);
  });

  it('no candidate of round 2 runs past 45 run-minutes unless its reference runs beside it', () => {
    const ref = round2();
    const refMinutes = ref?.verdict?.minutes_of_data ?? 0;
    for (const c of round2Candidates()) {
      const minutes = c.verdict?.minutes_of_data ?? 0;
      const decidedAt = c.monitor_decision?.decided_at_minutes ?? minutes;
      if (minutes > 45)
        expect(refMinutes, `${c.name} ran ${minutes} run-minutes`).toBeGreaterThanOrEqual(decidedAt);
      // decided, or closed at the horizon with its reference beside it the whole way: a near-tie to
      // min_improvement (the twin's model-2 is 2.6% faster against a 2% bar) cannot be settled sooner,
      // and the guard that holds it never turns its faster interval into `worse` (issue 43 item 2)
      const state = c.monitor_decision?.state;
      expect(state).not.toBe('measuring');
      if (minutes >= (experiment.max_decision_minutes ?? 120)) {
        expect(['faster-drift-not-ruled-out', 'not-better', 'equivalent'], c.name).toContain(state);
        expect(refMinutes, `${c.name}'s reference ran beside it to the horizon`).toBeGreaterThanOrEqual(
          decidedAt,
        );
      }
      if ((c.monitor_decision?.relative_change?.high ?? 0) < -(c.monitor_decision?.min_improvement ?? 0.02))
        expect(['worse', 'not-better'], c.name).not.toContain(state);
    }
  });

  it('no decision contradicts the twin’s steady-state truth by more than its interval', () => {
    const preset = parse(
      readFileSync(join(repoRoot, 'topologies/presets', `${experiment.base_topology}.yaml`), 'utf8'),
    ) as Topology;
    const base = expandPreset(preset, experiment);
    const profile = loadProfile(experiment.fixed_inputs.deploy, repoRoot);
    const truth = (r: RecordRun) =>
      steadyState(expandCandidate(base, r.topology?.block ?? {}), profile).secondsPerRollout;
    const decided = record.runs.filter((r) => r.monitor_decision?.relative_change && r.parent);
    expect(decided.length).toBeGreaterThanOrEqual(2);
    for (const r of decided) {
      const d = r.monitor_decision;
      // what it was decided against: the run the decision names (current best, baseline, leading candidate)
      const against = record.runs.find((x) => x.name === d?.reference.name);
      expect(against, JSON.stringify(d?.reference)).toBeDefined();
      const change = truth(r) / truth(against as RecordRun) - 1;
      const { low, high } = (d?.relative_change ?? { low: Number.NaN, high: Number.NaN }) as {
        low: number;
        high: number;
      };
      const where = `${r.name} ${d?.state} vs ${against?.name}: [${low}, ${high}], truth ${change.toFixed(4)}`;
      expect(change, where).toBeGreaterThanOrEqual(low - (high - low));
      expect(change, where).toBeLessThanOrEqual(high + (high - low));
    }
  });
});
