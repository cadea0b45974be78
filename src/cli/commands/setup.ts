// `topo setup`: the caller workflows and a commented clusters.yaml skeleton, written into a repository.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setupFiles } from '../../setup/templates.js';
import { shippedRoot } from '../../topology/shipped.js';
import { flag, parseOptions, str } from '../args.js';
import type { Command } from '../command.js';
import { ConfigError, EXIT, UsageError } from '../errors.js';

/** owner/name and the major tag of the alpasim-topo this CLI comes from (its package.json). */
export function ownVersion(): { repository: string; major: string } {
  const root = shippedRoot();
  const pkg = root ? JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) : {};
  const url: string = pkg.repository?.url ?? 'https://github.com/alpasim-topo/alpasim-topo';
  return {
    repository: url.replace(/^https:\/\/github\.com\//, '').replace(/\.git$/, ''),
    major: `v${String(pkg.version ?? '1').split('.')[0]}`,
  };
}

const REF = /^(v\d+(\.\d+){0,2}|[0-9a-f]{40})$/;
const CLUSTER = /^[a-z0-9][a-z0-9_-]{0,31}$/;

export const setupCommand: Command = {
  name: 'setup',
  summary: 'Write the caller workflows and a commented clusters.yaml into a repository',
  help: {
    synopsis: 'topo setup [options]',
    description:
      "Writes .github/workflows/topology-{validate,submit,monitor,record}.yml (each calls alpasim-topo's reusable workflow at --ref) and topologies/clusters.yaml (a skeleton that validates, every value to replace marked TODO). Refuses, writing nothing, when any of them exists, unless --force. Then: replace the TODOs, register the runner, and run `topo doctor` on the runner host.",
    options: [
      {
        name: 'dir',
        short: 'd',
        type: 'string',
        value: 'DIR',
        description: "the repository's root",
        default: '.',
      },
      {
        name: 'ref',
        type: 'string',
        value: 'REF',
        description: 'version to call: vN (follows N.x), vN.M.P or a commit SHA',
        default: 'the major tag of this CLI',
      },
      {
        name: 'repository',
        type: 'string',
        value: 'OWNER/NAME',
        description: 'where alpasim-topo lives on GitHub',
        default: "this CLI's package.json repository",
      },
      {
        name: 'cluster',
        type: 'string',
        value: 'NAME',
        description: 'name of the cluster entry',
        default: 'mycluster',
      },
      {
        name: 'transport',
        type: 'string',
        value: 'local|ssh',
        description: 'how the runner reaches Slurm',
        default: 'local',
      },
      { name: 'force', short: 'f', type: 'boolean', description: 'overwrite files that exist' },
    ],
    examples: ['topo setup', 'topo setup --dir ../my-topologies --cluster ord --transport ssh --ref v1.0.0'],
  },
  async run(args, io) {
    const parsed = parseOptions(setupCommand.help.options, args, io.env);
    if (parsed.positionals.length) throw new UsageError(`unexpected argument ${parsed.positionals[0]}`);
    const own = ownVersion();
    const ref = str(parsed, 'ref') ?? own.major;
    if (!REF.test(ref)) throw new UsageError(`--ref ${ref}: use vN, vN.M.P or a full commit SHA`);
    const repository = str(parsed, 'repository') ?? own.repository;
    if (!/^[\w.-]+\/[\w.-]+$/.test(repository))
      throw new UsageError(`--repository ${repository}: use owner/name`);
    const cluster = str(parsed, 'cluster') ?? 'mycluster';
    if (!CLUSTER.test(cluster))
      throw new UsageError(`--cluster ${cluster}: lowercase letters, digits, - and _`);
    const transport = str(parsed, 'transport') ?? 'local';
    if (transport !== 'local' && transport !== 'ssh')
      throw new UsageError(`--transport ${transport}: local or ssh`);
    const root = resolve(io.cwd, str(parsed, 'dir') ?? '.');
    if (!existsSync(root)) throw new ConfigError(`${root} does not exist`);
    const files = setupFiles({ repository, ref, cluster, transport });
    const existing = files.filter((f) => existsSync(join(root, f.path))).map((f) => f.path);
    if (existing.length && !flag(parsed, 'force'))
      throw new ConfigError(
        `not overwriting ${existing.join(', ')} (pass --force to replace them); nothing written`,
      );
    for (const f of files) {
      mkdirSync(dirname(join(root, f.path)), { recursive: true });
      writeFileSync(join(root, f.path), f.text);
      io.stdout(`wrote ${f.path}\n`);
    }
    io.stdout(
      `next: replace the TODOs in topologies/clusters.yaml, register a self-hosted runner labelled slurm, create the "slurm" environment (default branch only)${transport === 'ssh' ? ' with the TOPO_SSH_PRIVATE_KEY secret' : ''}, then run \`topo doctor --cluster ${cluster}\` on the runner host (docs/adopting.md)\n`,
    );
    return EXIT.ok;
  },
};
