// The experiments of the checkout a command names (by id, or by one of their run names): one loader,
// so `status`, `jobs` and `analyze` refuse a mistyped experiment and find its cluster the same way.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { recordPaths } from '../../record/model.js';
import { type RecordedReferences, recordedReferences } from '../../record/references.js';
import { parseRecord } from '../../record/validate.js';
import { checkExperiment } from '../../topology/files.js';
import { suggest as didYouMean } from '../../topology/overrides.js';
import { ownerExperiment } from '../../topology/run-name.js';
import type { Experiment } from '../../types/generated/experiment.js';
import type { CliIO } from '../command.js';
import { ConfigError } from '../errors.js';

/** `<dir>/<id>/experiment.yaml`, checked; a missing or invalid one is a configuration error (exit 2). */
export function loadExperiment(io: CliIO, id: string, dir = 'topologies'): Experiment {
  const file = join(resolve(io.cwd, dir), id, 'experiment.yaml');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    const known = localExperiments(io, dir).map((e) => e.experiment_id);
    throw new ConfigError(
      `no experiment ${id}: ${file} does not exist (experiments live in <topologies>/<experiment_id>/experiment.yaml)${didYouMean(id, known)}`,
    );
  }
  const checked = checkExperiment(text, file);
  if (!checked.value)
    throw new ConfigError(checked.issues.map((i) => `${i.file}:${i.line}: ${i.message}`).join('\n'));
  return checked.value;
}

/** Every valid experiment of `<dir>/*​/experiment.yaml` (the others are skipped). */
function localExperiments(io: CliIO, dir: string): Experiment[] {
  const root = resolve(io.cwd, dir);
  if (!existsSync(root)) return [];
  const found: Experiment[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const file = join(root, entry.name, 'experiment.yaml');
    if (!entry.isDirectory() || !existsSync(file)) continue;
    const { value } = checkExperiment(readFileSync(file, 'utf8'), file);
    if (value) found.push(value);
  }
  return found;
}

/**
 * The record's references (experiments/<id>.json under the working folder), as the monitor reads
 * them (src/record/references.ts); `without` a candidate: as they were before its entry.
 */
export function recordReferencesOf(cwd: string, id: string, without?: string): Partial<RecordedReferences> {
  const file = join(resolve(cwd), recordPaths(id).json);
  if (!existsSync(file)) return {};
  return recordedReferences(parseRecord(readFileSync(file, 'utf8'), file), without);
}

/**
 * The experiment of the checkout a run name belongs to (`topo-<experiment>-<candidate>-<hash8>-<label>`,
 * parsed exactly, the longest id winning); else undefined.
 */
export function experimentOfRun(io: CliIO, runName: string, dir = 'topologies'): Experiment | undefined {
  const experiments = localExperiments(io, dir);
  const owner = ownerExperiment(
    runName,
    experiments.map((e) => e.experiment_id),
  );
  return experiments.find((e) => e.experiment_id === owner);
}

/**
 * The cluster of the experiment a run name belongs to (`topo-<experiment>-<candidate>-<hash8>-<label>`,
 * parsed exactly, the longest id winning), when that experiment is in the checkout; else undefined.
 */
export function clusterOfRun(io: CliIO, runName: string, dir = 'topologies'): string | undefined {
  const experiments = localExperiments(io, dir);
  const owner = ownerExperiment(
    runName,
    experiments.map((e) => e.experiment_id),
  );
  return experiments.find((e) => e.experiment_id === owner)?.cluster;
}
