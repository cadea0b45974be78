// `topo setup`: the caller workflows, pages.yml and a commented clusters.yaml skeleton, written into
// a repository.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setupFiles, topoCommand } from '../../setup/templates.js';
import { flag, parseOptions, str } from '../args.js';
import type { Command } from '../command.js';
import { ConfigError, EXIT, UsageError } from '../errors.js';
import { packageInfo } from '../package-info.js';

const REF = /^(v\d+(\.\d+){0,2}|[0-9a-f]{40})$/;
const CLUSTER = /^[a-z0-9][a-z0-9_-]{0,31}$/;
const REPOSITORY = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}\/[A-Za-z0-9._-]{1,100}$/;
const LABEL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export const setupCommand: Command = {
  name: 'setup',
  summary: 'Write the caller workflows, pages.yml and a commented clusters.yaml into a repository',
  help: {
    synopsis: 'topo setup [options]',
    description:
      "Writes .github/workflows/topology-{validate,submit,monitor,record}.yml (each calls alpasim-topo's reusable workflow at --ref), .github/workflows/pages.yml (the experiments site, rendered by the same version) and topologies/clusters.yaml (a skeleton that validates, every value to replace holding TODO, example.org or PLACEHOLDER: validate warns about each one left, doctor fails on them). Refuses, writing nothing, when any of them exists, unless --force. Then: replace the TODOs, register the runner, and run `topo doctor` on the runner host.",
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
        description:
          'version to call: vN (follows N.x), vN.M.P or its full commit SHA (pins every action that runs)',
        default: 'the major tag of this CLI',
      },
      {
        name: 'repo',
        type: 'string',
        value: 'OWNER/NAME',
        description: 'where alpasim-topo lives on GitHub (a fork or a mirror)',
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
      {
        name: 'runner-label',
        type: 'string',
        value: 'LABEL',
        description: 'label of the self-hosted runner the submit, monitor and record jobs run on',
        default: 'slurm',
      },
      { name: 'force', short: 'f', type: 'boolean', description: 'overwrite files that exist' },
    ],
    examples: [
      'topo setup',
      'topo setup --dir ../my-topologies --cluster ord --transport ssh --ref v1.0.0',
      'topo setup --repo my-org/alpasim-topo --runner-label gpu-login',
    ],
  },
  async run(args, io) {
    const parsed = parseOptions(setupCommand.help.options, args, io.env);
    if (parsed.positionals.length) throw new UsageError(`unexpected argument ${parsed.positionals[0]}`);
    const ref = str(parsed, 'ref');
    const repoOption = str(parsed, 'repo');
    // package.json is the one place owner/name is written; --repo overrides it (a fork, a mirror).
    const own = ref && repoOption ? undefined : packageInfo();
    const version = ref ?? (own?.major as string);
    if (!REF.test(version)) throw new UsageError(`--ref ${version}: use vN, vN.M.P or a full commit SHA`);
    const repository = repoOption ?? (own?.repository as string);
    if (!REPOSITORY.test(repository)) throw new UsageError(`--repo ${repository}: use OWNER/NAME`);
    const cluster = str(parsed, 'cluster') ?? 'mycluster';
    if (!CLUSTER.test(cluster))
      throw new UsageError(`--cluster ${cluster}: lowercase letters, digits, - and _`);
    const transport = str(parsed, 'transport') ?? 'local';
    if (transport !== 'local' && transport !== 'ssh')
      throw new UsageError(`--transport ${transport}: local or ssh`);
    const runnerLabel = str(parsed, 'runner-label') ?? 'slurm';
    if (!LABEL.test(runnerLabel) || runnerLabel === 'self-hosted')
      throw new UsageError(
        `--runner-label ${runnerLabel}: letters, digits, '.', '_' and '-' (not self-hosted)`,
      );
    const root = resolve(io.cwd, str(parsed, 'dir') ?? '.');
    if (!existsSync(root)) throw new ConfigError(`${root} does not exist`);
    const files = setupFiles({ repository, ref: version, cluster, transport, runnerLabel });
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
      `next: replace the TODOs in topologies/clusters.yaml, register a self-hosted runner labelled ${runnerLabel}, create the "slurm" environment (deployment branches: the default branch only)${transport === 'ssh' ? ' with the secret TOPO_SSH_PRIVATE_KEY' : ''}, then on the runner host run \`${topoCommand({ repository, ref: version })} doctor --cluster ${cluster}\` (docs/adopting.md)\n`,
    );
    return EXIT.ok;
  },
};
