// One CLI convention across every command: help texts, exit codes, strict and validated options,
// versioned --json with a schema in the repository, and docs that only show flags that exist.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commands } from '../../../src/cli/commands/index.js';
import { runTopo } from '../../support/cli.js';
import { cliSchemaErrors, cliSchemaNames } from '../../support/cli-schemas.js';
import { repoRoot } from '../../support/run-action.js';

function topo(args: string[], env: NodeJS.ProcessEnv = {}, cwd = repoRoot) {
  return runTopo(args, cwd, env);
}

const example = 'topologies/topology-opt-vavam-ord-20261202';
const experiment = 'topology-opt-vavam-ord-20261202';

describe('topo with no command, help and unknown commands', () => {
  it('bare topo prints the help and exits 2; topo help and --help exit 0', async () => {
    const bare = await topo([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toContain('usage: topo <command>');
    expect((await topo(['help'])).code).toBe(0);
    expect((await topo(['--help'])).code).toBe(0);
    const one = await topo(['help', 'status']);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain('--interval SECONDS');
    expect((await topo(['frobnicate'])).code).toBe(2);
  });
});

describe.each(commands.map((c) => [c.name, c] as const))('topo %s --help', (name, command) => {
  it('lists every option with its default, the environment and an example', async () => {
    for (const flag of ['--help', '-h']) {
      const { code, stdout } = await topo([name, flag]);
      expect(code).toBe(0);
      expect(stdout).toContain(`usage: ${command.help.synopsis}`);
      for (const o of command.help.options) {
        const line = stdout.split('\n').find((l) => l.includes(`--${o.name}`) && l.includes(o.description));
        expect(line, `${name} --${o.name}`).toBeDefined();
        if (o.type !== 'boolean') expect(line, `${name} --${o.name} default`).toContain('default: ');
        if (o.env) expect(line).toContain(`env: ${o.env}`);
      }
      expect(stdout).toMatch(/\nenvironment:\n {2}\S/);
      expect(stdout).toMatch(/\nexamples:\n {2}(\S+=\S+ )?topo /);
      expect(stdout).toContain('exit codes: 0 ok; 1 findings');
    }
  });

  it('refuses an unknown option with exit 2 and the synopsis', async () => {
    const r = await topo([name, name === 'sim' ? 'steady' : 'x', '--no-such-option']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown option --no-such-option');
    expect(r.stderr).toContain(`usage: ${command.help.synopsis}`);
  });
});

describe('options are parsed by util.parseArgs', () => {
  it('takes --name=value and short flags', async () => {
    const long = await topo(['validate', '--clusters=topologies/clusters.yaml', 'topologies']);
    expect(long.code).toBe(0);
    const short = await topo(['report', experiment, '-o', '/dev/null']);
    expect(short.code).toBe(0);
  });

  it('says a flag takes no value (--json=true)', async () => {
    const r = await topo(['validate', '--json=true', 'topologies']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--json is a flag and takes no value');
  });

  it.each([
    [['--interval', 'abc'], '--interval must be a number from 1 to 3600, not "abc"'],
    [['--interval=-5'], '--interval must be a number from 1 to 3600, not "-5"'],
    [
      ['--interval', '-5'],
      '--interval needs a value; to pass one starting with "-" write --interval=<value>',
    ],
    [['--interval', '0'], '--interval must be a number from 1 to 3600'],
    [['--count', '0'], '--count must be a whole number of at least 1, not "0"'],
    [['--count', 'abc'], '--count must be a whole number of at least 1'],
    [['--count', '1.5'], '--count must be a whole number'],
    [['--time-scale', '0'], '--time-scale must be a number above 0'],
  ])('status %j is refused before any service is asked', async (args, message) => {
    const r = await topo(['status', experiment, '--watch', ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
  });

  it('validates numbers of every command the same way', async () => {
    expect((await topo(['suggest', experiment, '--count', '0'])).stderr).toContain(
      '--count must be a whole number from 1 to 16, not "0"',
    );
    expect((await topo(['analyze', 'x', '--minutes', 'soon'])).code).toBe(2);
    expect((await topo(['sim', 'steady', '--seed', '0'])).code).toBe(2);
  });
});

describe('exit codes are the same for the same situation', () => {
  it.each([
    ['validate', ['validate', 'no/such.yaml']],
    ['render', ['render', 'no/such.yaml']],
    ['submit', ['submit', 'no/such.yaml']],
    ['cancel', ['cancel', 'no/such.yaml']],
  ])('a missing file exits 2 (%s)', async (_, args) => {
    const r = await topo(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no/such.yaml');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it.each([
    ['status', ['status', 'topology-opt-nope-ord-20260101']],
    ['suggest', ['suggest', 'topology-opt-nope-ord-20260101']],
    ['report', ['report', 'topology-opt-nope-ord-20260101']],
  ])('a missing experiment exits 2 (%s)', async (_, args) => {
    const r = await topo(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('topology-opt-nope-ord-20260101');
  });

  it('an unreachable Prometheus is one line and exit 3', async () => {
    const r = await topo([
      'analyze',
      'topo-topology-opt-vavam-ord-20261202-baseline-0123abcd',
      '--prometheus',
      'http://127.0.0.1:9',
    ]);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('cannot reach Prometheus at http://127.0.0.1:9');
  });

  it('an invalid run name is a usage error (2), not "no data yet" (1)', async () => {
    // any printable run_name is valid (runs launched by hand too); a control character is not
    const r = await topo(['analyze', 'not\ta run', '--prometheus', 'http://127.0.0.1:9']);
    expect(r.code).toBe(2);
  });
});

describe('--json outputs carry schema_version and match their schema', () => {
  const withJson = commands.filter((c) => c.help.options.some((o) => o.name === 'json')).map((c) => c.name);

  it('every command with --json has a schema, and every schema a command', () => {
    expect(cliSchemaNames).toEqual(expect.arrayContaining(withJson));
    // error.schema.json is every command's document on failure
    for (const name of cliSchemaNames.filter((n) => n !== 'error'))
      expect(commands.map((c) => c.name)).toContain(name);
  });

  it('validate --json', async () => {
    const r = await topo(['validate', '--json', 'topologies']);
    const doc = JSON.parse(r.stdout);
    expect(doc.schema_version).toBe(1);
    expect(cliSchemaErrors('validate', doc)).toEqual([]);
  });

  it('render --json', async () => {
    const doc = JSON.parse((await topo(['render', '--json', `${example}/more-workers.yaml`])).stdout);
    expect(cliSchemaErrors('render', doc)).toEqual([]);
  });

  it('a schema refuses a document without schema_version (so a pass means something)', () => {
    expect(cliSchemaErrors('render', { job_name: 'topo-x', argv: ['sbatch', 'x'] })).not.toEqual([]);
  });
});

/** `topo <command> … --flag` on one line of Markdown, outside `/topo` comment commands. */
function documentedFlags(): { file: string; command: string; flag: string }[] {
  const files = ['README.md', ...readdirSync(join(repoRoot, 'docs')).map((f) => `docs/${f}`)].filter(
    (f) => f.endsWith('.md') && existsSync(join(repoRoot, f)),
  );
  const found: { file: string; command: string; flag: string }[] = [];
  for (const file of files) {
    for (const line of readFileSync(join(repoRoot, file), 'utf8').split('\n')) {
      for (const m of line.matchAll(/(?<![/\w-])topo ([a-z]+)([^`]*)/g)) {
        const command = m[1] as string;
        if (!commands.some((c) => c.name === command)) continue;
        // A quoted run command (topo init --command "sbatch --account=…") holds sbatch's flags.
        const rest = (m[2] as string).replace(/"[^"]*"/g, '');
        for (const f of rest.matchAll(/(?<![\w-])--([a-z][a-z-]*)/g))
          found.push({ file, command, flag: f[1] as string });
      }
    }
  }
  return found;
}

describe('docs and flags agree', () => {
  it('every flag the docs show for a command exists', () => {
    const shown = documentedFlags();
    expect(shown.length).toBeGreaterThan(20);
    const wrong = shown.filter(({ command, flag }) => {
      const c = commands.find((x) => x.name === command);
      return !(
        flag === 'help' ||
        c?.help.options.some((o) => o.name === flag) ||
        (command === 'sim' && flag === 'export-openmetrics')
      );
    });
    expect(wrong).toEqual([]);
  });
});
