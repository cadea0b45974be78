// Loading and validating records (and the observation blocks they are built from) against the JSON
// Schemas. A record that fails here is never overwritten: the error names the file and the problem.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import metricsSchema from '../../topologies/schema/metrics.schema.json' with { type: 'json' };
import recordSchema from '../../topologies/schema/record.schema.json' with { type: 'json' };
import topologySchema from '../../topologies/schema/topology.schema.json' with { type: 'json' };
import { migrateObservation } from '../analysis/stored.js';
import type { CandidateObservation } from '../types/generated/metrics.js';
import type { ExperimentRecord } from '../types/generated/record.js';
import { migrateRecord } from './migrate.js';

/** A record file that cannot be used; its message names the file and what is wrong. */
export class RecordError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`${file}: ${problems.length === 1 ? problems[0] : `\n  - ${problems.join('\n  - ')}`}`);
    this.name = 'RecordError';
  }
}

let compiled: { record: ValidateFunction; observation: ValidateFunction } | undefined;

function validators() {
  if (!compiled) {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    ajv.addSchema(topologySchema);
    ajv.addSchema(metricsSchema);
    ajv.addSchema(recordSchema);
    compiled = {
      record: ajv.getSchema(recordSchema.$id)!,
      observation: ajv.getSchema(metricsSchema.$id)!,
    };
  }
  return compiled;
}

function describe(errors: ErrorObject[] | null | undefined): string[] {
  // oneOf/anyOf add a summary error over the branches' own errors: keep the specific ones.
  const list = (errors ?? []).filter((e) => e.keyword !== 'oneOf' && e.keyword !== 'if');
  const lines = list.map((e) => {
    const at = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : '(top level)';
    if (e.keyword === 'additionalProperties')
      return `${at}: unknown key "${(e.params as { additionalProperty: string }).additionalProperty}"`;
    if (e.keyword === 'enum')
      return `${at}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    return `${at}: ${e.message}`;
  });
  return [...new Set(lines)].slice(0, 20);
}

/** Schema and consistency problems of a parsed record; empty when it is valid. */
export function recordProblems(value: unknown): string[] {
  const validate = validators().record;
  if (!validate(value)) return describe(validate.errors);
  const record = value as ExperimentRecord;
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const run of record.runs) {
    if (seen.has(run.name))
      problems.push(`runs: candidate "${run.name}" appears twice (runs are keyed by name)`);
    seen.add(run.name);
  }
  const best = record.current_best.topology;
  if (best && !seen.has(best))
    problems.push(
      `current_best.topology: "${best}" is not one of the runs (${[...seen].join(', ') || 'none'})`,
    );
  return problems;
}

/** Parses and validates a record file's text; throws RecordError naming the file and the problem. */
export function parseRecord(text: string, file: string): ExperimentRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new RecordError(file, [
      `not valid JSON (${message}); fix or restore the file from git history — it was not overwritten`,
    ]);
  }
  // an older record reads as the current schema has it (./migrate.ts)
  value = migrateRecord(value);
  const problems = recordProblems(value);
  if (problems.length) {
    throw new RecordError(file, [
      ...problems.map((p) => `does not match topologies/schema/record.schema.json: ${p}`),
      'the record was not overwritten; fix it (or restore it from git history) and re-run',
    ]);
  }
  return value as ExperimentRecord;
}

/** The record as committed: two-space JSON with a final newline (stable, so diffs stay small). */
export function serializeRecord(record: ExperimentRecord): string {
  const problems = recordProblems(record);
  if (problems.length) throw new RecordError('record (before writing)', problems);
  return `${JSON.stringify(record, null, 2)}\n`;
}

/** Problems of an observation block against metrics.schema.json; empty when valid. */
export function observationProblems(value: unknown): string[] {
  const validate = validators().observation;
  return validate(value) ? [] : describe(validate.errors);
}

/** The observation (an older one migrated: src/analysis/stored.ts) when it is schema-valid, else undefined with the problems. */
export function checkObservation(
  raw: unknown,
): { observation: CandidateObservation; problems: [] } | { observation: undefined; problems: string[] } {
  const value = migrateObservation(raw);
  const problems = observationProblems(value);
  return problems.length
    ? { observation: undefined, problems }
    : { observation: value as CandidateObservation, problems: [] };
}
