import { existsSync, readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { formatIssue } from '../../topology/issues.js';
import { describePreset, presetOverrideDir } from '../../topology/presets.js';
import {
  fileSystemSource,
  isYamlFile,
  toJsonReport,
  type ValidateOptions,
  type ValidationReport,
  validateFiles,
} from '../../usecases/validate.js';
import { flag, parseOptions, str } from '../args.js';
import type { CliIO, Command } from '../command.js';
import { ConfigError, EXIT, UsageError } from '../errors.js';
import { ALLOW_UNMEASURED_MEMORY_OPTION, CLUSTERS_OPTION, JSON_OPTION } from './options.js';

export { fileSystemSource };

const SKIP_DIRS = new Set(['node_modules', '.git', 'schema']);

/** Files as given; folders expanded to the YAML files beneath them (sorted). */
export function expandPaths(paths: readonly string[], cwd: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(resolve(cwd, dir), { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const child = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) walk(child);
      } else if (entry.isFile() && isYamlFile(entry.name)) out.push(child);
    }
  };
  for (const p of paths) {
    const abs = resolve(cwd, p);
    if (!existsSync(abs)) throw new ConfigError(`${p}: no such file or folder`);
    if (statSync(abs).isDirectory()) walk(p);
    else out.push(p);
  }
  return out;
}

/** --clusters, else TOPO_CLUSTERS_FILE, else (undefined) the clusters.yaml beside the experiment folders. */
export function clustersFileOption(explicit: string | undefined, io: CliIO): string | undefined {
  const file = explicit ?? io.env.TOPO_CLUSTERS_FILE;
  if (file === undefined || file === '') return undefined;
  const abs = isAbsolute(file) ? file : resolve(io.cwd, file);
  if (!existsSync(abs)) throw new ConfigError(`clusters file ${file} does not exist`);
  return relative(io.cwd, abs) || abs;
}

export function validateOptionsFor(
  io: CliIO,
  clusters: string | undefined,
  clusterName?: string,
  allowUnmeasuredMemory = false,
): ValidateOptions {
  const source = fileSystemSource(io.cwd);
  const clustersFile = clustersFileOption(clusters, io);
  return {
    files: source,
    config: source,
    ...(clustersFile ? { clustersFile } : {}),
    ...(clusterName ? { clusterName } : {}),
    presets: presetOptionsFor(io),
    ...(allowUnmeasuredMemory ? { allowUnmeasuredMemory } : {}),
  };
}

/** Presets for a CLI command: TOPO_PRESETS_DIR (against the cwd), then the repository's, then the shipped ones. */
export function presetOptionsFor(io: CliIO): { overrideDir?: string } {
  const overrideDir = presetOverrideDir(io.env, io.cwd);
  return overrideDir ? { overrideDir } : {};
}

/** One note per experiment whose base preset is not the shipped one (a repository may override it). */
export function presetNotes(report: ValidationReport): string[] {
  const notes = new Map<string, string>();
  for (const f of report.files) {
    const c = f.candidate;
    if (!c || c.basePreset.origin === 'shipped') continue;
    notes.set(
      c.experimentId,
      `note: experiment ${c.experimentId}: base preset ${c.baseTopology} is ${describePreset({ ...c.basePreset, name: c.baseTopology, text: '' })}`,
    );
  }
  return [...notes.values()];
}

export const validateCommand: Command = {
  name: 'validate',
  summary: 'Validate candidate, experiment and cluster files',
  help: {
    synopsis: 'topo validate <paths…> [options]',
    description:
      "Checks candidates, experiment.yaml and clusters.yaml files (folders are searched for YAML) against the schemas and AlpaSim's tuning rules; prints file:line:column lines. Exit 1 when any file has errors (warnings alone exit 0). --json follows schemas/cli/validate.schema.json.",
    options: [JSON_OPTION, CLUSTERS_OPTION, ALLOW_UNMEASURED_MEMORY_OPTION],
    examples: [
      'topo validate topologies',
      'topo validate --json topologies/topology-opt-vavam-ord-20261202/more-workers.yaml',
    ],
  },
  async run(args, io) {
    const parsed = parseOptions(validateCommand.help.options, args, io.env);
    if (parsed.positionals.length === 0) throw new UsageError('name at least one file or folder');
    const paths = expandPaths(parsed.positionals, io.cwd);
    if (paths.length === 0) throw new ConfigError(`no YAML files under ${parsed.positionals.join(', ')}`);
    const report = await validateFiles(
      paths,
      validateOptionsFor(io, str(parsed, 'clusters'), undefined, flag(parsed, 'allow-unmeasured-memory')),
    );
    if (flag(parsed, 'json')) {
      io.stdout(`${JSON.stringify({ schema_version: 1, ...toJsonReport(report) }, null, 2)}\n`);
    } else {
      for (const file of report.files) {
        for (const issue of [...file.errors, ...file.warnings].sort(
          (a, b) => a.line - b.line || a.column - b.column,
        )) {
          io.stdout(`${formatIssue(issue)}\n`);
        }
      }
      for (const note of presetNotes(report)) io.stdout(`${note}\n`);
      const bad = report.files.filter((f) => f.errors.length).length;
      io.stdout(
        `${report.files.length} file(s) checked: ${report.errorCount} error(s), ${report.warningCount} warning(s)${bad ? ` in ${bad} file(s)` : ''}\n`,
      );
    }
    return report.errorCount > 0 ? EXIT.findings : EXIT.ok;
  },
};
