// Nothing of the action's environment reaches a Slurm command or a job.
import { describe, expect, it } from 'vitest';
import { plainCommandEnvironment, withExportAllowlist } from '../../../src/slurm/environment.js';
import { SBATCH_EXPORT_FLAG } from '../../../src/topology/job-environment.js';

describe('the plain environment of Slurm commands', () => {
  const action = {
    PATH: '/usr/bin',
    HOME: '/home/runner',
    USER: 'runner',
    LANG: 'C.UTF-8',
    SLURM_CONF: '/etc/slurm/x.conf',
    INPUT_TOKEN: 'ghs_secret',
    GITHUB_TOKEN: 'ghs_secret',
    ACTIONS_RUNTIME_TOKEN: 'x',
    RUNNER_TEMP: '/tmp',
    TOPO_SSH_KEY: '-----BEGIN OPENSSH PRIVATE KEY-----',
    TZ: 'America/New_York',
    // A login profile's relative times ("Tomorr 10:00") would read as no time at all.
    SLURM_TIME_FORMAT: 'relative',
    LD_PRELOAD: '/tmp/evil.so',
  };

  it('keeps only the allowlist, sets TZ=UTC and the standard time format', () => {
    expect(plainCommandEnvironment(action)).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/runner',
      USER: 'runner',
      LANG: 'C.UTF-8',
      SLURM_CONF: '/etc/slurm/x.conf',
      TZ: 'UTC',
      SLURM_TIME_FORMAT: 'standard',
    });
  });

  it("adds only submit.sh's variables", () => {
    expect(plainCommandEnvironment({}, { LOGDIR: '/runs/x', DESCRIPTION: 'more' })).toEqual({
      TZ: 'UTC',
      SLURM_TIME_FORMAT: 'standard',
      LOGDIR: '/runs/x',
      DESCRIPTION: 'more',
    });
    expect(() => plainCommandEnvironment({}, { LD_PRELOAD: '/x.so' })).toThrow(/only LOGDIR/);
    expect(() => plainCommandEnvironment({}, { DESCRIPTION: 'a\nb' })).toThrow(/printable/);
  });

  it('sbatch carries exactly the export allowlist', () => {
    expect(withExportAllowlist(['sbatch', '--parsable', 'x.sh'])).toEqual([
      'sbatch',
      SBATCH_EXPORT_FLAG,
      '--parsable',
      'x.sh',
    ]);
    expect(withExportAllowlist(['sbatch', SBATCH_EXPORT_FLAG, 'x.sh'])).toEqual([
      'sbatch',
      SBATCH_EXPORT_FLAG,
      'x.sh',
    ]);
    expect(() => withExportAllowlist(['sbatch', '--export=ALL', 'x.sh'])).toThrow(/refusing/);
    expect(() => withExportAllowlist(['sbatch', '--export', 'ALL', 'x.sh'])).toThrow(/refusing/);
  });
});
