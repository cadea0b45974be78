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
import type { Topology } from '../../types/generated/topology.js';
import { type Command, UsageError } from '../command.js';

const USAGE = [
  'topo sim run <hydra overrides…>          play one AlpaSim run (what scripts/alpasim-twin/submit.sh runs in the Slurm job)',
  'topo sim --export-openmetrics <file> [--profile P] [--topology preset|file.yaml] [--minutes M] [--interval S] [--seed N] [--run-name NAME]',
  'topo sim steady [--profile P] [--topology preset|file.yaml]   print the steady state as JSON',
].join('\n       ');

function options(args: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('--')) throw new UsageError(`unexpected argument "${a}"`);
    const v = args[i + 1];
    if (v === undefined || v.startsWith('--')) throw new UsageError(`${a} needs a value`);
    out[a.slice(2)] = v;
    i++;
  }
  return out;
}

/** A preset name, or a YAML file holding a topology (or a candidate with a `topology:` block). */
function loadTopology(spec: string, profileName: string, root: string, cwd: string): Topology {
  const overrides = [`deploy=${profileName}`, 'driver=twin'];
  if ((PRESETS as readonly string[]).includes(spec)) {
    return parseOverrides([...overrides, `topology=${spec}`], { repoRoot: root, gpusPerNode: 64 }).topology;
  }
  const file = resolve(cwd, spec);
  if (!existsSync(file))
    throw new UsageError(`--topology ${spec}: neither a preset (${PRESETS.join(', ')}) nor a file`);
  const doc = parseYaml(readFileSync(file, 'utf8')) as { topology?: Topology } & Topology;
  const topology = (doc?.topology ?? doc) as Topology;
  if (!topology?.services)
    throw new Error(`${file}: no services: expected a topology or a candidate with a topology block`);
  topology.runtime ??= {};
  topology.runtime.endpoints ??= {};
  if (topology.services.trafficsim && topology.runtime.endpoints.trafficsim?.skip === undefined) {
    topology.runtime.endpoints.trafficsim = { ...topology.runtime.endpoints.trafficsim, skip: true };
  }
  return topology;
}

export const simCommand: Command = {
  name: 'sim',
  summary: 'Run or export the AlpaSim twin',
  usage: USAGE,
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
      const profile = loadProfile(o.profile ?? 'twin-balanced', root);
      const topology = loadTopology(o.topology ?? '8gpu_64rollouts', profile.name, root, io.cwd);
      io.stdout(`${JSON.stringify(steadyState(topology, profile), null, 2)}\n`);
      return 0;
    }
    if (first === '--export-openmetrics') {
      const [file, ...more] = rest;
      if (!file) throw new UsageError('--export-openmetrics needs a file');
      const o = options(more);
      const profile = loadProfile(o.profile ?? 'twin-balanced', root);
      const topology = loadTopology(o.topology ?? '8gpu_64rollouts', profile.name, root, io.cwd);
      const num = (k: string, def: number) => {
        if (o[k] === undefined) return def;
        const n = Number(o[k]);
        if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${k} ${o[k]}: expected a positive number`);
        return n;
      };
      const runName = o['run-name'] ?? `twin-${profile.name}`;
      const res = await exportOpenMetrics(topology, profile, resolve(io.cwd, file), {
        minutes: num('minutes', 45),
        intervalS: num('interval', 15),
        ...(o.seed ? { seed: num('seed', 1) } : {}),
        ...(o.start ? { startUnix: num('start', 0) } : {}),
        runName,
        runUuid: o['run-uuid'] ?? randomUUID(),
        ...(o.rollouts ? { totalRollouts: num('rollouts', 1) } : {}),
      });
      io.stdout(`${JSON.stringify({ file: resolve(io.cwd, file), runName, ...res })}\n`);
      return 0;
    }
    throw new UsageError(first ? `unknown sim subcommand "${first}"` : 'missing subcommand');
  },
};
