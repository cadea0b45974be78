// The autopilot's policy: its defaults, one run's expected cost, and the inconsistent policies
// validate refuses at their line (file:line:key), through the same use case the validate action runs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { policyOf, runCost } from '../../../src/autopilot/policy.js';
import { checkExperiment } from '../../../src/topology/files.js';
import type { Experiment } from '../../../src/types/generated/experiment.js';
import { fileSystemSource, validateFiles } from '../../../src/usecases/validate.js';
import { REPO } from '../topology/helpers.js';

const EXP = 'topologies/topology-opt-vavam-ord-20261202';
const FILE = `${EXP}/experiment.yaml`;
const base = readFileSync(join(REPO, FILE), 'utf8');

/** experiment.yaml with an autopilot block; returns the text and the line of each of its keys. */
function withPolicy(lines: string[]): { text: string; lineOf: (key: string) => number } {
  const text = `${base.trimEnd()}\nautopilot:\n${lines.map((l) => `  ${l}`).join('\n')}\n`;
  const all = text.split('\n');
  return {
    text,
    lineOf: (key) =>
      all.findIndex((l) => l.startsWith(`  ${key}:`) && all.indexOf('autopilot:') < all.indexOf(l)) + 1,
  };
}

async function validate(text: string) {
  const files = {
    async read(path: string) {
      return path === FILE ? text : fileSystemSource(REPO).read(path);
    },
    list: (dir: string) => fileSystemSource(REPO).list(dir),
  };
  const report = await validateFiles([FILE], { files, config: fileSystemSource(REPO) });
  const f = report.files[0];
  return { errors: f?.errors ?? [], warnings: f?.warnings ?? [] };
}

describe('autopilot policy', () => {
  it('fills the defaults: 6 rounds, parallel = max_parallel, stop after 2, submit auto, merge manual', () => {
    const { text } = withPolicy(['enabled: true', 'gpu_hours: 120']);
    const exp = checkExperiment(text, FILE).value as Experiment;
    expect(policyOf(exp)).toEqual({
      enabled: true,
      maxRounds: 6,
      gpuHours: 120,
      parallel: 3,
      stopAfter: 2,
      submit: 'auto',
      merge: 'manual',
      requiredChecks: [],
      minImprovement: 0.02,
    });
    expect(policyOf({ ...exp, autopilot: undefined })).toBeNull();
  });

  it('a run is expected to cost its GPUs over start-up + the decision horizon when stopped on its decision', () => {
    const exp = checkExperiment(base, FILE).value as Experiment;
    const cost = runCost(exp, { gpus_per_node: 8, slurm: {} } as never);
    expect(cost.gpus).toBe(8);
    expect(cost.hours).toBeLessThan(4);
    expect(cost.gpuHours).toBeCloseTo(cost.gpus * cost.hours, 9);
    const whole = runCost({ ...exp, stop_when_decided: false }, { gpus_per_node: 8, slurm: {} } as never);
    expect(whole.hours).toBeCloseTo((3 * 60 + 59) / 60, 6);
    expect(whole.basis).toContain('03:59:00');
  });

  it('accepts a consistent policy without a finding', async () => {
    const { text } = withPolicy([
      'enabled: true',
      'max_rounds: 6',
      'gpu_hours: 120',
      'parallel: 3',
      'stop_after: 2',
    ]);
    const { errors, warnings } = await validate(text);
    expect(errors).toEqual([]);
    expect(warnings.filter((w) => w.rule.startsWith('autopilot'))).toEqual([]);
  });

  it('refuses parallel above max_parallel at its line', async () => {
    const p = withPolicy(['enabled: true', 'gpu_hours: 120', 'parallel: 5']);
    const { errors } = await validate(p.text);
    expect(errors).toEqual([
      expect.objectContaining({
        rule: 'autopilot-parallel',
        file: FILE,
        line: p.lineOf('parallel'),
        keyPath: 'autopilot.parallel',
      }),
    ]);
    expect(errors[0]?.message).toMatch(/above max_parallel 3.*use at most 3/);
  });

  it("refuses a budget below one run's expected cost, naming the cost and what would fit", async () => {
    const p = withPolicy(['enabled: true', 'gpu_hours: 2']);
    const { errors } = await validate(p.text);
    expect(errors).toEqual([
      expect.objectContaining({
        rule: 'autopilot-budget',
        line: p.lineOf('gpu_hours'),
        keyPath: 'autopilot.gpu_hours',
      }),
    ]);
    expect(errors[0]?.message).toMatch(/below one run's expected cost, [\d.]+ GPU-hours \(8 GPUs/);
  });

  it('refuses merge: auto without the required checks written down, at merge or at required_checks', async () => {
    const bare = withPolicy(['enabled: true', 'gpu_hours: 120', 'merge: auto']);
    const a = await validate(bare.text);
    expect(a.errors).toEqual([
      expect.objectContaining({
        rule: 'autopilot-merge',
        line: bare.lineOf('merge'),
        keyPath: 'autopilot.merge',
      }),
    ]);
    const without = withPolicy([
      'enabled: true',
      'gpu_hours: 120',
      'merge: auto',
      'required_checks: [topo/validate]',
    ]);
    const b = await validate(without.text);
    expect(b.errors).toEqual([
      expect.objectContaining({ rule: 'autopilot-merge', line: without.lineOf('required_checks') }),
    ]);
    const listed = withPolicy([
      'enabled: true',
      'gpu_hours: 120',
      'merge: auto',
      'required_checks: [topo/validate, topo/monitor]',
    ]);
    expect((await validate(listed.text)).errors).toEqual([]);
  });

  it('warns when the stop rule can never fire before max_rounds', async () => {
    const p = withPolicy(['enabled: true', 'gpu_hours: 120', 'max_rounds: 2', 'stop_after: 3']);
    const { errors, warnings } = await validate(p.text);
    expect(errors).toEqual([]);
    expect(warnings).toContainEqual(
      expect.objectContaining({ rule: 'autopilot-stop-rule', line: p.lineOf('stop_after') }),
    );
  });

  it('the schema refuses unknown keys and a missing budget at their line', async () => {
    const typo = withPolicy(['enabled: true', 'gpu_hours: 120', 'paralel: 3']);
    const { errors } = await validate(typo.text);
    expect(errors[0]).toMatchObject({ line: typo.lineOf('paralel') });
    const missing = withPolicy(['enabled: true']);
    const m = await validate(missing.text);
    expect(m.errors.map((e) => e.message).join('\n')).toMatch(/gpu_hours/);
  });
});
