import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { PRESETS } from '../../catalog/alpasim.js';
import { steadyState } from '../../sim/model.js';
import { exportOpenMetrics } from '../../sim/openmetrics.js';
import { parseOverrides } from '../../sim/overrides.js';
import { loadProfile, repoRoot } from '../../sim/profile.js';
import { runTwin } from '../../sim/run.js';
import { formatIssue } from '../../topology/issues.js';
import type { Topology } from '../../types/generated/topology.js';
import { validateFiles } from '../../usecases/validate.js';
import { num, type OptionSpec, type Parsed, parseOptions, str } from '../args.js';
import type { CliIO, Command } from '../command.js';
import { EXIT, UsageError } from '../errors.js';
import { snakeKeys } from '../json.js';
import { JSON_OPTION } from './options.js';
import { validateOptionsFor } from './validate.js';

const SIM_OPTIONS: readonly OptionSpec[] = [
  {
    name: 'profile',
    type: 'string',
    value: 'P',
    description: 'twin profile (src/sim/profiles/<P>.yaml)',
    default: 'twin-balanced',
  },
  {
    name: 'topology',
    type: 'string',
    value: 'PRESET|FILE',
    description:
      "a preset name, a YAML topology, or a candidate file (expanded over its experiment's base preset, as submission does)",
    default: '8gpu_64rollouts',
  },
  {
    name: 'minutes',
    type: 'number',
    positive: true,
    value: 'M',
    description: '--export-openmetrics: minutes of run',
    default: '45',
  },
  {
    name: 'interval',
    type: 'number',
    positive: true,
    value: 'S',
    description: '--export-openmetrics: seconds between samples',
    default: '15',
  },
  {
    name: 'seed',
    type: 'integer',
    min: 1,
    value: 'N',
    description: '--export-openmetrics: random seed',
    default: '1',
  },
  {
    name: 'start',
    type: 'number',
    positive: true,
    value: 'UNIX',
    description: '--export-openmetrics: first timestamp',
    default: 'now',
  },
  {
    name: 'rollouts',
    type: 'integer',
    min: 1,
    value: 'N',
    description: '--export-openmetrics: rollouts of the run',
    default: "the profile's suite",
  },
  {
    name: 'run-name',
    type: 'string',
    value: 'NAME',
    description: '--export-openmetrics: run_name label',
    default: 'twin-<profile>',
  },
  {
    name: 'run-uuid',
    type: 'string',
    value: 'UUID',
    description: '--export-openmetrics: run_uuid label',
    default: 'random',
  },
  {
    ...JSON_OPTION,
    description:
      'accepted for the one convention: `steady` and `--export-openmetrics` always print JSON (with schema_version)',
  },
];

function options(args: string[]): Parsed {
  const parsed = parseOptions(SIM_OPTIONS, args);
  if (parsed.positionals.length) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
  return parsed;
}

/**
 * A preset name, a YAML file holding a whole topology, or a candidate: a candidate's `topology:` block
 * changes its experiment's base preset, so it is expanded as submission expands it (the validation's
 * resolver, src/usecases/validate.ts), never read as a whole topology.
 */
async function loadTopology(spec: string, profileName: string, root: string, io: CliIO): Promise<Topology> {
  const overrides = [`deploy=${profileName}`, 'driver=twin'];
  if ((PRESETS as readonly string[]).includes(spec)) {
    return parseOverrides([...overrides, `topology=${spec}`], { repoRoot: root, gpusPerNode: 64 }).topology;
  }
  const file = resolve(io.cwd, spec);
  if (!existsSync(file))
    throw new UsageError(`--topology ${spec}: neither a preset (${PRESETS.join(', ')}) nor a file`);
  const doc = parseYaml(readFileSync(file, 'utf8')) as ({ topology?: Topology } & Topology) | null;
  const topology = doc && 'topology' in doc ? await candidateTopology(spec, io) : (doc as Topology);
  if (!topology?.services)
    throw new UsageError(`${spec}: no services: pass a preset name, a whole topology, or a candidate file`);
  topology.runtime ??= {};
  topology.runtime.endpoints ??= {};
  if (topology.services.trafficsim && topology.runtime.endpoints.trafficsim?.skip === undefined) {
    topology.runtime.endpoints.trafficsim = { ...topology.runtime.endpoints.trafficsim, skip: true };
  }
  return topology;
}

