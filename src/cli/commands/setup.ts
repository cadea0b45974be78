// `topo setup`: the caller workflows, pages.yml and a commented clusters.yaml skeleton, written into
// a repository.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { gitFileReader } from '../../setup/git-files.js';
import { movingActionsAt, REUSABLE, where } from '../../setup/pins.js';
import { type SetupOptions, setupFiles, topoCommand } from '../../setup/templates.js';
import { flag, type Parsed, parseOptions, str } from '../args.js';
import type { CliIO, Command } from '../command.js';
import { ConfigError, EXIT, UnreachableError, UsageError } from '../errors.js';
import { packageInfo } from '../package-info.js';
import { JSON_OPTION } from './options.js';

const REF = /^(v\d+(\.\d+){0,2}|[0-9a-f]{40})$/;
const MAJOR = /^v\d+$/;
const SHA = /^[0-9a-f]{40}$/;
const execFileAsync = promisify(execFile);
const CLUSTER = /^[a-z0-9][a-z0-9_-]{0,31}$/;
const REPOSITORY = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}\/[A-Za-z0-9._-]{1,100}$/;
const LABEL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** The checked options; `pin` when the callers get a full SHA (every ref but a major tag vN). */
function setupOptions(parsed: Parsed) {
  const ref = str(parsed, 'ref');
  const repoOption = str(parsed, 'repo');
  // package.json is the one place owner/name is written; --repo overrides it (a fork, a mirror).
  const own = ref && repoOption ? undefined : packageInfo();
  const version = ref ?? `v${own?.version}`;
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
  const sha = str(parsed, 'sha');
  if (sha !== undefined && !SHA.test(sha)) throw new UsageError(`--sha ${sha}: a full 40-hex commit SHA`);
  if (SHA.test(version) && sha !== undefined && sha !== version)
    throw new UsageError(`--ref ${version} is a commit already: --sha must be the same or left out`);
  // a SHA names itself; a major tag (vN) follows every N.x release unless --sha pins it
  const pin = sha !== undefined || !MAJOR.test(version);
  return { repository, ref: version, cluster, transport: transport as 'local' | 'ssh', runnerLabel, pin };
}

/**
 * The commit a tag names on GitHub (`git ls-remote`, the annotated tag peeled), as `npx github:…#tag`
 * resolves it. A full SHA names itself. The server is GITHUB_SERVER_URL (GitHub Enterprise), else github.com.
 */
async function resolveTag(repository: string, ref: string, env: NodeJS.ProcessEnv): Promise<string> {
  if (SHA.test(ref)) return ref;
  const url = `${(env.GITHUB_SERVER_URL || 'https://github.com').replace(/\/+$/, '')}/${repository}.git`;
  let out: string;
  try {
    out = (
      await execFileAsync('git', ['ls-remote', url, `refs/tags/${ref}`, `refs/tags/${ref}^{}`], {
        timeout: 30_000,
        env: {
          PATH: env.PATH ?? process.env.PATH ?? '',
          HOME: env.HOME ?? process.env.HOME ?? '',
          GIT_TERMINAL_PROMPT: '0',
        },
      })
    ).stdout;
  } catch (error) {
    throw new UnreachableError(
      `cannot ask ${url} which commit ${ref} is (${(error as Error).message.split('\n')[0]}): pass --sha <commit> (docs/adopting.md)`,
    );
  }
  const lines = out
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t'));
  const found =
    lines.find((l) => l[1] === `refs/tags/${ref}^{}`) ?? lines.find((l) => l[1] === `refs/tags/${ref}`);
  if (!found?.[0] || !SHA.test(found[0]))
    throw new ConfigError(
      `${url} has no tag ${ref} yet: adopt from your own release tag or a commit (docs/adopting.md, "Before a release"): --ref <your tag> --repo <your fork>, --sha <commit>, or --ref v${ref.slice(1).split('.')[0]} to follow the moving tag`,
    );
  return found[0];
}

/**
 * `--ref <tag> --sha <commit>`: the callers will say `# <tag>` beside the commit, so the tag must name
 * it. A tag that names another commit, or does not exist, is refused with the way out (`--ref <commit>`
 * pins the commit without a tag comment); a server it cannot reach is a warning (taken on trust).
 */
async function checkTagNames(
  o: Pick<SetupOptions, 'repository' | 'ref'>,
  sha: string,
  io: CliIO,
): Promise<void> {
  const wayOut = `drop --sha to pin the tag's own commit, or pass --ref ${sha} to pin this commit without a tag comment`;
  let named: string;
  try {
    named = await resolveTag(o.repository, o.ref, io.env);
  } catch (error) {
    if (error instanceof UnreachableError) {
      io.stderr(
        `warning: the server did not answer which commit ${o.ref} is: the callers say \`# ${o.ref}\` beside ${sha} on trust; --ref ${sha} pins the commit without a tag comment\n`,
      );
      return;
    }
    throw new ConfigError(
      `${o.repository} has no tag ${o.ref}: the callers would say \`# ${o.ref}\` beside ${sha}, a commit no such tag names; pass --ref ${sha} to pin the commit without a tag comment, or make the tag first (docs/adopting.md, "Before a release"); nothing written`,
    );
  }
  if (named !== sha)
    throw new ConfigError(
      `${o.ref} of ${o.repository} is ${named}, not ${sha}: the callers would say \`# ${o.ref}\` beside another commit; ${wayOut}; nothing written`,
    );
}

