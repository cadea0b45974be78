// Candidate files are found one way by every action and the CLI: .yaml and .yml, under the
// topologies-dir input, never a path that climbs out or a preset, schema or experiment file.
import { describe, expect, it } from 'vitest';
import {
  candidateFilesOf,
  headCandidatesOverDefaultBranch,
  withRunName,
} from '../../../src/usecases/prepare.js';
import { candidateFile } from '../../../src/usecases/record.js';

describe('candidate files', () => {
  const paths = [
    'topologies/e1/a.yaml',
    'topologies/e1/b.yml',
    'topologies/e1/experiment.yaml',
    'topologies/e1/experiment.yml',
    'topologies/presets/8gpu.yaml',
    'topologies/clusters.yaml',
    'topologies/e1/../../etc/x.yaml',
    'topologies/e1/sub/c.yaml',
    'other/e1/d.yaml',
    'README.md',
  ];

  it('are .yaml and .yml files directly in an experiment folder', () => {
    expect(candidateFilesOf(paths)).toEqual(['topologies/e1/a.yaml', 'topologies/e1/b.yml']);
  });

  it('honour the topologies-dir input', () => {
    expect(candidateFilesOf(paths, 'other')).toEqual(['other/e1/d.yaml']);
  });

  it('are read the same way by the record action', () => {
    expect(candidateFile('topologies/e1/b.yml')).toEqual({ folder: 'e1', candidate: 'b' });
    expect(candidateFile('topologies/e1/experiment.yaml')).toBeUndefined();
    expect(candidateFile('other/e1/d.yaml', 'other')).toEqual({ folder: 'e1', candidate: 'd' });
    expect(candidateFile('topologies/e1/../x/y.yaml')).toBeUndefined();
  });
});

describe('what a candidate is checked against', () => {
  it('experiment.yaml, presets and clusters come from the default branch, candidates from the head', async () => {
    const head = { read: async (p: string) => `head:${p}`, list: async () => ['a.yaml', 'experiment.yaml'] };
    const main = { read: async (p: string) => `main:${p}`, list: async () => [] };
    const files = headCandidatesOverDefaultBranch(head, main);
    expect(await files.read('topologies/e1/a.yaml')).toBe('head:topologies/e1/a.yaml');
    expect(await files.read('topologies/e1/experiment.yaml')).toBe('main:topologies/e1/experiment.yaml');
    expect(await files.read('topologies/e1/experiment.yml')).toBe('main:topologies/e1/experiment.yml');
    expect(await files.read('topologies/presets/p.yaml')).toBe('main:topologies/presets/p.yaml');
    expect(await files.read('topologies/clusters.yaml')).toBe('main:topologies/clusters.yaml');
  });
});

describe('a submission under its run name', () => {
  it('renames the job, its output file and wizard.run_name, and writes the Request into the job', () => {
    const base = 'topo-topology-opt-x-local-20260101-a-12345678';
    const run = `${base}-0000aaaa`;
    const s = withRunName(
      {
        jobName: base,
        argv: [
          'sbatch',
          '--parsable',
          `--job-name=${base}`,
          `--output=/r/slurm_output/${base}_%j.log`,
          's.sh',
          `wizard.run_name=${base}`,
        ],
        shellLine: '',
        env: { DESCRIPTION: base },
      },
      run,
    );
    expect(s.jobName).toBe(run);
    expect(s.argv).toEqual([
      'sbatch',
      '--parsable',
      `--job-name=${run}`,
      '--comment=topo:0000aaaa',
      `--output=/r/slurm_output/${run}_%j.log`,
      's.sh',
      `wizard.run_name=${run}`,
    ]);
    expect(s.shellLine).toContain('--comment=topo:0000aaaa');
    expect(s.env).toEqual({ DESCRIPTION: run });
    expect(() => withRunName({ jobName: base, argv: ['sbatch'], shellLine: '' }, run)).toThrow(
      /does not carry its name/,
    );
  });

  it('starts no job that names no Request: a run name without a label is refused (issue 40)', () => {
    const base = 'topo-topology-opt-x-local-20260101-a-12345678';
    const rendered = {
      jobName: base,
      argv: ['sbatch', '--parsable', `--job-name=${base}`, 's.sh', `wizard.run_name=${base}`],
      shellLine: '',
    };
    // the demo's runs and a label-requested run went out under the bare name, with no comment
    expect(() => withRunName(rendered, base)).toThrow(
      /is not .*-<request id>: every job the tool starts names its Request/,
    );
    expect(() => withRunName(rendered, `${base}x`)).toThrow(/names its Request/);
    expect(() => withRunName(rendered, `${base}-0BADC0DE`)).toThrow(/8 hex digits/);
  });

  it("keeps one identity: an sbatch comment before the script gives way to the Request's, the script's own arguments stay", () => {
    const base = 'topo-topology-opt-x-local-20260101-a-12345678';
    const argv = [
      'sbatch',
      '--comment=mine',
      `--job-name=${base}`,
      's.sh',
      '--comment=arg',
      `wizard.run_name=${base}`,
    ];
    const s = withRunName({ jobName: base, argv, shellLine: '' }, `${base}-0000bbbb`);
    expect(s.argv.filter((a) => a.startsWith('--comment='))).toEqual([
      '--comment=topo:0000bbbb',
      '--comment=arg',
    ]);
    expect(() => withRunName({ jobName: base, argv, shellLine: '' }, `${base}-x`)).toThrow(/8 hex digits/);
  });
});