/** A candidate's full topology, as `topo render` and submission expand it; refused, saying why, when it cannot be. */
async function candidateTopology(spec: string, io: CliIO): Promise<Topology> {
  const { files } = await validateFiles([spec], validateOptionsFor(io, undefined));
  const report = files[0];
  if (report?.candidate) return report.candidate.expanded;
  const why = report?.errors[0] ? formatIssue(report.errors[0]) : 'it is not beside an experiment.yaml';
  throw new UsageError(
    `--topology ${spec} is a candidate: its topology block changes its experiment's base preset, and it cannot be expanded (${why}); fix what \`topo validate ${spec}\` reports, or pass a whole topology (a preset name, or a preset file)`,
  );
}

export const simCommand: Command = {
  name: 'sim',
  summary: 'Run or export the AlpaSim twin',
  help: {
    synopsis:
      'topo sim run <hydra overrides…> | topo sim steady [options] | topo sim --export-openmetrics <file> [options]',
    description:
      'The AlpaSim twin. `run` plays one AlpaSim run inside a Slurm job (what scripts/alpasim-twin/submit.sh runs; its arguments pass through untouched); `steady` prints the steady state of a topology as JSON; `--export-openmetrics` writes a run as an OpenMetrics file and prints what it wrote as JSON (both: schemas/cli/sim.schema.json).',
    options: SIM_OPTIONS,
    examples: [
      'topo sim steady --profile twin-driver-bound --topology 8gpu_64rollouts',
      'topo sim --export-openmetrics run.om --minutes 30 --seed 7',
    ],
  },
  async run(args, io) {
    const [first, ...rest] = args;
    if (first === 'run') {
      return runTwin(rest, {
        out: (l) => io.stdout(`${l}\n`),
        err: (l) => io.stderr(`${l}\n`),
        env: io.env,
      });
    }
    const root = repoRoot();
    if (first === 'steady') {
      const o = options(rest);
      const profile = loadProfile(str(o, 'profile') ?? 'twin-balanced', root);
      const topology = await loadTopology(str(o, 'topology') ?? '8gpu_64rollouts', profile.name, root, io);
      io.stdout(
        `${JSON.stringify({ schema_version: 1, ...(snakeKeys(steadyState(topology, profile)) as object) }, null, 2)}\n`,
      );
      return EXIT.ok;
    }
    if (first === '--export-openmetrics') {
      const [file, ...more] = rest;
      if (!file) throw new UsageError('--export-openmetrics needs a file');
      const o = options(more);
      const profile = loadProfile(str(o, 'profile') ?? 'twin-balanced', root);
      const topology = await loadTopology(str(o, 'topology') ?? '8gpu_64rollouts', profile.name, root, io);
      const runName = str(o, 'run-name') ?? `twin-${profile.name}`;
      const seed = num(o, 'seed');
      const start = num(o, 'start');
      const rollouts = num(o, 'rollouts');
      const res = await exportOpenMetrics(topology, profile, resolve(io.cwd, file), {
        minutes: num(o, 'minutes') ?? 45,
        intervalS: num(o, 'interval') ?? 15,
        ...(seed !== undefined ? { seed } : {}),
        ...(start !== undefined ? { startUnix: start } : {}),
        runName,
        runUuid: str(o, 'run-uuid') ?? randomUUID(),
        ...(rollouts !== undefined ? { totalRollouts: rollouts } : {}),
      });
      io.stdout(
        `${JSON.stringify({ schema_version: 1, ...(snakeKeys({ file: resolve(io.cwd, file), runName, ...res }) as object) })}\n`,
      );
      return EXIT.ok;
    }
    throw new UsageError(first ? `unknown sim subcommand "${first}"` : 'missing subcommand');
  },
};
