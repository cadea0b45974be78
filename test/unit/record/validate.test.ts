import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apply } from '../../../src/record/apply.js';
import { createRecord } from '../../../src/record/model.js';
import {
  observationProblems,
  parseRecord,
  RecordError,
  serializeRecord,
} from '../../../src/record/validate.js';
import { EXPERIMENT, OUTCOMES } from '../../fixtures/record/scenario.js';
import { FIXTURES } from './golden.js';

describe('record schema', () => {
  it('round-trips: serialise -> parse -> serialise is stable, for a fresh and a full record', () => {
    for (const record of [createRecord(EXPERIMENT), OUTCOMES.reduce(apply, createRecord(EXPERIMENT))]) {
      const text = serializeRecord(record);
      const parsed = parseRecord(text, 'experiments/x.json');
      expect(parsed).toEqual(record);
      expect(serializeRecord(parsed)).toBe(text);
    }
  });

  it('accepts the observations of the scenario against metrics.schema.json', () => {
    for (const o of OUTCOMES) if (o.observation) expect(observationProblems(o.observation)).toEqual([]);
    expect(observationProblems({ run_name: 'x' })).toEqual([
      "(top level): must have required property 'verdict'",
      "(top level): must have required property 'stable_metrics'",
    ]);
  });

  const expected: Record<string, RegExp> = {
    'truncated.json.txt': /not valid JSON/,
    'empty.json.txt': /not valid JSON/,
    'wrong-version.json': /schema_version: must be equal to constant/,
    'bad-status.json':
      /runs\.0\.status: must be one of "pending", "running", "accepted", "rejected", "failed", "stopped"/,
    'unknown-key.json': /\(top level\): unknown key "runz"/,
    'duplicate-run.json': /candidate "baseline" appears twice/,
    'best-not-a-run.json': /current_best\.topology: "renderer-x6" is not one of the runs \(baseline\)/,
    'missing-runs.json': /must have required property 'runs'/,
    'bad-metrics.json': /runs\.0\.stable_metrics\.seconds_per_rollout_full_run: must be number,null/,
  };

  it('refuses every corrupt record with the file name and the problem', () => {
    const dir = join(FIXTURES, 'corrupt');
    const files = readdirSync(dir).filter((f) => f.endsWith('.json') || f.endsWith('.json.txt'));
    expect(files.sort()).toEqual(Object.keys(expected).sort());
    for (const file of files) {
      const path = `experiments/${file}`;
      let error: unknown;
      try {
        parseRecord(readFileSync(join(dir, file), 'utf8'), path);
      } catch (e) {
        error = e;
      }
      expect(error, file).toBeInstanceOf(RecordError);
      const message = (error as Error).message;
      expect(message.startsWith(`${path}: `), message).toBe(true);
      expect(message, file).toMatch(expected[file]!);
      expect(message).toMatch(/not overwritten/);
    }
  });

  it('refuses to serialise an invalid record', () => {
    const record = createRecord(EXPERIMENT);
    record.current_best.topology = 'ghost';
    expect(() => serializeRecord(record)).toThrow(/current_best\.topology: "ghost" is not one of the runs/);
  });
});
