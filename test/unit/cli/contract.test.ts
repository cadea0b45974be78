// The CLI's contract (docs/cli.md): --version, one JSON error document on failure under --json,
// snake_case keys in every schema, paths relative to the working directory, plain terminal text.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyError } from '../../../src/cli/main.js';
import { repositoryOf } from '../../../src/cli/package-info.js';
import { nextStep } from '../../../src/report/pr-comment.js';
import {
  ControllerUnreachableError,
  HostKeyMismatchError,
  SlurmCommandError,
} from '../../../src/slurm/errors.js';
import { runTopo } from '../../support/cli.js';
import { CLI_SCHEMA_DIR, cliSchemaErrors } from '../../support/cli-schemas.js';
import { repoRoot } from '../../support/run-action.js';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));

describe('topo --version', () => {
  it.each([['--version'], ['-V'], ['version']])('%s prints the package version and exits 0', async (flag) => {
    const r = await runTopo([flag], repoRoot);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`topo ${pkg.version} (alpasim-topo, github.com/alpasim-topo/alpasim-topo)\n`);
  });

  it('reads owner/name from every form package.json may give', () => {
    for (const form of [
      'https://github.com/o/n',
      'https://github.com/o/n.git',
      { url: 'git+https://github.com/o/n.git' },
      'git@github.com:o/n.git',
      'github:o/n',
      'o/n',
    ])
      expect(repositoryOf(form), JSON.stringify(form)).toBe('o/n');
    expect(repositoryOf('https://gitlab.com/o/n')).toBeUndefined();
  });
});

describe('--json on failure', () => {
  it.each([
    [['validate', '--json', 'no/such.yaml'], 'configuration', 2],
    [['render', '--json', '--no-such-option', 'x.yaml'], 'usage', 2],
    [['analyze', '--json', 'run', '--prometheus', 'http://127.0.0.1:9'], 'unreachable', 3],
  ])('topo %j prints one error document (%s, exit %i)', async (args, kind, code) => {
    const r = await runTopo(args, repoRoot);
    expect(r.code).toBe(code);
    const doc = JSON.parse(r.stdout);
    expect(cliSchemaErrors('error', doc)).toEqual([]);
    expect(doc).toMatchObject({ schema_version: 1, command: args[0], error: { kind, exit_code: code } });
    expect(r.stderr).toContain(doc.error.message.split('\n')[0]);
  });

  it('without --json stdout stays empty', async () => {
    const r = await runTopo(['validate', 'no/such.yaml'], repoRoot);
    expect(r.stdout).toBe('');
  });
});

describe('exit codes of Slurm failures', () => {
  it('slurmctld unreachable is 3, a host-key mismatch a refusal (4), any other Slurm error 1', () => {
    const argv = ['squeue'];
    const down = 'slurm_load_jobs error: Unable to contact slurm controller (connect failure)';
    expect(ControllerUnreachableError.matches(down)).toBe(true);
    expect(classifyError(new ControllerUnreachableError(argv, 1, '', down, 'login-1'))).toMatchObject({
      kind: 'unreachable',
      exit_code: 3,
    });
    expect(classifyError(new HostKeyMismatchError('refusing login-1'))).toMatchObject({
      kind: 'refused',
      exit_code: 4,
    });
    expect(classifyError(new SlurmCommandError(argv, 1, '', 'Invalid account', 'login-1')).exit_code).toBe(1);
  });
});

describe('every --json key is snake_case', () => {
  it('in every schema of schemas/cli', () => {
    const camel: string[] = [];
    const walk = (node: unknown, file: string, at: string) => {
      if (Array.isArray(node)) {
        for (const [i, v] of node.entries()) walk(v, file, `${at}/${i}`);
      } else if (node && typeof node === 'object') {
        for (const [k, v] of Object.entries(node)) {
          if (k === 'properties' || k === 'required') {
            const names = k === 'required' ? (v as string[]) : Object.keys(v as object);
            for (const n of names) if (!/^[a-z0-9_]+$/.test(n)) camel.push(`${file}${at}/${k}: ${n}`);
          }
          walk(v, file, `${at}/${k}`);
        }
      }
    };
    for (const f of readdirSync(CLI_SCHEMA_DIR))
      walk(JSON.parse(readFileSync(join(CLI_SCHEMA_DIR, f), 'utf8')), f, '');
    expect(camel).toEqual([]);
  });

  it('in topo sim steady', async () => {
    const r = await runTopo(['sim', 'steady', '--topology', '1gpu'], repoRoot);
    expect(Object.keys(JSON.parse(r.stdout))).toContain('seconds_per_rollout');
    expect(r.stdout).not.toMatch(/"[a-z]+[A-Z]\w*":/);
  });
});

describe('relative paths resolve against the working directory', () => {
  it('doctor --clusters is read from the cwd, not from --repo-dir', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'topo-cwd-'));
    const repo = mkdtempSync(join(tmpdir(), 'topo-repo-'));
    mkdirSync(join(cwd, 'conf'));
    writeFileSync(
      join(cwd, 'conf/clusters.yaml'),
      readFileSync(join(repoRoot, 'topologies/clusters.yaml'), 'utf8'),
    );
    const r = await runTopo(
      ['doctor', '--repo-dir', repo, '--clusters', 'conf/clusters.yaml', '--cluster', 'nowhere'],
      cwd,
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${join(cwd, 'conf/clusters.yaml')}: no cluster "nowhere"`);
  });
});

describe('terminal text', () => {
  it('never promises comment updates outside a pull request', () => {
    const view = {
      state: 'stabilising',
      comparisons: [],
      observation: { verdict: { state: 'stabilising' } },
    } as unknown as Parameters<typeof nextStep>[0];
    expect(nextStep(view)).not.toMatch(/updated|every 15 min/);
    expect(nextStep({ ...view, commentIntervalMinutes: 15 })).toContain('updated at least every 15 min');
  });
});
