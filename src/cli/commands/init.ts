import { existsSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { recordPaths } from '../../record/model.js';
import { prepareExperiment, writeExperimentFiles } from '../../topology/init.js';
import { RunCommandError } from '../../topology/run-command.js';
import { writeInitialRecord } from '../../usecases/record.js';
import { flag, parseOptions, str } from '../args.js';
import type { Command } from '../command.js';
import { ConfigError, EXIT, UsageError } from '../errors.js';
import { JSON_OPTION } from './options.js';
import { presetOptionsFor } from './validate.js';

export const initCommand: Command = {
  name: 'init',
  summary: 'Start an experiment from a full AlpaSim run command (experiment.yaml + baseline.yaml)',
  help: {
    synopsis: 'topo init --command "<full run command>" [options]',
    description:
      'Writes <dir>/<experiment_id>/experiment.yaml (the fixed inputs), baseline.yaml (the preset expanded) and the empty record under experiments/. Exit 2 when the command cannot be understood or the cluster is not in clusters.yaml.',
    options: [
      {
        name: 'command',
        short: 'c',
        type: 'string',
        value: '"<run command>"',
        description: 'the full AlpaSim run command (sbatch …/submit.sh deploy=… topology=… driver=…)',
      },
      {
        name: 'dir',
        type: 'string',
        value: 'DIR',
        description: 'folder of the experiments and clusters.yaml',
        default: 'topologies',
      },
      {
        name: 'date',
        type: 'string',
        value: 'YYYYMMDD',
        description: 'date in the experiment id',
        default: 'today',
      },
      {
        name: 'cluster',
        type: 'string',
        value: 'NAME',
        description: 'cluster of clusters.yaml',
        default: 'the deploy= of the command',
      },
      {
        name: 'clusters',
        type: 'string',
        value: 'FILE',
        description: 'clusters file that must define the cluster',
        default: '<dir>/clusters.yaml',
        env: 'TOPO_CLUSTERS_FILE',
      },
      { name: 'force', short: 'f', type: 'boolean', description: 'overwrite an existing experiment' },
      JSON_OPTION,
    ],
    examples: [
      'topo init --command "sbatch --account=av_alpamayo_sim --gpus-per-node=8 src/tools/run-on-slurm/submit.sh deploy=ord topology=8gpu_64rollouts driver=vavam"',
    ],
  },
  async run(args, io) {
    const parsed = parseOptions(initCommand.help.options, args, io.env);
    if (parsed.positionals.length)
      throw new UsageError(
        `unexpected argument ${parsed.positionals[0]} (quote the run command after --command)`,
      );
    const command = str(parsed, 'command');
    if (!command)
      throw new UsageError(
        '--command "<full run command>" is required (the sbatch …/submit.sh deploy=… topology=… driver=… line)',
      );
    const date = str(parsed, 'date');
    if (date !== undefined && !/^[0-9]{8}$/.test(date)) throw new UsageError(`--date ${date}: use YYYYMMDD`);
    const dir = resolve(io.cwd, str(parsed, 'dir') ?? 'topologies');
    const knownClusters = definedClusters(
      resolve(io.cwd, str(parsed, 'clusters') ?? resolve(dir, 'clusters.yaml')),
    );
    const force = flag(parsed, 'force');
    const rel = (p: string) => relative(io.cwd, p) || p;
    let prepared: ReturnType<typeof prepareExperiment>;
    try {
      prepared = prepareExperiment(command, dir, {
        ...(date ? { date } : {}),
        ...(str(parsed, 'cluster') ? { cluster: str(parsed, 'cluster') } : {}),
        knownClusters,
        presets: presetOptionsFor(io),
      });
    } catch (error) {
      // A run command it cannot take is the user's input, like a bad option: exit 2.
      if (error instanceof RunCommandError) throw new ConfigError(error.message);
      throw error;
    }
    const id = prepared.experiment.experiment_id;
    const repoRoot = resolve(dir, '..');
    refuseOverwrite(id, dir, repoRoot, force, rel);
    const written = writeExperimentFiles(dir, prepared, { force });
    // The experiment record starts with the experiment (experiments/<id>.json and .md), rewritten
    // with it under --force (the record had no runs: checked above).
    const recordFiles = writeInitialRecord(repoRoot, written.experiment, undefined, { overwrite: force });
    const files = [written.experimentFile, written.baselineFile, ...recordFiles].map(rel);
    const next = `topo validate ${rel(written.experimentDir)}`;
    if (flag(parsed, 'json'))
      io.stdout(
        `${JSON.stringify({ schema_version: 1, experiment_id: id, files, notes: written.notes, next })}\n`,
      );
    else
      io.stdout(
        `created experiment ${id}\n${files.map((f) => `  ${f}\n`).join('')}${written.notes.map((n) => `note: ${n}\n`).join('')}next: ${next}\n`,
      );
    return EXIT.ok;
  },
};

/**
 * Nothing is written unless everything can be: the experiment and its record go together, an existing
 * experiment needs --force, and --force never replaces a record that holds runs.
 */
function refuseOverwrite(
  id: string,
  dir: string,
  repoRoot: string,
  force: boolean,
  rel: (p: string) => string,
): void {
  const record = recordPaths(id);
  const existing = [
    join(dir, id, 'experiment.yaml'),
    join(dir, id, 'baseline.yaml'),
    join(repoRoot, record.json),
    join(repoRoot, record.markdown),
  ].filter((f) => existsSync(f));
  if (existing.length && !force)
    throw new ConfigError(
      `experiment ${id} exists already (${existing.map(rel).join(', ')}): pass --force to start it again, or another --date`,
    );
  const runs = recordedRuns(join(repoRoot, record.json));
  if (force && runs > 0)
    throw new ConfigError(
      `${rel(join(repoRoot, record.json))} holds ${runs} recorded run(s): --force would replace the record with an empty one and lose them; nothing written. Start another experiment (--date YYYYMMDD), or move the record away yourself first`,
    );
}

/** How many runs a record holds (0 when there is no record); an unreadable one is refused, not overwritten. */
function recordedRuns(file: string): number {
  if (!existsSync(file)) return 0;
  try {
    const runs = (JSON.parse(readFileSync(file, 'utf8')) as { runs?: unknown }).runs;
    return Array.isArray(runs) ? runs.length : 0;
  } catch (error) {
    throw new ConfigError(
      `${file} is not a readable record (${(error as Error).message}): fix or move it first; nothing written`,
    );
  }
}

/** The cluster names a clusters file defines: the experiment's cluster must be one of them. */
function definedClusters(file: string): { file: string; names: string[] } {
  if (!existsSync(file))
    throw new ConfigError(
      `${file} does not exist: describe your cluster there first (\`topo setup\` writes a commented skeleton), or pass --clusters FILE`,
    );
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(
      `${file} is not valid YAML: ${(error as Error).message} (run topo validate ${file})`,
    );
  }
  const clusters = (doc as { clusters?: unknown } | null)?.clusters;
  const names = clusters && typeof clusters === 'object' ? Object.keys(clusters) : [];
  return { file, names };
}