/**
 * A pin holds only when everything it runs is pinned: the commit's reusable workflows must name their
 * actions by full SHA, as a tag scripts/release.mjs made does (a commit of the default branch calls
 * `actions/<x>@v1`, which moves, or does not exist before the first release). Refuses otherwise,
 * with the way out; a server it cannot reach is a warning (doctor checks it again on the runner host).
 */
async function checkPin(o: Pick<SetupOptions, 'repository' | 'ref'>, sha: string, io: CliIO): Promise<void> {
  const files = gitFileReader(io.env);
  const named = sha === o.ref ? sha : `${o.ref} (${sha})`;
  try {
    const { moving, missing } = await movingActionsAt(files.read, o.repository, sha);
    if (missing.length === REUSABLE.length)
      throw new ConfigError(
        `${o.repository} has no commit ${sha} holding .github/workflows/reusable-*.yml: check --ref and --sha (docs/adopting.md); nothing written`,
      );
    if (missing.length)
      throw new ConfigError(
        `${o.repository} at ${named} has no ${missing.join(', ')}: not a tree of alpasim-topo this version can call; nothing written`,
      );
    if (moving.length)
      throw new ConfigError(
        `${o.repository} at ${named} runs actions at a moving ref, so the pin would not hold what runs on your runner:\n${moving.map((u) => `  ${where(u)}`).join('\n')}\nPin a release tag instead (scripts/release.mjs writes every action of a tagged tree by full SHA; docs/releasing.md), make one in your fork (docs/adopting.md, "Before a release"), or follow the moving tag knowingly with --ref v${o.ref.match(/^v(\d+)/)?.[1] ?? '1'}; nothing written`,
      );
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    io.stderr(
      `warning: could not check that ${named} pins its actions (${(error as Error).message}); \`topo doctor\` checks it on the runner host\n`,
    );
  } finally {
    files.close();
  }
}

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
          'version to call: a release tag vN.M.P (written as its full commit SHA with the tag in a comment), a commit SHA, or a major tag vN (the moving tag: every N.x release runs without review)',
        default: "this CLI's release tag, v<version>",
      },
      {
        name: 'sha',
        type: 'string',
        value: 'SHA',
        description:
          "the full commit SHA --ref names, when you know it (offline, or your own fork's tag): no lookup",
        default: 'looked up with git ls-remote on GITHUB_SERVER_URL',
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
      JSON_OPTION,
    ],
    examples: [
      'topo setup',
      'topo setup --dir ../my-topologies --cluster ord --transport ssh --ref v1.0.0',
      'topo setup --repo my-org/alpasim-topo --ref v1.0.0 --sha 0123456789abcdef0123456789abcdef01234567',
      'topo setup --ref v1',
      'topo setup --repo my-org/alpasim-topo --runner-label gpu-login',
    ],
  },
  async run(args, io) {
    const parsed = parseOptions(setupCommand.help.options, args, io.env);
    if (parsed.positionals.length) throw new UsageError(`unexpected argument ${parsed.positionals[0]}`);
    const o = setupOptions(parsed);
    const root = resolve(io.cwd, str(parsed, 'dir') ?? '.');
    if (!existsSync(root)) throw new ConfigError(`${root} does not exist`);
    const existing = setupFiles(o)
      .filter((f) => existsSync(join(root, f.path)))
      .map((f) => f.path);
    if (existing.length && !flag(parsed, 'force'))
      throw new ConfigError(
        `not overwriting ${existing.join(', ')} (pass --force to replace them); nothing written`,
      );
    const given = str(parsed, 'sha');
    const sha = o.pin ? (given ?? (await resolveTag(o.repository, o.ref, io.env))) : undefined;
    if (given && !SHA.test(o.ref)) await checkTagNames(o, given, io);
    if (sha) await checkPin(o, sha, io);
    const options = { ...o, ...(sha ? { sha } : {}) };
    const files = setupFiles(options);
    for (const f of files) {
      mkdirSync(dirname(join(root, f.path)), { recursive: true });
      writeFileSync(join(root, f.path), f.text);
    }
    const next = `replace the TODOs in topologies/clusters.yaml, register a self-hosted runner labelled ${o.runnerLabel}, create the "slurm" environment (deployment branches: the default branch only)${o.transport === 'ssh' ? ' with the secret TOPO_SSH_PRIVATE_KEY' : ''}, then on the runner host run \`${topoCommand(options)} doctor --cluster ${o.cluster}\` (docs/adopting.md)`;
    const written = files.map((f) => f.path);
    io.stdout(
      flag(parsed, 'json')
        ? `${JSON.stringify({ schema_version: 1, repository: o.repository, ref: o.ref, sha: sha ?? null, files: written, next })}\n`
        : `${written.map((f) => `wrote ${f}\n`).join('')}${sha ? `pinned to ${sha} (${o.ref})\n` : `following the moving tag ${o.ref}\n`}next: ${next}\n`,
    );
    return EXIT.ok;
  },
};
